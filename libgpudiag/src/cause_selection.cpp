#include "cause_selection.hpp"

#include <algorithm>
#include <set>

#include "line_fields.hpp"

namespace gpudiag::detail {
namespace {

std::uint64_t last_line(const RuleEvidence& e) { return e.count > 1 ? e.last.line : e.first.line; }

// When a cause's first line happened: where its event (the traceback it
// closes) began.
std::uint64_t began(const Candidate& c) {
  const RecordedHit& h = c.evidence->first;
  return h.event != 0 ? h.event : h.line;
}

std::vector<Candidate> gather(const RuleSet::Impl& rules, const EvidenceTable& per_rule,
                              const std::vector<ExitStatusEvidence>& exits) {
  std::vector<Candidate> out;
  auto add = [&](unsigned rule, const ClassInfo* info, const RuleEvidence& ev, bool cascade,
                 bool reaped = false) {
    Candidate c;
    c.rule = rule;
    c.info = info;
    c.evidence = &ev;
    c.cascade = cascade;
    c.tier = reaped ? kTierReaped : cascade ? 1 : info->tier == Tier::wrapper ? 2 : 0;
    c.rank = read_line(ev.first.text).rank;
    out.push_back(c);
  };
  for (unsigned i = 0; i < rules.rules.size(); ++i) {
    const Rule& r = rules.rules[i];
    if (r.role == Role::cause && per_rule[i].count > 0)
      add(i, rules.taxonomy.find(r.cls), per_rule[i], r.cascade);
    else if (r.role == Role::exit_status)
      for (const auto& x : exits)
        if (x.rule == i) {
          const ClassInfo* info = rules.taxonomy.find(x.cls);
          add(i, info, x.evidence, info->signal_exit_cascade, info->signal_exit_stop);
        }
  }
  return out;
}

// Whether the run went on after the cause: it completed cleanly after the
// cause's last line, or the same process (its rank; the whole job for an
// untagged line) reported more losses. A cause the last progress line itself
// shows (a loss scale collapsed to nothing, printed beside the loss) lasted
// to the end of training: the run did not go on after it, whatever followed. A few readings can be output buffered
// before a crash and flushed after it, a whole buffer of them when stdout goes
// to a file; a class a process is known to survive (an allocation failure
// caught and retried) needs fewer.
void mark_survival(Candidate& c, const Trajectory& t, const TrainingState& training,
                   bool clean_exit) {
  constexpr std::size_t kReadingsAfterSurvivable = 3;
  constexpr std::size_t kReadingsAfterAny = 20;
  const std::uint64_t last = last_line(*c.evidence);
  if (t.last && last == t.last->line) return;
  // A loss that went non-finite or diverged is the training's own state: the
  // run finishing after it (a NaN evaluation before the final save, a
  // divergence stop before the end of fit) does not outlive it; only losses
  // read after it do.
  const bool loss_state = c.info->outcome == Outcome::non_finite_loss || c.info->outcome == Outcome::diverging_loss;
  if (training.completed && clean_exit && last < training.completion_line && !loss_state) {
    c.standing = Standing::completed_after;
    return;
  }
  const RecordedHit& hit = c.evidence->count > 1 ? c.evidence->last : c.evidence->first;
  c.readings_after = readings_after(t, last);
  const std::optional<int> rank = read_line(hit.text).rank;
  const std::size_t needed = c.info->survivable ? kReadingsAfterSurvivable : kReadingsAfterAny;
  if ((!rank || rank == t.rank) && c.readings_after >= needed) c.standing = Standing::trained_after;
}

// A failure on the way out ends a process but not the training: one after
// the completion line, or after the last loss reading of a run that then
// completed (another rank's exit). Where the trajectory or the step count
// shows what went wrong with the training, that decides instead.
void mark_after_completion(Candidate& c, const Trajectory& t, const TrainingState& training) {
  const std::uint64_t first = c.evidence->first.line;
  if (training.completed && training.problem != Outcome::none &&
      (first > training.completion_line || (t.last && first > t.last->line)))
    c.standing = Standing::after_completion;
}

bool open(const Candidate& c) {
  return c.standing != Standing::completed_after && c.standing != Standing::trained_after &&
         c.standing != Standing::after_completion;
}

// The rank whose failure the log shows first, when specific causes sit on
// several ranks. The launcher's "first observed failure" is not used: it
// orders exits, not failures. A cause on no rank is never set aside.
std::optional<int> first_failing_rank(const std::vector<Candidate>& cs) {
  std::set<int> ranks;
  std::optional<int> first;
  std::uint64_t earliest = 0;
  for (const auto& c : cs) {
    if (!open(c) || c.tier != 0 || !c.rank) continue;
    ranks.insert(*c.rank);
    if (!first || began(c) < earliest) {
      first = c.rank;
      earliest = began(c);
    }
  }
  return ranks.size() < 2 ? std::nullopt : first;
}

// The job's first failure event: the earliest-beginning open specific cause,
// with the causes of the same process that belong to the same traceback or
// begin within a few lines after it (`terminate called` and its `what():`,
// a launcher's block). Between events time decides; inside one, rule order.
std::vector<std::size_t> first_event(const std::vector<Candidate>& cs) {
  constexpr std::uint64_t kEventSpan = 40;
  std::optional<std::size_t> first;
  for (std::size_t i = 0; i < cs.size(); ++i)
    if (open(cs[i]) && cs[i].tier == 0 && (!first || began(cs[i]) < began(cs[*first])))
      first = i;
  std::vector<std::size_t> event;
  if (!first) return event;
  const Candidate& anchor = cs[*first];
  const std::uint64_t start = began(anchor);
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const Candidate& c = cs[i];
    const std::uint64_t at = began(c);
    const bool same_process = c.rank == anchor.rank;  // untagged lines: the whole job
    if (open(c) && c.tier == 0 && at >= start && at - start <= kEventSpan && same_process)
      event.push_back(i);
  }
  return event;
}

}  // namespace

