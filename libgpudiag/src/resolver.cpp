#include "resolver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "cause_selection.hpp"
#include "signals.hpp"
#include "training.hpp"
#include "wording.hpp"

namespace gpudiag::detail {
namespace {

// Each independent signal that agrees halves the remaining doubt; a matched
// log line weighs twice an exit code.
double confidence_from(int units) {
  if (units <= 0) return 0.0;
  return std::min(0.99, 1.0 - std::pow(0.5, units));
}

// Two rules matching one line are one signal, not two.
class Weights {
 public:
  void line(const Evidence& ev, int weight) {
    if (lines_.insert(ev.line).second) units_ += weight;
  }
  void add(int units) { units_ += units; }
  int units() const { return units_; }

 private:
  std::set<std::uint64_t> lines_;
  int units_ = 0;
};

struct Resolver {
  Resolver(const RuleSet::Impl& r, const ScanResult& s) : rules(r), scan(s) {}
  const RuleSet::Impl& rules;
  const ScanResult& scan;
  const Taxonomy& taxonomy = rules.taxonomy;
  Diagnosis d;
  TrainingState training;
  Selection selection;
  Weights weights;
  ExitReading exit_reading = ExitReading::none;
  std::vector<Note> notes;
  std::vector<FindingFacts> findings;
  const ClassInfo* info = nullptr;
  int resume_failed = -1;  // the candidate whose failed load the run went on after

  Evidence evidence_of(const Candidate& c, bool last = false) const {
    const RuleEvidence& e = *c.evidence;
    Evidence ev = make_evidence(rules, c.rule, e, last && e.count > 1 ? e.last : e.first);
    ev.cls = c.info->id;  // an exit_status rule's class is the signal's
    return ev;
  }

  Evidence marker_evidence(unsigned rule, bool last) const {
    const RuleEvidence& e = scan.per_rule[rule];
    return make_evidence(rules, rule, e, last && e.count > 1 ? e.last : e.first);
  }

  FindingFacts& finding(std::string kind, const std::string& cls, std::string reason,
                        std::optional<Evidence> ev) {
    FindingFacts x;
    x.finding.kind = std::move(kind);
    x.finding.cls = cls;
    x.finding.reason = std::move(reason);
    if (ev) {
      x.finding.rule = ev->rule;
      x.finding.line = ev->line;
      x.finding.rank = ev->rank;
    }
    x.finding.evidence = std::move(ev);
    findings.push_back(std::move(x));
    return findings.back();
  }

  void set_aside_findings() {
    for (const auto& c : selection.candidates) {
      if (c.standing == Standing::after_completion) {
        auto& x = finding("after_completion", c.info->id, "", evidence_of(c));
        x.completion_line = training.completion_line;
        x.last_reading = d.trajectory.last;
        x.finding.reason = *x.finding.line > training.completion_line ? "after_completion_line"
                                                                      : "after_last_reading";
      }
    }
    for (std::size_t i = 0; i < selection.candidates.size(); ++i) {
      const Candidate& c = selection.candidates[i];
      if (c.standing != Standing::completed_after && c.standing != Standing::trained_after) continue;
      if (static_cast<int>(i) == resume_failed) continue;  // evidence of the restart instead
      auto& x = finding("recovered", c.info->id,
                        c.standing == Standing::completed_after ? "completed_after" : "trained_after",
                        evidence_of(c, true));
      x.completion_line = training.completion_line;
      x.readings_after = c.readings_after;
    }
  }

  void cause_findings(const Candidate& root) {
    const Evidence root_ev = evidence_of(root);
    for (const auto& c : selection.candidates) {
      switch (c.standing) {
        case Standing::root_cause:
        case Standing::supports:
          d.evidence.push_back(evidence_of(c));
          weights.line(d.evidence.back(), 2);
          if (d.evidence.back().count > 1) weights.add(1);  // more lines agree
          break;
        case Standing::cascade_of_root: {
          auto& x = finding("cascade", c.info->id, "cascade_of_root", evidence_of(c));
          x.more_lines = c.evidence->count - 1;
          x.root = root_ev;
          break;
        }
        case Standing::earlier_rank:
        case Standing::earlier_event:
        case Standing::rule_order: {
          auto& x = finding("also_matched", c.info->id,
                            c.standing == Standing::earlier_rank    ? "earlier_rank"
                            : c.standing == Standing::earlier_event ? "earlier_event"
                                                                    : "rule_order",
                            evidence_of(c));
          x.root_line = root_ev.line;
          x.first_rank = selection.first_rank;
          x.root_rule = rules.rules[root.rule].id;
          break;
        }
        default: break;
      }
    }
  }

