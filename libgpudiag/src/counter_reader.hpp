#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "evidence_collector.hpp"
#include "match_sink.hpp"
#include "rule_set_impl.hpp"

namespace gpudiag::detail {

// A global step counter that went back to near zero in one place: a run
// started over where an earlier one had got far, as the names of the
// checkpoints it saves show (`epoch=27-step=308.ckpt` after
// `epoch=5460-step=60071.ckpt`).
struct CounterReset {
  unsigned rule = 0;          // the checkpoint_name rule of the later line
  double from = 0, to = 0;    // the highest step before, and the step after
  RecordedHit highest, after; // the lines that show them
};

// Reads the lines that checkpoint_name rules flag: each extracts the
// checkpoint's "step" and, where the line names it, the "place" (directory)
// it is saved in. Keeps the highest step per place and rank and the first
// reset.
class CounterReader : public MatchSink {
 public:
  explicit CounterReader(const RuleSet::Impl& rules) : rules_(rules) {}
  void on_hit(const LineHit& hit) override;
  // The role of the hits it reads (a stream hands it only those).
  static bool reads(Role role) { return role == Role::checkpoint_name; }
  const std::optional<CounterReset>& reset() const { return reset_; }

 private:
  struct Highest {
    double step = 0;
    RecordedHit hit;
  };
  const RuleSet::Impl& rules_;
  std::map<std::tuple<std::optional<int>, unsigned, std::string>, Highest> highest_;
  std::optional<CounterReset> reset_;
};

}  // namespace gpudiag::detail
