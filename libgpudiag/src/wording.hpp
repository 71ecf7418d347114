#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpudiag/diagnosis.hpp"
#include "gpudiag/taxonomy.hpp"
#include "training.hpp"
#include "trajectory_builder.hpp"

namespace gpudiag::detail {

// Every sentence gpudiag writes is built here, from the structures the
// resolver fills: the resolver decides, this unit words.

// How the exit status relates to the class chosen.
// How the exit status stands against the log: it agrees, the log's evidence
// outweighs it, it decides alone, it decides after a log that shows training
// completed, or nothing explains it.
enum class ExitReading { none, agrees, disagrees, alone, after_completion, unexplained };

// A straggler report's numbers: the fastest and the slowest rank's step time.
struct StragglerFacts {
  double fastest = 0, slowest = 0;
  std::string fastest_text, slowest_text;  // as the report prints them, with their unit
  int fastest_rank = 0, slowest_rank = 0;
  std::uint64_t reports = 0;
};

// What a finding's message needs beyond the finding's own fields.
struct FindingFacts {
  Finding finding;                   // its fields; word_finding sets its message
  std::uint64_t more_lines = 0;      // cascade: further lines of the same rule
  std::optional<Evidence> root;      // cascade: the root cause's first evidence
  std::uint64_t completion_line = 0; // recovered, after_completion, exit_code completed_before_exit
  std::optional<LossReading> last_reading;  // after_completion
  std::size_t readings_after = 0;    // recovered by training on
  std::optional<int> first_rank;     // also_matched by time
  std::string root_rule;             // also_matched by rule order
  std::uint64_t root_line = 0;       // also_matched by time
  std::optional<int> exit_code;      // exit_code
  std::string description;           // context, throughput: the rule's own description
  std::uint64_t saves = 0, last_line = 0;  // throughput save_storm: saves up to last_line
  double steps = 0;                        // over so many optimisation steps
  std::optional<StepTimeChange> step_time;  // throughput step_time_rising, throughput_collapse
  std::optional<StragglerFacts> straggler;  // throughput from a straggler report
  TrajectoryShape shape = TrajectoryShape::none;  // trajectory
};
void word_finding(FindingFacts& facts);

// Something the log shows beyond its quoted lines.
enum class NoteKind {
  first_failure_on,      // evidence: the root cause's first line
  training_reached,      // reading: the last loss before the cause; cause_line; stall
  loss_non_finite,       // trajectory
  grad_non_finite,       // trajectory
  loss_diverged,         // trajectory
  loss_plateau,          // trajectory
  loss_no_decrease,      // trajectory
  no_checkpoint_loaded,
  restarts_at,           // reading: the first reading
  resumed_at,            // evidence: the resume request; reading: the first reading, which went on
  counter_restarted,     // evidence: the highest step's line; steps -> to_steps at cause_line
  completed_after_steps, // steps; batches: counted by epoch progress bars
  step_budget,           // budget, lines: the plan lines it was read from
  evaluation_at_chance,  // reading: the last evaluation loss; classes: its k
  loss_at_chance,        // chance: the late loss at ln k, k as a plan line states it
  loss_fell,             // trajectory
  steps_advanced,        // steps
  launcher_summary,      // launcher, evidence: the root cause's first line when on another rank
};
struct Note {
  explicit Note(NoteKind k) : kind(k) {}
  NoteKind kind;
  std::optional<Evidence> evidence;
  std::optional<LossReading> reading;
  std::uint64_t cause_line = 0;
  bool stall = false;  // say whether the run was still moving
  double steps = 0, to_steps = 0;
  bool batches = false;
  int classes = 0;  // k of a loss at ln k
  const Trajectory* trajectory = nullptr;
  const LauncherReport* launcher = nullptr;
  const StepBudget* budget = nullptr;
  const LossAtChance* chance = nullptr;
  std::vector<std::uint64_t> lines;
};

struct VerdictFacts {
  const ClassInfo& info;
  std::size_t rule_count = 0;
  ExitReading exit_reading = ExitReading::none;
  std::vector<Note> notes;
};

// shows / implies / cannot_decide for a resolved diagnosis, quoting its evidence.
Verdict build_verdict(const Diagnosis& d, const VerdictFacts& facts);

}  // namespace gpudiag::detail