  // The job's exit status against the class the log decided.
  void weigh_exit_status(const ClassInfo* exit_class) {
    // A status of 0 under a failure the log prints (not a stop from outside,
    // which a job may handle and exit 0 from): the two disagree, and both
    // stay in the verdict.
    if (!exit_class && scan.exit_code == 0 && !info->stop && info->outcome != Outcome::completed) {
      auto& x = finding("exit_code", "", "exit_code_disagrees", std::nullopt);
      x.exit_code = scan.exit_code;
      exit_reading = ExitReading::disagrees;
      return;
    }
    if (!exit_class) return;
    if (exit_class == info) {
      weights.add(1);
      exit_reading = ExitReading::agrees;
      return;
    }
    auto& x = finding("exit_code", exit_class->id, "exit_code_disagrees", std::nullopt);
    x.exit_code = scan.exit_code;
    exit_reading = ExitReading::disagrees;
  }

  // The exit status decided, but the log shows training completed: a kill
  // leaves no line, so it came after the log's last one (on the way out:
  // saving, teardown), or the status is of a later step. The completion
  // stays in the verdict as a finding.
  void completed_before_exit() {
    const ClassInfo* completed = taxonomy.for_outcome(Outcome::completed);
    if (!training.completed || !completed) return;
    for (unsigned i = 0; i < rules.rules.size(); ++i) {
      if (rules.rules[i].role != Role::completion || scan.per_rule[i].count == 0) continue;
      auto& x = finding("exit_code", completed->id, "completed_before_exit", marker_evidence(i, true));
      x.exit_code = scan.exit_code;
      x.completion_line = x.finding.line.value_or(0);
      exit_reading = ExitReading::after_completion;
      return;
    }
  }

  void progress_before_cause() {
    const Trajectory& t = d.trajectory;
    if (!t.last || d.evidence.empty()) return;
    const Evidence& cause = d.evidence.front();
    if (t.last->line >= cause.line) return;
    Note n{NoteKind::training_reached};
    n.reading = t.last;
    n.cause_line = cause.line;
    n.stall = info->stall;
    notes.push_back(n);
  }

  void from_cause(const Candidate& root, const ClassInfo* exit_class) {
    info = root.info;
    d.g15 = rules.rules[root.rule].cls.empty() ? info->g15 : rules.rules[root.rule].g15;
    cause_findings(root);
    if (!d.evidence.empty() && d.evidence.front().rank && !root.cascade) {
      Note n{NoteKind::first_failure_on};
      n.evidence = d.evidence.front();
      notes.push_back(n);
    }
    weigh_exit_status(exit_class);
    progress_before_cause();
    const Outcome problem = training.problem;
    if ((problem == Outcome::non_finite_loss || problem == Outcome::diverging_loss) &&
        taxonomy.for_outcome(problem) != info) {  // else the evidence already says so
      auto& x = finding("trajectory", taxonomy.for_outcome(problem)->id,
                        "loss_" + std::string(to_string(d.trajectory.shape)), std::nullopt);
      x.shape = d.trajectory.shape;
    }
  }

  void add_markers(bool with_progress) {
    for (unsigned i = 0; i < rules.rules.size(); ++i) {
      if (scan.per_rule[i].count == 0) continue;
      const Role role = rules.rules[i].role;
      const bool progress = role == Role::progress;
      if (role == Role::completion || (with_progress && progress)) {
        d.evidence.push_back(marker_evidence(i, !progress));
        weights.line(d.evidence.back(), progress ? 1 : 2);
      }
    }
  }

  // The steps the run took, or the budget its plan lines allow and the lines
  // that state it, and an evaluation loss still at chance.
  void too_few_steps_evidence() {
    add_markers(true);
    if (training.steps) {
      Note n{NoteKind::completed_after_steps};
      n.steps = *training.steps;
      n.batches = training.steps_are_batches;
      notes.push_back(n);
    } else {
      Note n{NoteKind::step_budget};
      n.budget = &*training.budget;
      for (const StepBudget::Source& at : training.budget->sources) {
        d.evidence.push_back(make_evidence(rules, at.rule, scan.per_rule[at.rule], *at.hit));
        weights.line(d.evidence.back(), 1);
        n.lines.push_back(d.evidence.back().line);
      }
      if (training.budget->bar_line) n.lines.push_back(training.budget->bar_line);
      notes.push_back(n);
    }
    if (training.evaluation_at_chance) {
      Note n{NoteKind::evaluation_at_chance};
      const Reading& last = *d.trajectory.evaluation.last;
      n.reading = LossReading{last.step, last.value, last.line, last.step_reported};
      n.classes = *training.evaluation_at_chance;
      notes.push_back(n);
      weights.add(1);
    }
    if (scan.exit_code) weights.add(1);
  }

