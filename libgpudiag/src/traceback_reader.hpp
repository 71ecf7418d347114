#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "match_sink.hpp"
#include "rule_set_impl.hpp"

namespace gpudiag::detail {

// Groups the frame lines of Python tracebacks (`File "path", line N, in f`,
// which `frame` rules flag) per process, so that a cause rule can ask which
// modules the exception it matched passed through: the traceback that a line
// closes is the run of frames that ends a few lines above it on its rank.
// It also remembers where each process's last Python warning began (`warning`
// rules), whose message the next line may continue.
class TracebackReader : public MatchSink {
 public:
  explicit TracebackReader(const RuleSet::Impl& rules, MatchSink* next = nullptr)
      : rules_(rules), next_(next) {}
  void on_hit(const LineHit& hit) override;
  // "path in function" per line, for the traceback a line at `line` on `rank`
  // closes; empty when no traceback ends just above it.
  std::string_view frames_closed_by(std::uint64_t line, std::optional<int> rank) const;
  // Whether a Python warning began on the line just before `line` on `rank`.
  bool continues_warning(std::uint64_t line, std::optional<int> rank) const;

 private:
  struct Open {
    std::string frames;
    std::uint64_t last_line = 0;
  };
  const RuleSet::Impl& rules_;
  MatchSink* next_;
  std::map<int, Open> by_rank_;  // -1: untagged lines
  std::map<int, std::uint64_t> warning_line_;  // per rank: where its last warning began
};

}  // namespace gpudiag::detail
