#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "counter_reader.hpp"
#include "evidence_collector.hpp"
#include "gpudiag/diagnosis.hpp"
#include "rule_set_impl.hpp"
#include "trajectory_builder.hpp"

namespace gpudiag::detail {

// The optimisation steps a run's plan allows: stated (`max_steps`, HF's
// 'Total optimization steps'), or the training set's size over the batch of
// one step, times the epochs.
struct StepBudget {
  double steps = 0;
  std::optional<double> samples, batch, accumulation, epochs;  // set when derived from them
  // Or the batches of one epoch as its progress bar counts them, times the
  // planned epochs, and the bar's line.
  std::optional<double> bar_batches;
  std::uint64_t bar_line = 0;
  // The plan lines it was read from, in the order above.
  struct Source {
    unsigned rule;
    const RecordedHit* hit;  // into the scan's per-rule evidence
  };
  std::vector<Source> sources;
};

// A loss that ended at ln k for a k that a plan line states (the vocabulary,
// the labels): a uniform guess over the k outputs.
struct LossAtChance {
  double classes = 0;
  double late = 0;              // the median of the last quarter of the readings
  std::size_t readings = 0;     // how many that is
  StepBudget::Source stated;  // the plan line that states k
};

// What the progress, completion and resume markers and the loss trajectory
// say about the training itself, whatever ended the run.
struct TrainingState {
  // Completed: a completion line (a framework's end of fit, a scheduler's
  // success record), progress that reached the run's planned length, or an
  // exit status of 0 after training progressed.
  bool completed = false;
  std::uint64_t completion_line = 0;  // the last completion line, or the last reading
  bool resume_requested = false, resume_loaded = false;
  int resume_request_rule = -1;
  // The step the requested checkpoint's name carries (`checkpoint-500`).
  std::optional<double> requested_step;
  // What the first reading's step says of a resume, read whether or not one
  // was requested (a failed checkpoint load can ask too): it went on from a
  // checkpoint (continued), or started again near zero.
  bool counters_continue = false, counters_restart = false;
  // A checkpoint counter that went back to near zero: the run started over.
  std::optional<CounterReset> counter_reset;
  std::optional<double> steps;  // the optimisation steps the run reports
  bool steps_are_batches = false;  // counted by epoch progress bars, not reported
  std::optional<StepBudget> budget;
  // The k of a last evaluation loss at ln k, a uniform guess over k classes.
  std::optional<int> evaluation_at_chance;
  std::optional<LossAtChance> loss_at_chance;
  // The training problem the loss or the step count shows (an outcome that a
  // class of the taxonomy carries), or none.
  Outcome problem = Outcome::none;
};

TrainingState read_training(const RuleSet::Impl& rules, const EvidenceTable& per_rule,
                            const Trajectory& trajectory,
                            const std::optional<CounterReset>& counter_reset,
                            const std::optional<EpochBars>& bars, const std::optional<StatedCount>& last_count,
                            std::optional<int> exit_code);

// The steps a completed run took: those it reports, else its budget.
std::optional<double> steps_or_budget(const TrainingState& s);

// Whether the loss ended below where it began: the median of the last
// quarter of the kept readings under the first reading.
bool fell_below_first(const Trajectory& t);

// Loss readings of the followed rank after `line` (in the kept series).
std::size_t readings_after(const Trajectory& t, std::uint64_t line);

}  // namespace gpudiag::detail
