#include "wording.hpp"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <charconv>
#include <set>

#include "signals.hpp"
#include "trajectory_builder.hpp"

namespace gpudiag::detail {
namespace {

// As printf's "%.6g" writes it (std::to_chars with a precision is specified
// so), without stdio's locale and stream machinery: a diagnosis words a few
// numbers, and that was a fiftieth of a small log's cost.
std::string number(double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 6);
  return ec == std::errc() ? std::string(buf, end) : std::string();
}

std::string plural(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string where(const LossReading& r) {
  return std::string(r.step_reported ? "step " : "reading ") + std::to_string(r.step) + ", line " +
         std::to_string(r.line);
}

std::string rank_of(const Evidence& ev) {
  if (!ev.rank) return ev.host.empty() ? "" : "host " + ev.host;
  std::string s = "rank " + std::to_string(*ev.rank);
  if (!ev.host.empty()) s += " on " + ev.host;
  return s;
}

std::string sentence(std::string_view s) {
  std::string out(s);
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  if (!out.empty() && out.back() != '.') out += '.';
  return out;
}

std::string quote(const Evidence& ev) {
  std::string s = "line " + std::to_string(ev.line);
  if (ev.rank) s += " (rank " + std::to_string(*ev.rank) + (ev.host.empty() ? ")" : " on " + ev.host + ")");
  s += ": " + ev.text;
  if (ev.truncated) s += " [excerpt]";
  if (!ev.values.empty()) {
    s += " — ";
    bool first = true;
    for (const auto& [name, value] : ev.values) {
      s += (first ? "" : ", ") + name + " " + value;
      first = false;
    }
  }
  if (ev.count > 1) s += " (" + std::to_string(ev.count) + " lines match " + ev.rule + ")";
  return s;
}

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

// "the launcher's summary names rank 2 on node-1 as its first observed
// failure (line 88): exit code 1; 3 other ranks failed after it: ..."
std::string launcher_summary(const LauncherReport& r, const std::optional<Evidence>& earlier) {
  const FailedWorker& root = *r.root_cause;
  std::string s = "the launcher's summary names " + worker_name(root) +
                  " as its first observed failure (line " + std::to_string(root.line) + ")";
  if (root.exit_code) s += ": " + exit_of(root);
  if (r.other_failure_count > 0) {
    s += "; " + plural(r.other_failure_count, "other rank", "other ranks") + " failed after it: ";
    constexpr std::size_t kListed = 4;
    for (std::size_t i = 0; i < r.other_failures.size() && i < kListed; ++i) {
      const FailedWorker& w = r.other_failures[i];
      s += (i ? ", " : "") + worker_name(w);
      if (w.exit_code) s += " " + exit_of(w);
    }
    if (r.other_failure_count > kListed) s += ", ...";
  }
  if (earlier)
    s += "; the log shows " + rank_of(*earlier) + " failing earlier, at line " +
         std::to_string(earlier->line) + " (the launcher orders ranks by when they exited)";
  return s;
}

std::string training_reached(const Note& n) {
  const LossReading& r = *n.reading;
  std::string s = "training had reached " + where(r) + ", loss " + number(r.loss);
  if (!n.stall) return s;
  // A time limit or a hung collective: was the run still moving?
  const std::uint64_t gap = n.cause_line - r.line;
  if (gap <= 20)
    return s + ", " + plural(gap, "line", "lines") +
           " before it was stopped: nothing shows it had stalled";
  return s + "; then " + std::to_string(gap) +
         " lines without a loss reading before it was stopped: it had most likely gone silent";
}

// "the plan allows 18 optimisation steps: 140 training samples in batches of
// 4 x 2 accumulated, over 1 epoch (lines 72, 13, 14, 15)".
std::string step_budget(const Note& n) {
  const StepBudget& b = *n.budget;
  if (b.bar_batches)
    return "the plan allows " + plural(static_cast<std::uint64_t>(b.steps), "batch", "batches") + ": " +
           plural(static_cast<std::uint64_t>(*b.epochs), "epoch", "epochs") + " of " + number(*b.bar_batches) +
           ", as the epoch's progress bar counts them (lines " +
           std::to_string(std::min(n.lines.front(), n.lines.back())) + ", " +
           std::to_string(std::max(n.lines.front(), n.lines.back())) + ")";
  std::string s = "the plan " + std::string(b.samples ? "allows " : "states ") +
                  plural(static_cast<std::uint64_t>(b.steps), "optimisation step", "optimisation steps");
  if (b.samples) {
    s += ": " + number(*b.samples) + " training samples in batches of " + number(*b.batch);
    if (b.accumulation && *b.accumulation > 1) s += " x " + number(*b.accumulation) + " accumulated";
    s += ", over " + plural(static_cast<std::uint64_t>(*b.epochs), "epoch", "epochs");
  }
  std::string lines;
  for (std::uint64_t l : n.lines) lines += (lines.empty() ? "" : ", ") + std::to_string(l);
  return s + " (" + (n.lines.size() == 1 ? "line " : "lines ") + lines + ")";
}

std::string note_text(const Note& n) {
  const Trajectory* t = n.trajectory;
  switch (n.kind) {
    case NoteKind::first_failure_on: return "the first failure is on " + rank_of(*n.evidence);
    case NoteKind::training_reached: return training_reached(n);
    case NoteKind::loss_non_finite:
      return "the loss became " + number(t->first_non_finite->loss) + " at " +
             where(*t->first_non_finite) +
             (t->first ? ", after starting at " + number(t->first->loss) : "");
    case NoteKind::grad_non_finite:
      return "the gradient norm was non-finite at the last reading (" + where(*t->last) +
             "), where the loss read " + number(t->last->loss);
    case NoteKind::loss_diverged:
      if (!(t->peak->loss > 10 * t->first->loss || t->last->loss > 2 * t->first->loss))
        if (const auto rise = rose_above_running_minimum(t->series))
          return "the loss fell from " + number(t->first->loss) + " (" + where(*t->first) +
                 ") to a running minimum of " + number(rise->minimum) + " (lowest reading " +
                 number(t->lowest->loss) + ", " + where(*t->lowest) +
                 "), then rose for good: from " + where(rise->late_from) + ", its median is " + number(rise->late) + ", " + number(rise->late / rise->minimum) +
                 " times that minimum, and it ended at " + number(t->last->loss) + " (" +
                 where(*t->last) + ")";
      return "the loss rose from " + number(t->first->loss) + " (" + where(*t->first) +
             ") to a peak of " + number(t->peak->loss) + " (" + where(*t->peak) + "), " +
             number(t->peak->loss / t->first->loss) + " times its first value, and ended at " +
             number(t->last->loss) + " (" + where(*t->last) + ")";
    case NoteKind::loss_plateau:
      if (const std::optional<int> k = chance_classes(*t))
        return "the loss settled at " + number(t->last->loss) + " = ln " + std::to_string(*k) +
               ", the loss of a uniform guess over " + std::to_string(*k) +
               " classes, and stayed there to its last reading (" + where(*t->last) + ")";
      return "the loss stayed between " + number(t->lowest->loss) + " and " +
             number(t->peak->loss) + " (within 1%) over " + std::to_string(t->readings) +
             " readings, lines " + std::to_string(t->first->line) + " to " +
             std::to_string(t->last->line);
    case NoteKind::loss_no_decrease:
      return "the loss never fell meaningfully: " + number(t->first->loss) + " at " +
             where(*t->first) + ", " + number(t->last->loss) + " at " + where(*t->last) +
             ", lowest " + number(t->lowest->loss) + ", with no downward trend over " +
             std::to_string(t->readings) + " readings";
    case NoteKind::no_checkpoint_loaded: return "no line shows a checkpoint being loaded";
    case NoteKind::counter_restarted:
      return "the checkpoint counter went back from step " + number(n.steps) + " (line " +
             std::to_string(n.evidence->line) + ") to step " + number(n.to_steps) + " (line " +
             std::to_string(n.cause_line) + "): a run started over where an earlier one had got that far";
    case NoteKind::resumed_at:
      return "asked to resume (line " + std::to_string(n.evidence->line) + "), the first reading is at " +
             where(*n.reading) + " (loss " + number(n.reading->loss) +
             "), past where a fresh start would be: the run resumed";
    case NoteKind::restarts_at:
      return "training starts over at " + where(*n.reading) + " with loss " + number(n.reading->loss);
    case NoteKind::completed_after_steps:
      if (n.batches)
        return "the run completed after " + number(n.steps) + " batch" + (n.steps == 1 ? "" : "es") +
               ", as its epoch progress bars count them";
      return "the run completed after " + number(n.steps) + " optimisation step" +
             (n.steps == 1 ? "" : "s");
    case NoteKind::step_budget: return step_budget(n);
    case NoteKind::loss_at_chance:
      return "the median of the last " + std::to_string(n.chance->readings) + " readings, " +
             number(n.chance->late) + ", sits at ln " + number(n.chance->classes) + " = " +
             number(std::log(n.chance->classes)) + ", a uniform guess over the " + number(n.chance->classes) +
             " outputs that line " + std::to_string(n.lines.front()) + " states: the model learned nothing";
    case NoteKind::evaluation_at_chance:
      return "the last evaluation loss, " + number(n.reading->loss) + " (line " +
             std::to_string(n.reading->line) + "), sits at ln " + std::to_string(n.classes) + " = " +
             number(std::log(n.classes)) + ", the loss of a uniform guess over " +
             std::to_string(n.classes) + " classes: the model had not begun to learn";
    case NoteKind::loss_fell:
      return "the loss fell from " + number(t->first->loss) + " (" + where(*t->first) + ") to " +
             number(t->last->loss) + " (" + where(*t->last) + ") over " +
             std::to_string(t->readings) + " readings";
    case NoteKind::steps_advanced: return "optimisation steps advanced to " + number(n.steps);
    case NoteKind::launcher_summary: return launcher_summary(*n.launcher, n.evidence);
  }
  return {};
}

std::string rerun_text(const ClassInfo& info) {
  std::string s = info.rerun == "not_needed" ? "not needed" : info.rerun;
  if (!info.rerun_note.empty()) s += ": " + info.rerun_note;
  return s;
}

// A description's first sentence, without its full stop.
std::string first_sentence(const std::string& text) {
  return text.substr(0, std::min(text.find(". "), text.size() - (text.ends_with('.') ? 1 : 0)));
}

}  // namespace

void word_finding(FindingFacts& x) {
  Finding& f = x.finding;
  const std::string at = f.cls + " at line " + (f.line ? std::to_string(*f.line) : "?");
  if (f.kind == "cascade") {
    const Evidence& root = *x.root;
    const std::string victim = f.evidence ? rank_of(*f.evidence) : "", who = rank_of(root);
    f.message = at + (victim.empty() ? "" : " (" + victim + ")") +
                (x.more_lines ? " and " + plural(x.more_lines, "more line", "more lines") : "") +
                " followed from the root cause, " + root.cls + " at line " +
                std::to_string(root.line) + (who.empty() ? "" : " (" + who + ")");
  } else if (f.kind == "recovered") {
    f.message = at + " was recovered from: " +
                (f.reason == "completed_after"
                     ? "the run completed after it, at line " + std::to_string(x.completion_line)
                     : "training went on, " + std::to_string(x.readings_after) +
                           " loss readings after it");
  } else if (f.kind == "after_completion") {
    f.message = at + " came after training had ended (" +
                (f.reason == "after_completion_line"
                     ? "the completion line is line " + std::to_string(x.completion_line)
                     : "the last loss reading is line " + std::to_string(x.last_reading->line) +
                           ", and the run printed its completion after it") +
                "): a process failed on its way out";
  } else if (f.kind == "also_matched") {
    f.message = "rule " + f.rule + " (" + f.cls + ") also matched at line " +
                std::to_string(*f.line) + (f.rank ? " (rank " + std::to_string(*f.rank) + ")" : "") +
                "; " +
                (f.reason == "earlier_rank"
                     ? "rank " + std::to_string(*x.first_rank) + "'s failure comes earlier in the log"
                 : f.reason == "earlier_event"
                     ? "the failure at line " + std::to_string(x.root_line) + " comes earlier in the log"
                     : x.root_rule + " comes first in rule order");
  } else if (f.kind == "exit_code" && f.reason == "completed_before_exit") {
    f.message = "the log shows training completed at line " + std::to_string(x.completion_line) +
                ", but the job ended with " + describe_exit(*x.exit_code) +
                ": the exit status decided, as a kill leaves no line in the log and so came after its "
                "last one (on the way out: saving, teardown) or belongs to a later step; check that the "
                "run's outputs were written";
  } else if (f.kind == "exit_code" && f.cls.empty()) {
    f.message = describe_exit(*x.exit_code) +
                " says the job succeeded, but the log names a failure; the log's evidence was preferred: "
                "a wrapper, a pipeline (| tee) or a caught exception turns a failed run's status into 0, "
                "while the line is the program's own word";
  } else if (f.kind == "exit_code") {
    f.message = describe_exit(*x.exit_code) + " alone would suggest " + f.cls +
                "; the log's evidence was preferred";
  } else if (f.kind == "stop") {
    f.message = at + " says how the job was stopped; " +
                (f.reason == "after_restart" ? "the run had already started over from scratch"
                                             : "the loss had already gone wrong") +
                " before it, which is the cause";
  } else if (f.kind == "throughput" && x.straggler) {
    const StragglerFacts& s = *x.straggler;
    f.message = "rank " + std::to_string(s.slowest_rank) + " is a straggler: its step took " +
                s.slowest_text + " against " + s.fastest_text + " for rank " +
                std::to_string(s.fastest_rank) + ", " + number(s.slowest / s.fastest) +
                " times as long, in the last of " + plural(s.reports, "report", "reports") +
                "; a synchronous job runs at its slowest rank's pace";
  } else if (f.kind == "throughput" && x.step_time) {
    const StepTimeChange& c = *x.step_time;
    f.message = std::string(c.collapse ? "throughput collapsed mid-run" : "the step time rose steadily") +
                ": " + number(c.early) + " s a step early on (median, lines " +
                std::to_string(c.early_from) + " to " + std::to_string(c.early_to) + "), " +
                number(c.late) + " s in the last quarter (lines " + std::to_string(c.late_from) +
                " to " + std::to_string(c.late_to) + "), " + number(c.late / c.early) +
                " times slower, over " + std::to_string(c.readings) + " step times";
  } else if (f.kind == "throughput") {
    f.message = f.reason == "save_storm"
                    ? std::to_string(x.saves) + " checkpoint saves over " + number(x.steps) +
                          " optimisation steps, lines " + std::to_string(*f.line) + " to " +
                          std::to_string(x.last_line) +
                          ": a save at nearly every step, and each step waits for its write"
                    : first_sentence(x.description);
  } else if (f.kind == "checkpoint") {
    const Evidence& ev = *f.evidence;
    const auto path = ev.values.find("path");
    f.message = (path != ev.values.end() ? "the last checkpoint saved: " + path->second + " (line "
                                         : "a checkpoint was last saved (line ") +
                std::to_string(ev.line) + ")" + (ev.count > 1 ? ", of " + std::to_string(ev.count) + " saves" : "");
  } else if (f.kind == "trajectory") {
    f.message = "before it ended, the loss trajectory was " + std::string(to_string(x.shape));
  } else if (f.kind == "context" && f.reason == "below_severity") {
    const Evidence& ev = *f.evidence;
    f.message = at + " is on " + (ev.count > 1 ? plural(ev.count, "line", "lines") + " logged at " : "a line logged at ") +
                ev.severity + " level: the program reported it and went on, so it decides nothing";
  } else if (f.kind == "context") {
    f.message = x.description.empty() ? "rule " + f.rule + " matched" : x.description;
  }
}

Verdict build_verdict(const Diagnosis& d, const VerdictFacts& facts) {
  const ClassInfo& info = facts.info;
  Verdict v;
  std::set<std::uint64_t> quoted;
  for (const auto& ev : d.evidence)
    if (quoted.insert(ev.line).second) v.shows.push_back(quote(ev));
  for (const auto& n : facts.notes) v.shows.push_back(note_text(n));
  if (d.exit_code) {
    std::string exit = describe_exit(*d.exit_code);
    switch (facts.exit_reading) {
      case ExitReading::agrees: v.shows.push_back(exit + ", which agrees"); break;
      case ExitReading::disagrees: v.shows.push_back(exit + ", which the log's evidence outweighs"); break;
      case ExitReading::alone: v.shows.push_back(exit + ", and no log line names a cause"); break;
      case ExitReading::after_completion:
        for (const auto& f : d.findings)
          if (f.reason == "completed_before_exit" && f.evidence) v.shows.push_back(quote(*f.evidence));
        v.shows.push_back(exit + ", though the log shows training completed: the exit status decided (see findings)");
        break;
      default: v.shows.push_back(exit); break;
    }
  }
  if (info.outcome == Outcome::undetermined)
    v.shows.push_back("none of the " + std::to_string(facts.rule_count) + " rules matched a cause in " +
                      plural(d.lines, "line", "lines") + " (" + plural(d.bytes, "byte", "bytes") + ")");

  v.implies.push_back(sentence(info.cause));
  if (d.owner != "none")
    v.implies.push_back("Owner: " + d.owner + ". Next: " + info.action + ".");
  else
    v.implies.push_back("Next: " + info.action + ".");
  v.implies.push_back("A plain rerun helps: " + rerun_text(info) + ".");

  v.cannot_decide.push_back(sentence(info.cannot_decide));
  if (facts.exit_reading == ExitReading::alone || facts.exit_reading == ExitReading::after_completion)
    v.cannot_decide.push_back(
        signal_of(d.exit_code).has_value()
            ? "Who sent the signal: the exit code is the only evidence, and a scheduler or a user can "
              "send it too."
            : "What failed: the exit status is the only evidence, and other programs exit with it too.");
  const bool rests_on_training = info.outcome == Outcome::completed ||
                                 info.outcome == Outcome::too_few_steps ||
                                 info.outcome == Outcome::resume_without_load;
  if (d.trajectory.shape == TrajectoryShape::none && rests_on_training)
    v.cannot_decide.push_back(
        "Whether training was correct: no loss trajectory was recognised, so nothing shows the "
        "loss decreasing.");
  if (info.stall && d.trajectory.last)
    v.cannot_decide.push_back(
        "How long the run went without progress before it was stopped: lines are compared by "
        "position, not by their timestamps.");
  if (!d.exit_code && (info.outcome == Outcome::undetermined || info.outcome == Outcome::completed ||
                       !info.exit_signals.empty()))
    v.cannot_decide.push_back("The exit status: it was not given.");
  return v;
}

}  // namespace gpudiag::detail
