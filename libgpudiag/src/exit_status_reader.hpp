#pragma once

#include <string>
#include <vector>

#include "evidence_collector.hpp"
#include "match_sink.hpp"
#include "rule_set_impl.hpp"

namespace gpudiag::detail {

// A class an exit status in the log points to, through the cards'
// exit_signals: the evidence of every line that reported such an exit.
struct ExitStatusEvidence {
  unsigned rule = 0;   // the exit_status rule that matched
  std::string cls;     // the class whose card claims the signal
  int signal = 0;      // of the first line
  RuleEvidence evidence;
};

// Reads the lines that exit_status rules flag (torchelastic's `exitcode: -6`,
// `Signal 9 (SIGKILL) received`, ...): each line's exit code or signal is
// mapped to a class by the same map as the job's own exit status.
class ExitStatusReader : public MatchSink {
 public:
  explicit ExitStatusReader(const RuleSet::Impl& rules);
  void on_hit(const LineHit& hit) override;
  // The role of the hits it reads (a stream hands it only those).
  static bool reads(Role role) { return role == Role::exit_status; }
  const std::vector<ExitStatusEvidence>& reports() const { return reports_; }

 private:
  const RuleSet::Impl& rules_;
  std::vector<ExitStatusEvidence> reports_;  // one per (rule, class), in order of first line
};

// The signal a rule's extracted values name: "signal" (a number or a name)
// or "exit_code" read as an exit status.
std::optional<int> signal_from_values(const std::map<std::string, std::string>& values);

}  // namespace gpudiag::detail
