#pragma once

#include <optional>
#include <vector>

#include "evidence_collector.hpp"
#include "exit_status_reader.hpp"
#include "rule_set_impl.hpp"
#include "training.hpp"

namespace gpudiag::detail {

// Where a matched cause stands once the root cause is chosen.
enum class Standing {
  root_cause,          // the primary cause
  supports,            // same class as the root cause: more evidence of it
  cascade_of_root,     // a consequence (cascade rule) of the root cause
  completed_after,     // survived: the run completed cleanly after its last line
  trained_after,       // survived: its rank went on reporting losses
  after_completion,    // a failure on the way out, after training had ended
  earlier_rank,        // set aside: another rank's failure comes earlier
  earlier_event,       // set aside: a failure earlier in the log decided
  rule_order,          // set aside: an earlier rule of its tier decided
  wrapped,             // a generic wrapper of the cause that decided
};

// A launcher's report of a worker it terminated itself after another failed.
inline constexpr int kTierReaped = 3;

// One matched cause: a cause rule, or a class an exit_status line points to.
struct Candidate {
  unsigned rule = 0;
  const ClassInfo* info = nullptr;
  const RuleEvidence* evidence = nullptr;
  bool cascade = false;
  int tier = 0;                // 0 specific, 1 cascade, 2 wrapper, kTierReaped
  std::optional<int> rank;     // of its first line
  std::size_t readings_after = 0;  // for trained_after
  Standing standing = Standing::rule_order;
};

struct Selection {
  std::vector<Candidate> candidates;  // in rule order
  int root = -1;                      // index of the root cause, or -1
  std::optional<int> first_rank;      // when causes on several ranks were ordered by time
};

// Root cause over cascade: a specific cause outranks what it sets off on
// other ranks (cascade), and both outrank a generic wrapper; between specific
// causes the earliest failure event in the log decides (one process's lines
// within a few lines of each other are one event), and inside an event rule
// order. A cause the run survived, or that came after training had ended a
// run with a training problem, does not decide.
Selection select_cause(const RuleSet::Impl& rules, const EvidenceTable& per_rule,
                       const std::vector<ExitStatusEvidence>& exits, const Trajectory& trajectory,
                       const TrainingState& training, bool clean_exit);

}  // namespace gpudiag::detail