  // No line names a cause: training correctness decides, from the trajectory
  // and the markers.
  void from_training(bool clean_exit, bool failed_after_completion) {
    const Trajectory& t = d.trajectory;
    Outcome outcome = training.problem;
    if (outcome == Outcome::too_few_steps && !(clean_exit || failed_after_completion))
      outcome = Outcome::none;
    if (outcome == Outcome::none)
      outcome = training.completed && clean_exit ? Outcome::completed : Outcome::undetermined;
    info = taxonomy.for_outcome(outcome);
    if (!info) info = taxonomy.for_outcome(outcome = Outcome::undetermined);
    Note loss{NoteKind::loss_fell};
    loss.trajectory = &t;
    switch (outcome) {
      case Outcome::non_finite_loss:
        loss.kind = t.first_non_finite ? NoteKind::loss_non_finite : NoteKind::grad_non_finite;
        notes.push_back(loss);
        weights.add(2);
        add_markers(true);
        break;
      case Outcome::diverging_loss:
        loss.kind = t.shape == TrajectoryShape::diverged  ? NoteKind::loss_diverged
                    : t.shape == TrajectoryShape::plateau ? NoteKind::loss_plateau
                                                          : NoteKind::loss_no_decrease;
        notes.push_back(loss);
        if (const auto& chance = training.loss_at_chance) {
          Note n{NoteKind::loss_at_chance};
          n.chance = &*chance;
          d.evidence.push_back(make_evidence(rules, chance->stated.rule, scan.per_rule[chance->stated.rule],
                                             *chance->stated.hit));
          weights.line(d.evidence.back(), 1);
          n.lines = {d.evidence.back().line};
          notes.push_back(n);
        }
        weights.add(t.readings >= 8 ? 3 : 2);
        add_markers(true);
        break;
      case Outcome::resume_without_load:
        resume_evidence();
        break;
      case Outcome::too_few_steps:
        too_few_steps_evidence();
        break;
      case Outcome::completed:
        add_markers(true);
        if (t.shape == TrajectoryShape::decreasing) {
          notes.push_back(loss);
          weights.add(1);
        }
        if (training.resume_request_rule >= 0 && training.counters_continue && t.first) {
          Note n{NoteKind::resumed_at};
          n.evidence = marker_evidence(static_cast<unsigned>(training.resume_request_rule), false);
          n.reading = t.first;
          notes.push_back(n);
        }
        if (training.steps) {
          Note n{NoteKind::steps_advanced};
          n.steps = *training.steps;
          notes.push_back(n);
        }
        if (scan.exit_code) {
          weights.add(1);
          exit_reading = ExitReading::agrees;
        }
        break;
      default:
        if (scan.exit_code) exit_reading = ExitReading::unexplained;
        break;
    }
    d.g15 = info->g15;
  }

  // In a run asked to resume, a failure to load the checkpoint before
  // training began that the run went on after is no recovery: the run started
  // over. Unless a checkpoint was loaded after all, or the counters go on from
  // one. Without a request, such a failure is a fine-tune's partial load of
  // pretrained weights (a new head's size mismatch), which is no problem.
  void went_on_after_failed_resume() {
    const Outcome p = training.problem;
    if ((p != Outcome::none && p != Outcome::too_few_steps && p != Outcome::resume_without_load) ||
        !training.resume_requested || training.resume_loaded || training.counters_continue ||
        !taxonomy.for_outcome(Outcome::resume_without_load))
      return;
    const Trajectory& t = d.trajectory;
    for (std::size_t i = 0; i < selection.candidates.size(); ++i) {
      const Candidate& c = selection.candidates[i];
      if (!c.info->resume_failure ||
          (c.standing != Standing::completed_after && c.standing != Standing::trained_after) ||
          (t.first && c.evidence->first.line > t.first->line))
        continue;
      resume_failed = static_cast<int>(i);
      training.problem = Outcome::resume_without_load;
      return;
    }
  }