Selection select_cause(const RuleSet::Impl& rules, const EvidenceTable& per_rule,
                       const std::vector<ExitStatusEvidence>& exits, const Trajectory& trajectory,
                       const TrainingState& training, bool clean_exit) {
  Selection s;
  s.candidates = gather(rules, per_rule, exits);
  for (auto& c : s.candidates) {
    mark_survival(c, trajectory, training, clean_exit);
    if (open(c)) mark_after_completion(c, trajectory, training);
  }
  s.first_rank = first_failing_rank(s.candidates);
  auto later_rank = [&](const Candidate& c) {
    return s.first_rank && c.rank && *c.rank != *s.first_rank;
  };
  // The first failure event decides among specific causes; cascades, wrappers
  // and reaped workers only when no specific cause is open.
  const std::vector<std::size_t> event = first_event(s.candidates);
  if (!event.empty()) s.root = static_cast<int>(event.front());
  auto in_event = [&](std::size_t i) {
    return std::find(event.begin(), event.end(), i) != event.end();
  };
  for (int tier = 0; tier <= kTierReaped && s.root < 0; ++tier)
    for (std::size_t i = 0; i < s.candidates.size(); ++i) {
      const Candidate& c = s.candidates[i];
      if (open(c) && c.tier == tier && !(tier == 0 && later_rank(c))) {
        s.root = static_cast<int>(i);
        break;
      }
    }
  if (s.root < 0) return s;
  const Candidate& root = s.candidates[s.root];
  for (std::size_t i = 0; i < s.candidates.size(); ++i) {
    Candidate& c = s.candidates[i];
    if (static_cast<int>(i) == s.root) c.standing = Standing::root_cause;
    else if (!open(c)) continue;
    else if (c.info == root.info) c.standing = Standing::supports;
    else if (c.cascade && !root.cascade) c.standing = Standing::cascade_of_root;
    else if (c.tier >= 2) c.standing = Standing::wrapped;
    else if (c.tier == 0 && !in_event(i))
      c.standing = later_rank(c) ? Standing::earlier_rank : Standing::earlier_event;
    else c.standing = Standing::rule_order;
  }
  return s;
}

}  // namespace gpudiag::detail
