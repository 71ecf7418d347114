#pragma once

#include <cstdint>
#include <string_view>

namespace gpudiag::detail {

// A line that a rule matched, as the scanner sees it. `text` and `full`
// point into the piece being scanned (or, at the end of the data, the
// scanner's last line): valid until that scan (or finish) returns.
struct LineHit {
  unsigned rule;
  std::uint64_t line;    // 1-based
  std::uint64_t offset;  // byte offset of the line's first byte
  std::string_view text; // raw bytes, line ending removed, possibly an excerpt
  bool truncated;        // text is an excerpt of a longer line
  // The whole line as far as it lies in the scanned piece (no cap): for
  // sinks that read values out of long lines, such as progress bars.
  std::string_view full;
  // Names the line's layout (its bytes with every digit read as 0) where the
  // scanner knows it: the same number for every line of that layout in this
  // process, and for no other; 0 where it does not know it.
  std::uint64_t layout = 0;
};

// Receives each (rule, line) pair once. The scanner knows nothing of what is
// done with hits; the sink knows nothing of how they were found.
class MatchSink {
 public:
  virtual ~MatchSink() = default;
  virtual void on_hit(const LineHit& hit) = 0;
};

}  // namespace gpudiag::detail