  // What shows that a run started again from scratch: the checkpoint counter
  // that went back to zero, the resume request, the first reading's step.
  void resume_evidence() {
    const Trajectory& t = d.trajectory;
    if (const auto& r = training.counter_reset) {
      RuleEvidence e;
      e.count = 1;
      e.first = r->after;
      e.last = r->after;
      d.evidence.push_back(make_evidence(rules, r->rule, e, r->after));
      weights.line(d.evidence.back(), 2);
      Note n{NoteKind::counter_restarted};
      n.evidence = make_evidence(rules, r->rule, e, r->highest);
      n.steps = r->from;
      n.to_steps = r->to;
      n.cause_line = r->after.line;
      notes.push_back(n);
    }
    if (resume_failed >= 0) {
      d.evidence.push_back(evidence_of(selection.candidates[resume_failed]));
      weights.line(d.evidence.back(), 2);
    }
    if (training.resume_request_rule >= 0) {
      d.evidence.push_back(marker_evidence(static_cast<unsigned>(training.resume_request_rule), false));
      weights.line(d.evidence.back(), 2);
      if (!training.resume_loaded) notes.push_back(Note{NoteKind::no_checkpoint_loaded});
    }
    if (training.counters_restart && t.first) {
      Note n{NoteKind::restarts_at};
      n.reading = t.first;
      notes.push_back(n);
      weights.add(1);
    }
  }

  // A stop from outside (a limit, a cancel) tells how the job ended; when the
  // loss had already gone wrong, or the run had started over from scratch,
  // that is the cause, and the stop a finding. A loss that fell, if less than
  // a run's should, had not gone wrong: the stop cut the run short.
  bool stopped_after_training_problem() {
    if (selection.root < 0) return false;
    const Candidate& root = selection.candidates[selection.root];
    const Outcome p = training.problem;
    const bool started_over = p == Outcome::resume_without_load &&
                              (training.counter_reset || training.counters_restart);
    const bool fell = d.trajectory.shape == TrajectoryShape::no_decrease && fell_below_first(d.trajectory);
    if (!root.info->stop || (p != Outcome::non_finite_loss && (p != Outcome::diverging_loss || fell) && !started_over))
      return false;
    finding("stop", root.info->id, started_over ? "after_restart" : "after_training_problem",
            evidence_of(root));
    return true;
  }

  void launcher_note() {
    if (!d.launcher || !d.launcher->root_cause) return;
    Note n{NoteKind::launcher_summary};
    n.launcher = &*d.launcher;
    const std::optional<int> launcher_rank = d.launcher->root_cause->rank;
    if (selection.root >= 0 && !d.evidence.empty() && d.evidence.front().rank && launcher_rank &&
        *launcher_rank != *d.evidence.front().rank)
      n.evidence = d.evidence.front();
    notes.push_back(n);
  }

  void context_findings() {
    for (unsigned i = 0; i < rules.rules.size(); ++i) {
      if (rules.rules[i].role == Role::context && scan.per_rule[i].count > 0) {
        auto& x = finding("context", rules.rules[i].cls, "context", marker_evidence(i, false));
        x.description = rules.rules[i].description;
      }
      // A cause's words on a line logged below the rule's severity.
      if (scan.logged[i].count > 0)
        finding("context", rules.rules[i].cls, "below_severity",
                make_evidence(rules, i, scan.logged[i], scan.logged[i].first));
    }
  }

  // A rank far slower than the fastest in the last report of the two: 30%
  // and more is past the spread of healthy ranks (a few percent), and the
  // whole synchronous job runs at the straggler's pace.
  void straggler_finding(unsigned rule) {
    constexpr double kBehind = 1.3;
    const RuleEvidence& e = scan.per_rule[rule];
    const Evidence ev = make_evidence(rules, rule, e, e.count > 1 ? e.last : e.first);
    auto value = [&](const char* name) -> std::optional<double> {
      auto it = ev.values.find(name);
      if (it == ev.values.end()) return std::nullopt;
      char* end = nullptr;
      const double v = std::strtod(it->second.c_str(), &end);
      return end != it->second.c_str() ? std::optional<double>(v) : std::nullopt;
    };
    const auto fastest = value("fastest"), slowest = value("slowest");
    const auto fastest_rank = value("fastest_rank"), slowest_rank = value("slowest_rank");
    if (!fastest || !slowest || !fastest_rank || !slowest_rank || !(*fastest > 0) ||
        *slowest < kBehind * *fastest)
      return;
    const std::string& id = rules.rules[rule].id;
    auto& x = finding("throughput", "", id.substr(id.rfind('.') + 1), ev);
    x.finding.rank = static_cast<int>(*slowest_rank);
    x.straggler = StragglerFacts{*fastest, *slowest, ev.values.at("fastest"), ev.values.at("slowest"),
                                 static_cast<int>(*fastest_rank), static_cast<int>(*slowest_rank), e.count};
  }

