#include "resolver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "gpudiag/taxonomy.hpp"
#include "rank_prefix.hpp"
#include "verdict.hpp"

namespace gpudiag::detail {
namespace {

// A class an exit signal alone points to, when the log says nothing better.
std::string_view signal_class(int signo) {
  switch (signo) {
    case 9: return "oom_killer";
    case 11: return "segfault";
    case 8: return "segfault";  // SIGFPE: a native crash, like SIGSEGV
    case 6: return "native_abort";
    case 7: return "bus_error";
    default: return {};
  }
}

// runtime_error and traceback mean "an exception no class above explains":
// once a more specific cause matched, their lines are that cause's wrapper.
bool explained_by_any_cause(std::string_view cls) {
  return cls == "runtime_error" || cls == "traceback";
}

// Each independent signal that agrees halves the remaining doubt; a matched
// log line weighs twice an exit code.
double confidence_from(int units) {
  if (units <= 0) return 0.0;
  return std::min(0.99, 1.0 - std::pow(0.5, units));
}

}  // namespace

std::optional<int> signal_of(std::optional<int> exit_code) {
  if (!exit_code) return std::nullopt;
  int c = *exit_code;
  if (c < 0 && c > -65) return -c;
  if (c > 128 && c < 128 + 65) return c - 128;
  return std::nullopt;
}

std::string_view signal_name(int signo) {
  switch (signo) {
    case 1: return "SIGHUP";
    case 2: return "SIGINT";
    case 3: return "SIGQUIT";
    case 4: return "SIGILL";
    case 6: return "SIGABRT";
    case 7: return "SIGBUS";
    case 8: return "SIGFPE";
    case 9: return "SIGKILL";
    case 11: return "SIGSEGV";
    case 13: return "SIGPIPE";
    case 15: return "SIGTERM";
    default: return "";
  }
}

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string where(const LossReading& r) {
  std::string s = r.step_reported ? "step " + number(r.step) : "reading " + number(r.step);
  return s + ", line " + std::to_string(r.line);
}

std::string rank_of(const Evidence& ev) {
  if (!ev.rank) return ev.host.empty() ? "" : "host " + ev.host;
  std::string s = "rank " + std::to_string(*ev.rank);
  if (!ev.host.empty()) s += " on " + ev.host;
  return s;
}

// The number of optimisation steps the run reports having taken, from the
// trajectory, a completion line ("200 steps", `max_steps=3`) or HF Trainer's
// summary (runtime x steps per second).
std::optional<double> steps_taken(const Trajectory& t, const std::vector<Evidence>& markers) {
  std::optional<double> steps = t.max_step;
  auto take = [&](double v) { steps = std::max(steps.value_or(0), v); };
  for (const auto& ev : markers) {
    auto get = [&](const char* name) -> std::optional<double> {
      auto it = ev.values.find(name);
      if (it == ev.values.end()) return std::nullopt;
      try {
        return std::stod(it->second);
      } catch (...) {
        return std::nullopt;
      }
    };
    if (auto v = get("steps")) take(*v);
    auto runtime = get("train_runtime"), rate = get("train_steps_per_second");
    if (runtime && rate) take(std::round(*runtime * *rate));
  }
  return steps;
}

constexpr double kUndertrainedSteps = 10;

std::string worker_name(const FailedWorker& w) {
  std::string s = w.rank ? "rank " + std::to_string(*w.rank) : "a worker";
  if (!w.host.empty()) s += " on " + w.host;
  return s;
}

std::string exit_of(const FailedWorker& w) {
  if (!w.exit_code) return "";
  std::string s = "exit code " + std::to_string(*w.exit_code);
  if (!w.signal_name.empty()) s += " (" + w.signal_name + ")";
  return s;
}

// "the launcher's summary names rank 2 on node-1 as its first observed failure (line
// 88): exit code 1; 3 other ranks failed after it: rank 0 exit code -15
// (SIGTERM), ..."
std::string launcher_note(const LauncherReport& r) {
  const FailedWorker& root = *r.root_cause;
  std::string s = "the launcher's summary names " + worker_name(root) +
                  " as its first observed failure (line " + std::to_string(root.line) + ")";
  if (root.exit_code) s += ": " + exit_of(root);
  if (r.other_failure_count > 0) {
    s += "; " + std::to_string(r.other_failure_count) + " other rank" +
         (r.other_failure_count == 1 ? "" : "s") + " failed after it: ";
    constexpr std::size_t kListed = 4;
    for (std::size_t i = 0; i < r.other_failures.size() && i < kListed; ++i) {
      const FailedWorker& w = r.other_failures[i];
      s += (i ? ", " : "") + worker_name(w);
      if (w.exit_code) s += " " + exit_of(w);
    }
    if (r.other_failure_count > kListed) s += ", ...";
  }
  return s;
}

}  // namespace

