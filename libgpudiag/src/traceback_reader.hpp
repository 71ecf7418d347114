#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "match_sink.hpp"
#include "rule_set_impl.hpp"

namespace gpudiag::detail {

// A Python exception as its traceback shows it: where the traceback began
// (its `Traceback (most recent call last):`, or its first frame when the log
// holds only a piece of it; a chained exception's banner continues it) and
// the frames it passed through, one "path in function" per line, innermost
// last. The exception's type and message are on the line that closes it,
// which the cause rules read.
struct PythonException {
  std::uint64_t start = 0;
  std::uint64_t last = 0;  // its last header, banner or frame line
  std::string_view frames;
  bool in_training_step = false;  // a frame of a training step is among them
  // Where Python reported the exception as ignored (it began at a
  // traceback_start rule's line below error, "Exception ignored in: ..."),
  // that rule's severity; unknown otherwise.
  Severity severity = Severity::unknown;
};

// Groups the lines of Python tracebacks per process (`traceback_start` and
// `frame` rules flag them), so that a cause rule can ask which modules the
// exception it matched passed through, and the resolver can date the
// exception from where its traceback began: the traceback that a line closes
// is the one whose last line lies a few lines above it on its rank.
// A frame rule with phase "training" marks the exception as raised inside a
// training step. It also remembers where each process's last Python warning began (`warning`
// rules), whose message the next line may continue.
class TracebackReader : public MatchSink {
 public:
  explicit TracebackReader(const RuleSet::Impl& rules) : rules_(rules) {}
  void on_hit(const LineHit& hit) override;
  // The roles of the hits it reads (a stream hands it only those).
  static bool reads(Role role) {
    return role == Role::warning || role == Role::traceback_start || role == Role::frame;
  }
  // The exception a line at `line` on `rank` closes or lies inside; none
  // when no traceback of that process is open there.
  std::optional<PythonException> exception_at(std::uint64_t line, std::optional<int> rank) const;
  // Whether a Python warning began on the line just before `line` on `rank`.
  bool continues_warning(std::uint64_t line, std::optional<int> rank) const;

 private:
  struct Open {
    std::uint64_t start = 0;
    std::string frames;
    std::uint64_t last_line = 0;  // its last header, banner or frame
    bool in_training_step = false;
    Severity severity = Severity::unknown;  // as PythonException's
  };
  // `fresh`: the line begins a traceback of its own, however close it
  // follows the last one.
  Open& extend(std::optional<int> rank, std::uint64_t line, bool fresh = false);
  // The rank a launcher's tag gives the hit's line. Its place is kept per
  // layout (the line model is blind to digits): a warning printed by every
  // rank at every step is not read through the model each time.
  std::optional<int> launcher_rank(const LineHit& hit);
  struct RankPlace {
    std::uint64_t layout = 0;
    bool has = false;
    std::uint32_t at = 0, size = 0;
  };
  std::array<RankPlace, 64> rank_places_{};

  const RuleSet::Impl& rules_;
  std::map<int, Open> by_rank_;  // -1: untagged lines
  std::map<int, std::uint64_t> warning_line_;  // per rank: where its last warning began
};

}  // namespace gpudiag::detail