  // The last checkpoint the log shows being saved: what a rerun can resume
  // from (gpudiag run hands its path to the next attempt).
  void last_checkpoint() {
    std::optional<unsigned> latest;
    for (unsigned i = 0; i < rules.rules.size(); ++i)
      if (rules.rules[i].role == Role::checkpoint_save && scan.per_rule[i].count > 0 &&
          (!latest || scan.per_rule[i].last.line > scan.per_rule[*latest].last.line))
        latest = i;
    if (latest) finding("checkpoint", "", "last_saved", marker_evidence(*latest, true));
  }

  // What slows the run, whatever ended it: a setup a rule names, and a
  // checkpoint saved at nearly every step.
  void throughput_findings() {
    constexpr std::uint64_t kStormSaves = 10;
    std::uint64_t saves = 0;
    std::optional<unsigned> save_rule;
    for (unsigned i = 0; i < rules.rules.size(); ++i) {
      const Rule& rule = rules.rules[i];
      if (scan.per_rule[i].count == 0) continue;
      if (rule.role == Role::throughput) {
        auto& x = finding("throughput", "", rule.id.substr(rule.id.rfind('.') + 1), marker_evidence(i, false));
        x.description = rule.description;
      } else if (rule.role == Role::checkpoint_save) {
        saves += scan.per_rule[i].count;
        if (!save_rule) save_rule = i;
      } else if (rule.role == Role::straggler_report) {
        straggler_finding(i);
      }
    }
    if (const auto& c = scan.step_time_change) {
      auto& x = finding("throughput", "", c->collapse ? "throughput_collapse" : "step_time_rising",
                        std::nullopt);
      x.finding.line = c->late_from;
      x.finding.rank = d.trajectory.rank;
      x.step_time = *c;
    }
    if (save_rule) last_checkpoint();
    const std::optional<double> steps = training.steps;
    if (!save_rule || saves < kStormSaves || !steps || 2 * static_cast<double>(saves) < *steps) return;
    auto& x = finding("throughput", "", "save_storm", marker_evidence(*save_rule, false));
    x.saves = saves;
    x.steps = *steps;
    x.last_line = scan.per_rule[*save_rule].last.line;
  }

  Diagnosis run() {
    d.exit_code = scan.exit_code;
    d.bytes = scan.bytes;
    d.lines = scan.lines;
    d.trajectory = scan.trajectory;
    d.launcher = scan.launcher;
    const bool clean_exit = !scan.exit_code || *scan.exit_code == 0;
    training = read_training(rules, scan.per_rule, d.trajectory, scan.counter_reset, scan.epoch_bars, scan.last_count,
                             scan.exit_code);
    selection = select_cause(rules, scan.per_rule, scan.exits, d.trajectory, training, clean_exit);
    went_on_after_failed_resume();
    set_aside_findings();

    const std::optional<int> signo = signal_of(scan.exit_code);
    const ClassInfo* exit_class = signo                                   ? taxonomy.for_signal(*signo)
                                  : scan.exit_code && *scan.exit_code > 0 ? taxonomy.for_exit_code(*scan.exit_code)
                                                                          : nullptr;
    const bool failed_after_completion =
        std::any_of(selection.candidates.begin(), selection.candidates.end(),
                    [](const Candidate& c) { return c.standing == Standing::after_completion; });
    // A signal exit says more than a generic wrapper exception (a
    // CalledProcessError, a bare traceback) about how the job ended.
    const bool wrapper_root =
        selection.root >= 0 && selection.candidates[selection.root].tier == 2;
    if (stopped_after_training_problem()) {
      from_training(clean_exit, failed_after_completion);
    } else if (selection.root >= 0 && !(wrapper_root && exit_class)) {
      from_cause(selection.candidates[selection.root], exit_class);
    } else if (exit_class) {
      info = exit_class;
      d.g15 = info->g15;
      weights.add(1);
      exit_reading = ExitReading::alone;
      completed_before_exit();
    } else {
      from_training(clean_exit, failed_after_completion);
    }
    launcher_note();
    context_findings();
    throughput_findings();

    d.cls = info->id;
    d.title = info->title;
    d.family = info->family;
    d.owner = info->owner;
    d.confidence = confidence_from(weights.units());
    for (auto& x : findings) {
      word_finding(x);
      d.findings.push_back(std::move(x.finding));
    }
    d.verdict = build_verdict(d, VerdictFacts{*info, rules.rules.size(), exit_reading, notes});
    return std::move(d);
  }
};

}  // namespace

Diagnosis resolve(const RuleSet::Impl& rules, const ScanResult& scan) {
  return Resolver(rules, scan).run();
}

}  // namespace gpudiag::detail