Diagnosis resolve(const RuleSet::Impl& rules, const ScanResult& scan) {
  Diagnosis d;
  d.exit_code = scan.exit_code;
  d.bytes = scan.bytes;
  d.lines = scan.lines;
  d.trajectory = scan.trajectory;
  d.launcher = scan.launcher;
  const Trajectory& t = d.trajectory;
  const auto& set = rules.rules;
  auto matched = [&](unsigned i) { return scan.per_rule[i].count > 0; };
  auto evidence_of = [&](unsigned i) {
    return make_evidence(rules, i, scan.per_rule[i], scan.per_rule[i].first);
  };
  auto last_evidence_of = [&](unsigned i) {
    const RuleEvidence& e = scan.per_rule[i];
    return make_evidence(rules, i, e, e.count > 1 ? e.last : e.first);
  };
  auto last_line = [&](unsigned i) {
    const RuleEvidence& e = scan.per_rule[i];
    return e.count > 1 ? e.last.line : e.first.line;
  };

  bool completed = false, resume_requested = false, resume_loaded = false;
  std::uint64_t completion_line = 0;
  std::vector<Evidence> markers;  // completion and progress lines, for step counts
  int resume_request_rule = -1;
  for (unsigned i = 0; i < set.size(); ++i) {
    if (!matched(i)) continue;
    switch (set[i].role) {
      case Role::completion:
        completed = true;
        completion_line = std::max(completion_line, last_line(i));
        markers.push_back(last_evidence_of(i));
        break;
      case Role::progress: markers.push_back(last_evidence_of(i)); break;
      case Role::resume: resume_loaded = true; break;
      case Role::resume_request:
        resume_requested = true;
        if (resume_request_rule < 0) resume_request_rule = static_cast<int>(i);
        break;
      default: break;
    }
  }
  const bool clean_exit = !scan.exit_code || *scan.exit_code == 0;
  // A cause whose every line comes before the run's own completion, in a run
  // that exited cleanly, was caught and recovered from (an OOM probe, a
  // retry). So was an allocation failure after which the same rank went on
  // to report several more losses: the process did not die of it. (One or
  // two readings can be output buffered before the crash and flushed after.)
  constexpr std::size_t kReadingsAfterRecovery = 3;
  auto readings_after = [&](std::uint64_t line) {
    return static_cast<std::size_t>(std::count_if(
        t.series.begin(), t.series.end(), [&](const LossReading& r) { return r.line > line; }));
  };
  auto survived = [&](unsigned i) {
    if (completed && clean_exit && last_line(i) < completion_line) return true;
    if (set[i].cls == "cuda_oom" || set[i].cls == "ram_oom")
      return last_evidence_of(i).rank == t.rank &&
             readings_after(last_line(i)) >= kReadingsAfterRecovery;
    return false;
  };
  // Decided once per rule: it extracts values from the rule's last line.
  std::vector<char> recovered_rule(set.size(), 0);
  for (unsigned i = 0; i < set.size(); ++i)
    recovered_rule[i] = set[i].role == Role::cause && matched(i) && survived(i);
  // A failure on the way out ends the process but not the training: one after
  // the run's completion line, or one after the last loss reading of a run
  // that then printed its completion (another rank's exit). Where the
  // trajectory or the step count shows what went wrong with the training,
  // that is the diagnosis and the failure at exit a finding. Without such a
  // problem the failure still decides: a job that aborts at exit has failed.
  const std::optional<double> steps = steps_taken(t, markers);
  const bool training_problem =
      t.shape == "non_finite" || t.shape == "diverged" || t.shape == "plateau" ||
      t.shape == "no_decrease" || (resume_requested && !resume_loaded) ||
      (completed && steps && *steps <= kUndertrainedSteps);
  std::vector<char> after_completion_rule(set.size(), 0);
  bool failed_after_completion = false;
  for (unsigned i = 0; i < set.size(); ++i) {
    after_completion_rule[i] = completed && training_problem && set[i].role == Role::cause &&
                               matched(i) && !recovered_rule[i] &&
                               (scan.per_rule[i].first.line > completion_line ||
                                (t.last && scan.per_rule[i].first.line > t.last->line));
    failed_after_completion |= after_completion_rule[i] != 0;
  }
  auto recovered = [&](unsigned i) { return recovered_rule[i] != 0 || after_completion_rule[i] != 0; };

  // Root cause over cascade: a specific cause outranks whatever it sets off on
  // other ranks (cascade rules), and both outrank the generic exception that
  // wraps them; within a tier, rule order decides.
  auto tier = [&](unsigned i) {
    return set[i].cascade ? 1 : explained_by_any_cause(set[i].cls) ? 2 : 0;
  };
  // Root cause by time: when specific causes sit on different ranks, the
  // rank whose failure the log shows first decides, and rule order then
  // decides on that rank. The launcher's "first observed failure" is not
  // used for this: it orders exits, not failures, and it breaks ties between
  // workers reaped in the same poll by their local rank. A cause on no rank
  // (a driver line, a scheduler line) is never set aside.
  std::vector<std::optional<int>> rank_of_rule(set.size());
  int first_rank = -1;  // none: the causes are on one rank or on none
  {
    std::set<int> ranks;
    std::uint64_t earliest = 0;
    for (unsigned i = 0; i < set.size(); ++i) {
      if (set[i].role != Role::cause || !matched(i) || recovered(i) || tier(i) != 0) continue;
      rank_of_rule[i] = parse_rank_prefix(scan.per_rule[i].first.text).rank;
      if (!rank_of_rule[i]) continue;
      ranks.insert(*rank_of_rule[i]);
      if (first_rank < 0 || scan.per_rule[i].first.line < earliest) {
        first_rank = *rank_of_rule[i];
        earliest = scan.per_rule[i].first.line;
      }
    }
    if (ranks.size() < 2) first_rank = -1;
  }
  auto set_aside_by_rank = [&](unsigned i) {
    return first_rank >= 0 && rank_of_rule[i] && *rank_of_rule[i] != first_rank;
  };
  int primary = -1;
  for (int pass = 0; pass < 3 && primary < 0; ++pass)
    for (unsigned i = 0; i < set.size(); ++i)
      if (set[i].role == Role::cause && matched(i) && !recovered(i) && tier(i) == pass &&
          !(pass == 0 && set_aside_by_rank(i))) {
        primary = static_cast<int>(i);
        break;
      }

  const std::optional<int> signo = signal_of(scan.exit_code);
  const std::string_view exit_class = signo ? signal_class(*signo) : std::string_view{};
  int units = 0;
  ExitReading exit_reading = ExitReading::none;
  std::vector<std::string> notes;  // what the log shows beyond quoted lines
  // Two rules matching one line are one signal, not two.
  std::set<std::uint64_t> counted_lines;
  auto weigh = [&](const Evidence& ev, int weight) {
    if (counted_lines.insert(ev.line).second) units += weight;
  };

  for (unsigned i = 0; i < set.size(); ++i)
    if (after_completion_rule[i]) {
      Evidence ev = evidence_of(i);
      d.findings.push_back({"after_completion", set[i].cls,
                            set[i].cls + " at line " + std::to_string(ev.line) +
                                " came after training had ended (" +
                                (ev.line > completion_line
                                     ? "the completion line is line " + std::to_string(completion_line)
                                     : "the last loss reading is line " +
                                           std::to_string(t.last->line) +
                                           ", and the run printed its completion after it") +
                                "): a process failed on its way out",
                            std::move(ev)});
    }
  for (unsigned i = 0; i < set.size(); ++i)
    if (set[i].role == Role::cause && matched(i) && recovered_rule[i]) {
      Evidence ev = last_evidence_of(i);
      d.findings.push_back({"recovered", set[i].cls,
                            set[i].cls + " at line " + std::to_string(ev.line) +
                                " was recovered from: " +
                                (completion_line > ev.line
                                     ? "the run completed after it, at line " +
                                           std::to_string(completion_line)
                                     : "training went on, " +
                                           std::to_string(readings_after(ev.line)) +
                                           " loss readings after it"),
                            std::move(ev)});
    }

  if (primary >= 0) {
    d.cls = set[primary].cls;
    d.g15 = set[primary].g15;
    for (unsigned i = 0; i < set.size(); ++i) {
      if (set[i].role != Role::cause || !matched(i) || recovered(i)) continue;
      if (set[i].cls == d.cls) {
        d.evidence.push_back(evidence_of(i));
        weigh(d.evidence.back(), 2);
        if (d.evidence.back().count > 1) units += 1;  // more lines agree
      } else if (set[i].cascade && !set[primary].cascade) {
        Evidence ev = evidence_of(i);
        const Evidence root = evidence_of(static_cast<unsigned>(primary));
        std::string who = rank_of(root), victim = rank_of(ev);
        std::string msg = set[i].cls + " at line " + std::to_string(ev.line) +
                          (victim.empty() ? "" : " (" + victim + ")") +
                          (scan.per_rule[i].count > 1
                               ? " and " + std::to_string(scan.per_rule[i].count - 1) + " more line" +
                                     (scan.per_rule[i].count > 2 ? "s" : "")
                               : "") +
                          " followed from the root cause, " + d.cls + " at line " +
                          std::to_string(root.line) + (who.empty() ? "" : " (" + who + ")");
        d.findings.push_back({"cascade", set[i].cls, std::move(msg), std::move(ev)});
      } else if (!explained_by_any_cause(set[i].cls)) {
        Evidence ev = evidence_of(i);
        std::string why =
            set_aside_by_rank(i)
                ? "rank " + std::to_string(first_rank) + "'s failure comes earlier in the log"
                : set[primary].id + " comes first in rule order";
        d.findings.push_back({"also_matched", set[i].cls,
                              "rule " + set[i].id + " (" + set[i].cls + ") also matched at line " +
                                  std::to_string(ev.line) +
                                  (ev.rank ? " (rank " + std::to_string(*ev.rank) + ")" : "") +
                                  "; " + why,
                              std::move(ev)});
      }
    }
    if (!d.evidence.empty() && d.evidence.front().rank && !set[primary].cascade)
      notes.push_back("the first failure is on " + rank_of(d.evidence.front()));
    if (!exit_class.empty()) {
      if (exit_class == d.cls) {
        units += 1;
        exit_reading = ExitReading::agrees;
      } else {
        d.findings.push_back({"exit_code", std::string(exit_class),
                              "exit code " + std::to_string(*scan.exit_code) + " (" +
                                  std::string(signal_name(*signo)) + ") alone would suggest " +
                                  std::string(exit_class) + "; the log's evidence was preferred",
                              std::nullopt});
        exit_reading = ExitReading::disagrees;
      }
    }
    if (t.last && !d.evidence.empty()) {
      const Evidence& cause = d.evidence.front();
      const LossReading& r = *t.last;
      if (r.line < cause.line) {
        std::string reached = "training had reached " + where(r) + ", loss " + number(r.loss);
        // A time limit or a hung collective: was the run still moving?
        if (d.cls == "timeout" || d.cls == "nccl_timeout") {
          std::uint64_t gap = cause.line - r.line;
          reached += gap <= 20 ? ", " + std::to_string(gap) +
                                     (gap == 1 ? " line" : " lines") +
                                     " before it was stopped: nothing shows it had stalled"
                               : "; then " + std::to_string(gap) +
                                     " lines without a loss reading before it was stopped: it had "
                                     "most likely gone silent";
        }
        notes.push_back(reached);
      }
    }
    const char* trajectory_class = t.shape == "non_finite" ? "nan_loss" : "loss_divergence";
    if ((t.shape == "non_finite" || t.shape == "diverged" || t.shape == "plateau" ||
         t.shape == "no_decrease") &&
        d.cls != trajectory_class)  // else the evidence already says so
      d.findings.push_back({"trajectory", trajectory_class,
                            "before it ended, the loss trajectory was " + t.shape, std::nullopt});
  } else if (!exit_class.empty()) {
    d.cls = std::string(exit_class);
    d.g15 = std::string(find_class(d.cls)->g15);
    units = 1;
    exit_reading = ExitReading::alone;
  } else {
    // No line names a cause: read training correctness from the trajectory.
    auto add_markers = [&](bool with_progress) {
      for (unsigned i = 0; i < set.size(); ++i) {
        if (!matched(i)) continue;
        bool is_progress = set[i].role == Role::progress;
        if (set[i].role == Role::completion || (with_progress && is_progress)) {
          d.evidence.push_back(is_progress ? evidence_of(i) : last_evidence_of(i));
          weigh(d.evidence.back(), is_progress ? 1 : 2);
        }
      }
    };
    if (t.shape == "non_finite") {
      d.cls = "nan_loss";
      if (t.first_non_finite)
        notes.push_back("the loss became " + number(t.first_non_finite->loss) + " at " +
                        where(*t.first_non_finite) +
                        (t.first ? ", after starting at " + number(t.first->loss) : ""));
      else
        notes.push_back("the gradient norm was non-finite at the last reading (" + where(*t.last) +
                        "), where the loss read " + number(t.last->loss));
      units += 2;
      add_markers(true);
    } else if (t.shape == "diverged" || t.shape == "plateau" || t.shape == "no_decrease") {
      d.cls = "loss_divergence";
      const LossReading& f = *t.first;
      if (t.shape == "diverged") {
        notes.push_back("the loss rose from " + number(f.loss) + " (" + where(f) + ") to a peak of " +
                        number(t.peak->loss) + " (" + where(*t.peak) + "), " +
                        number(t.peak->loss / f.loss) + " times its first value, and ended at " +
                        number(t.last->loss) + " (" + where(*t.last) + ")");
      } else if (t.shape == "plateau") {
        notes.push_back("the loss stayed between " + number(t.lowest->loss) + " and " +
                        number(t.peak->loss) + " (within 1%) over " + std::to_string(t.readings) +
                        " readings, lines " + std::to_string(f.line) + " to " +
                        std::to_string(t.last->line));
      } else {
        notes.push_back("the loss never fell meaningfully: " + number(f.loss) + " at " + where(f) +
                        ", " + number(t.last->loss) + " at " + where(*t.last) + ", lowest " +
                        number(t.lowest->loss) + ", with no downward trend over " +
                        std::to_string(t.readings) + " readings");
      }
      units += t.readings >= 8 ? 3 : 2;
      add_markers(true);
    } else if (resume_requested && !resume_loaded) {
      d.cls = "resume_from_scratch";
      d.evidence.push_back(evidence_of(static_cast<unsigned>(resume_request_rule)));
      weigh(d.evidence.back(), 2);
      notes.push_back("no line shows a checkpoint being loaded");
      if (t.first && t.first->step <= 1) {
        notes.push_back("training starts over at " + where(*t.first) + " with loss " +
                        number(t.first->loss));
        units += 1;
      }
    } else if (completed && (clean_exit || failed_after_completion) && steps &&
               *steps <= kUndertrainedSteps) {
      d.cls = "undertrained";
      add_markers(true);
      notes.push_back("the run completed after " + number(*steps) + " optimisation step" +
                      (*steps == 1 ? "" : "s"));
      if (scan.exit_code) units += 1;
    } else if (completed && clean_exit) {
      d.cls = "healthy";
      add_markers(true);
      if (t.shape == "decreasing") {
        notes.push_back("the loss fell from " + number(t.first->loss) + " (" + where(*t.first) +
                        ") to " + number(t.last->loss) + " (" + where(*t.last) + ") over " +
                        std::to_string(t.readings) + " readings");
        units += 1;
      }
      if (steps) notes.push_back("optimisation steps advanced to " + number(*steps));
      if (scan.exit_code) {
        units += 1;
        exit_reading = ExitReading::agrees;
      }
    } else {
      d.cls = "unknown";
      if (scan.exit_code) exit_reading = ExitReading::unexplained;
    }
    d.g15 = std::string(find_class(d.cls)->g15);
  }

  if (d.launcher && d.launcher->root_cause) {
    std::string note = launcher_note(*d.launcher);
    const std::optional<int> launcher_rank = d.launcher->root_cause->rank;
    if (primary >= 0 && !d.evidence.empty() && d.evidence.front().rank && launcher_rank &&
        *launcher_rank != *d.evidence.front().rank)
      note += "; the log shows " + rank_of(d.evidence.front()) + " failing earlier, at line " +
              std::to_string(d.evidence.front().line) +
              " (the launcher orders ranks by when they exited)";
    notes.push_back(std::move(note));
  }

  for (unsigned i = 0; i < set.size(); ++i)
    if (set[i].role == Role::context && matched(i)) {
      Evidence ev = evidence_of(i);
      d.findings.push_back({"context", set[i].cls,
                            set[i].description.empty() ? "rule " + set[i].id + " matched"
                                                       : set[i].description,
                            std::move(ev)});
    }

  const ClassInfo* info = find_class(d.cls);
  d.family = std::string(info->family);
  d.owner = std::string(info->owner);
  d.confidence = confidence_from(units);
  d.verdict = build_verdict(d, *info, rules.rules.size(), exit_reading, notes);
  return d;
}

}  // namespace gpudiag::detail
