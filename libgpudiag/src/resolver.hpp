#pragma once

#include <optional>

#include "counter_reader.hpp"
#include "evidence_collector.hpp"
#include "exit_status_reader.hpp"
#include "gpudiag/diagnosis.hpp"
#include "rule_set_impl.hpp"
#include "trajectory_builder.hpp"

namespace gpudiag::detail {

struct ScanResult {
  const EvidenceTable& per_rule;
  const EvidenceTable& logged;  // cause lines below their rule's severity
  const std::vector<ExitStatusEvidence>& exits;
  Trajectory trajectory;
  std::optional<LauncherReport> launcher;
  std::optional<CounterReset> counter_reset;
  std::optional<StepTimeChange> step_time_change;
  std::optional<EpochBars> epoch_bars;
  std::optional<StatedCount> last_count;  // the counters of the last reading's segment
  std::optional<int> exit_code;
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
};

// Ordered rules + context -> one primary class, its evidence and findings:
// reads the training state, selects the cause, weighs the confidence and
// hands the structures to the wording unit.
Diagnosis resolve(const RuleSet::Impl& rules, const ScanResult& scan);

}  // namespace gpudiag::detail
