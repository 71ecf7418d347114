#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "evidence_collector.hpp"
#include "gpudiag/diagnosis.hpp"
#include "rule_set_impl.hpp"

namespace gpudiag::detail {

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
  std::optional<double> steps;  // the optimisation steps the run reports
  // The training problem the loss or the step count shows (an outcome that a
  // class of the taxonomy carries), or none.
  Outcome problem = Outcome::none;
};

TrainingState read_training(const RuleSet::Impl& rules, const std::vector<RuleEvidence>& per_rule,
                            const Trajectory& trajectory, std::optional<int> exit_code);

// Loss readings of the followed rank after `line` (in the kept series).
std::size_t readings_after(const Trajectory& t, std::uint64_t line);

}  // namespace gpudiag::detail
