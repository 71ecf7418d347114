#include "training.hpp"

#include "trajectory_builder.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace gpudiag::detail {
namespace {

std::optional<double> number(const std::map<std::string, std::string>& values, const char* name) {
  auto it = values.find(name);
  if (it == values.end()) return std::nullopt;
  std::string digits = it->second;  // "2,000" as printed with a thousands separator
  digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
  try {
    return std::stod(digits);
  } catch (...) {
    return std::nullopt;
  }
}

// The steps the run reports having taken: the trajectory, a completion line
// ("200 steps", `max_steps=3`) or HF Trainer's summary (runtime x steps/s).
std::optional<double> steps_taken(const RuleSet::Impl& rules,
                                  const EvidenceTable& per_rule, const Trajectory& t) {
  std::optional<double> steps;
  if (t.max_step) steps = static_cast<double>(*t.max_step);
  auto take = [&](double v) { steps = std::max(steps.value_or(0), v); };
  for (unsigned i = 0; i < rules.rules.size(); ++i) {
    const Role role = rules.rules[i].role;
    const RuleEvidence& e = per_rule[i];
    if (e.count == 0 || (role != Role::completion && role != Role::progress)) continue;
    const Evidence ev = make_evidence(rules, i, e, e.count > 1 ? e.last : e.first);
    if (auto v = number(ev.values, "steps")) take(*v);
    auto runtime = number(ev.values, "train_runtime"), rate = number(ev.values, "train_steps_per_second");
    if (runtime && rate) take(std::round(*runtime * *rate));
  }
  return steps;
}

// The step budget the plan lines give. A stated number of steps wins; else
// the training set's size over the batch of one optimisation step (the
// per-step batch times the accumulation, or a total that counts it) times the
// epochs, where all are stated; else the batches of one epoch that its
// progress bar counts, times the epochs. Per-device batches on several
// devices make a larger real batch, so the budget is then an upper bound.
std::optional<StepBudget> read_budget(const RuleSet::Impl& rules,
                                      const EvidenceTable& per_rule,
                                      const std::optional<EpochBars>& bars) {
  using Source = std::optional<StepBudget::Source>;
  StepBudget b;
  std::optional<double> stated, total_batch;
  Source stated_at, samples_at, batch_at, accumulation_at, epochs_at;
  for (unsigned i = 0; i < rules.rules.size(); ++i) {
    const RuleEvidence& e = per_rule[i];
    if (e.count == 0 || rules.rules[i].role != Role::plan) continue;
    // One rule states several values on different lines (the epochs on one,
    // the steps on another): its first and its last line are read, the last
    // winning.
    for (const RecordedHit* hit : {&e.first, &e.last}) {
      if (hit == &e.last && e.count < 2) break;
      const Evidence ev = make_evidence(rules, i, e, *hit);
      auto take = [&](const char* name, std::optional<double>& into, Source& at) {
        if (auto v = number(ev.values, name); v && *v > 0) into = v, at = StepBudget::Source{i, hit};
      };
      take("steps", stated, stated_at);
      take("samples", b.samples, samples_at);
      take("batch", b.batch, batch_at);
      take("total_batch", total_batch, batch_at);
      take("accumulation", b.accumulation, accumulation_at);
      take("epochs", b.epochs, epochs_at);
    }
  }
  if (stated) {
    StepBudget s;
    s.steps = *stated;
    s.sources = {*stated_at};
    return s;
  }
  if (!b.epochs) return std::nullopt;
  if (!b.samples || !(b.batch || total_batch)) {
    if (!bars) return std::nullopt;
    StepBudget s;
    s.bar_batches = static_cast<double>(bars->total);
    s.bar_line = bars->line;
    s.epochs = b.epochs;
    s.steps = *s.bar_batches * *b.epochs;
    s.sources = {*epochs_at};
    return s;
  }
  if (total_batch) b.batch = total_batch, b.accumulation.reset(), accumulation_at.reset();
  b.steps = std::ceil(*b.samples / (*b.batch * b.accumulation.value_or(1))) * *b.epochs;
  for (const Source& at : {samples_at, batch_at, accumulation_at, epochs_at})
    if (at) b.sources.push_back(*at);
  return b;
}

// Whether the late losses (the last third of the kept series) sit well above
// the lowest the run held before them: a loss that rose away from its best.
// (A loss that ends at its lowest, after a spike within the last third, did
// not: the lowest is looked for before the late readings where they leave
// room for it.)
bool rose_from_lowest(const Trajectory& t) {
  constexpr double kRise = 1.3;
  std::vector<double> loss;
  for (const LossReading& r : t.series)
    if (std::isfinite(r.loss)) loss.push_back(r.loss);
  const std::size_t n = loss.size();
  if (n < 3) return false;
  // The lowest the loss held, as the median of a window an eighth of the
  // series wide (three readings at least): one low reading of a noisy
  // per-batch loss is no level it fell to.
  const std::size_t width = std::min(n, std::max<std::size_t>(3, n / 8));
  const std::size_t late_n = std::max<std::size_t>(1, n / 3);
  const std::size_t before = n - late_n >= width ? n - late_n : n;
  double lowest = INFINITY;
  for (std::size_t i = 0; i + width <= before; ++i)
    lowest = std::min(lowest, median(std::vector<double>(loss.begin() + static_cast<std::ptrdiff_t>(i),
                                                         loss.begin() + static_cast<std::ptrdiff_t>(i + width))));
  const double late = median(std::vector<double>(loss.end() - static_cast<std::ptrdiff_t>(late_n), loss.end()));
  return lowest > 0 && late >= kRise * lowest;
}

// Whether the log begins mid-run: its first reading is past the first epochs
// (a resumed run, or a piece of a longer log).
bool begins_mid_run(const Trajectory& t) { return t.first_epoch && *t.first_epoch >= 2; }

// Whether the run went on from where an earlier one stopped: a checkpoint
// loaded, step counters that go on from one, a log that begins past the
// first epochs. Its first reading is not the start of training.
bool went_on_from_checkpoint(const TrainingState& s, const Trajectory& t) {
  return s.resume_loaded || s.counters_continue || begins_mid_run(t);
}

// The outputs the loss is a cross-entropy over, where a plan line states
// them, and the late loss sits at ln k within 2%: the median of the last
// quarter of the kept readings, at least 4 of them.
std::optional<LossAtChance> loss_at_stated_chance(const RuleSet::Impl& rules,
                                                  const EvidenceTable& per_rule,
                                                  const Trajectory& t) {
  constexpr std::size_t kMinReadings = 4;
  constexpr double kTolerance = 0.02;
  std::vector<double> loss;
  for (const LossReading& r : t.series)
    if (std::isfinite(r.loss)) loss.push_back(r.loss);
  if (loss.size() < kMinReadings) return std::nullopt;
  const std::size_t n = std::max(kMinReadings, loss.size() / 4);
  std::vector<double> late(loss.end() - static_cast<std::ptrdiff_t>(n), loss.end());
  std::sort(late.begin(), late.end());
  const double median = (late[(n - 1) / 2] + late[n / 2]) / 2;
  for (unsigned i = 0; i < rules.rules.size(); ++i) {
    const RuleEvidence& e = per_rule[i];
    if (e.count == 0 || rules.rules[i].role != Role::plan) continue;
    for (const RecordedHit* hit : {&e.first, &e.last}) {
      const auto k = number(make_evidence(rules, i, e, *hit).values, "classes");
      if (!k || *k < 2) continue;
      const double chance = std::log(*k);
      if (std::fabs(median - chance) <= kTolerance * chance) return LossAtChance{*k, median, n, {i, hit}};
    }
  }
  return std::nullopt;
}

// Whether a loss that did not fall as a run's should is a problem. At a
// stated chance it always is. In a run that completed, a loss that merely
// fell less than expected is none (fine-tunes and resumed runs start near
// their floor); one that rose away from its lowest is. A log that does not
// show the end says the same where its loss fell below where it began (it
// may be a piece of a run, or one fold of several, each starting over); one
// whose loss did not fall at all from a fresh start is a problem. In a log
// that went on from a checkpoint and does not show the end, neither says
// anything: its start is not the run's.
bool no_decrease_is_a_problem(const TrainingState& s, const Trajectory& t) {
  if (s.loss_at_chance) return true;
  if (s.completed) return rose_from_lowest(t);
  if (went_on_from_checkpoint(s, t)) return false;
  return rose_from_lowest(t) || !fell_below_first(t);
}

// Whether a flat loss is a problem. At chance it always is: the model
// predicts nothing. Otherwise a run that went on from a checkpoint (one
// loaded, counters that go on, a log that begins past the first epochs) and
// completed sits at the floor it had reached: a converged or label-smoothed
// loss is flat too. A run that started from scratch and stayed flat learned
// nothing.
bool plateau_is_a_problem(const TrainingState& s, const Trajectory& t) {
  if (chance_classes(t) || s.loss_at_chance) return true;
  return !(s.completed && went_on_from_checkpoint(s, t));
}

// What the first reading's step says of a requested resume. A resumed run
// counts on from its checkpoint: its first step is at least the one the
// checkpoint's name carries, or many logging intervals past zero, or its
// first epoch is past the first ones. A fresh start reports its first step
// within an interval or two of zero.
void read_counters(TrainingState& s, const Trajectory& t) {
  if (begins_mid_run(t)) {
    s.counters_continue = true;
    return;
  }
  if (!t.first || !t.first->step_reported) return;
  const double first = static_cast<double>(t.first->step);
  if (s.requested_step && *s.requested_step > 0) {
    s.counters_continue = first >= *s.requested_step;
    s.counters_restart = !s.counters_continue;
    return;
  }
  if (first <= 1) {
    s.counters_restart = true;
    return;
  }
  if (t.readings < 3 || !t.last || !t.last->step_reported || t.last->step <= t.first->step) return;
  const double interval =
      static_cast<double>(t.last->step - t.first->step) / static_cast<double>(t.readings - 1);
  s.counters_continue = first > 3 * interval;
  s.counters_restart = first <= 2 * interval;
}

// Whether a completed run took too few steps to learn: no more than the
// card's handful, or few enough that an evaluation loss still at chance says
// training ended before it began to learn (a longer run that ends there has
// stalled: its loss shows that).
bool too_few_steps(const Taxonomy& taxonomy, const TrainingState& s) {
  constexpr double kFewStepsAtChance = 100;
  const ClassInfo* few = taxonomy.for_outcome(Outcome::too_few_steps);
  const std::optional<double> steps = steps_or_budget(s);
  if (!few || !s.completed || !steps) return false;
  return *steps <= *few->max_steps || (s.evaluation_at_chance && *steps <= kFewStepsAtChance);
}

// The problem the trajectory shows, the resume evidence, then the step count;
// an outcome no class carries is no problem this taxonomy can name. A
// requested resume is a problem when no checkpoint was loaded and the
// counters do not go on from one; a checkpoint counter back at zero is one
// whatever was requested.
Outcome training_problem(const Taxonomy& taxonomy, const TrainingState& s, const Trajectory& t) {
  Outcome o = Outcome::none;
  if (t.shape == TrajectoryShape::non_finite) o = Outcome::non_finite_loss;
  else if (s.counter_reset) o = Outcome::resume_without_load;
  else if (t.shape == TrajectoryShape::diverged) o = Outcome::diverging_loss;
  // A handful of steps leaves the loss where it began, at chance or flat:
  // the run was too short to say more than that, not stuck.
  else if ((t.shape == TrajectoryShape::plateau && plateau_is_a_problem(s, t)) ||
           (t.shape == TrajectoryShape::no_decrease && no_decrease_is_a_problem(s, t)))
    o = too_few_steps(taxonomy, s) ? Outcome::too_few_steps : Outcome::diverging_loss;
  else if (s.resume_requested && !s.resume_loaded && !s.counters_continue)
    o = Outcome::resume_without_load;
  else if (too_few_steps(taxonomy, s))
    o = Outcome::too_few_steps;
  return taxonomy.for_outcome(o) ? o : Outcome::none;
}

// Whether every kept reading reports its step and none a step before the
// reading ahead of it.
bool counts_up(const Trajectory& t) {
  for (std::size_t i = 0; i < t.series.size(); ++i)
    if (!t.series[i].step_reported || (i > 0 && t.series[i].step < t.series[i - 1].step)) return false;
  return !t.series.empty();
}

}  // namespace

bool fell_below_first(const Trajectory& t) {
  if (!t.first || t.series.size() < 4) return false;
  std::vector<double> late;
  for (std::size_t i = t.series.size() - t.series.size() / 4; i < t.series.size(); ++i) late.push_back(t.series[i].loss);
  return median(std::move(late)) < t.first->loss;
}

// Whether the run reached the length it planned: a milestone line that states
// its own total ("Step 5000/ 5000"), the last reading's segment whose step
// counter states its total and reached it ("step 19560/19560 | loss 3.25"),
// or one (or the trajectory's last step) that reaches the length a plan line
// stated ("max_epochs=100", "Total optimization steps = 2,000"), or the last
// reading's segment that gives the run under a minute left ("eta: 0:00:00"),
// or names the last epoch a plan line stated, or the last reading after the
// header of the last epoch ("Epoch 40/40", Keras) whose bar reached its count.
// Returns the line that shows it, or 0.
std::uint64_t reached_planned_length(const RuleSet::Impl& rules, const EvidenceTable& per_rule, const Trajectory& t,
                                     const std::optional<StatedCount>& c) {
  std::optional<double> planned_epochs, planned_steps, reached_epochs, reached_steps;
  std::uint64_t epochs_line = 0, steps_line = 0, stated_line = 0, last_epoch_began = 0;
  for (unsigned i = 0; i < rules.rules.size(); ++i) {
    const Role role = rules.rules[i].role;
    const RuleEvidence& e = per_rule[i];
    if (e.count == 0 || (role != Role::plan && role != Role::milestone)) continue;
    const Evidence ev = make_evidence(rules, i, e, e.count > 1 ? e.last : e.first);
    auto epochs = number(ev.values, "epochs"), steps = number(ev.values, "steps");
    if (role == Role::plan) {
      if (epochs) planned_epochs = epochs;
      if (steps) planned_steps = steps;
      continue;
    }
    if (epochs && (!reached_epochs || *epochs >= *reached_epochs)) reached_epochs = epochs, epochs_line = ev.line;
    if (steps && (!reached_steps || *steps >= *reached_steps)) reached_steps = steps, steps_line = ev.line;
    const auto of = number(ev.values, "of");
    if (of && *of > 0 && (epochs.value_or(0) >= *of || steps.value_or(0) >= *of))
      stated_line = std::max(stated_line, ev.line);
    if (const auto began = number(ev.values, "began"); began && of && *of > 0 && *began >= *of)
      last_epoch_began = ev.line;
  }
  if (t.max_step && (!reached_steps || static_cast<double>(*t.max_step) > *reached_steps)) {
    reached_steps = static_cast<double>(*t.max_step);
    steps_line = t.last ? t.last->line : 0;
  }
  std::uint64_t line = stated_line;
  // A step counter that went back counts one epoch's batches, not the run's
  // steps: it ends the run only with the epoch counter beside it.
  if (c && t.last) {
    const bool steps_done = c->total && *c->total >= 2 && *c->step >= *c->total;
    const bool run_done = steps_done && counts_up(t) && t.max_step && static_cast<double>(*t.max_step) <= *c->step;
    const bool last_epoch_done = c->epochs && *c->epoch >= *c->epochs && (c->total ? steps_done : *c->epochs >= 2);
    // The run's own estimate of the time it had left: within one logging
    // period of the end (detectron2 logs every 20 iterations, the last at
    // its 0-based `iter: 3999` of 4000). Not at the first reading, whose
    // estimate rests on no step time yet (PaddleDetection's `iter: 0` reads
    // `eta: 0:00:00`).
    constexpr double kEndingEta = 60;
    const bool nothing_left = c->eta_seconds && *c->eta_seconds <= kEndingEta && t.readings >= 2;
    if (run_done || last_epoch_done || nothing_left) line = std::max(line, t.last->line);
    // The last reading names the last planned epoch: counted from 0 where the
    // first reading named epoch 0 ("epoch: 19 done" of 20), else from 1; and
    // states no count within it short of its total ("Epoch [3][400/500]").
    const bool inside_epoch = c->total && *c->step < *c->total;
    // The last epoch began, and its bar after that header reached its count.
    if (last_epoch_began && t.last->line > last_epoch_began && c->total && !inside_epoch)
      line = std::max(line, t.last->line);
    if (planned_epochs && c->epoch_named && !inside_epoch && t.first_epoch && *t.first_epoch == std::floor(*t.first_epoch) &&
        *c->epoch_named + (*t.first_epoch == 0 ? 1 : 0) >= *planned_epochs && *planned_epochs >= 1)
      line = std::max(line, t.last->line);
  }
  if (planned_epochs && reached_epochs && *reached_epochs >= *planned_epochs) line = std::max(line, epochs_line);
  if (planned_steps && reached_steps && *reached_steps >= *planned_steps) line = std::max(line, steps_line);
  return line;
}

TrainingState read_training(const RuleSet::Impl& rules, const EvidenceTable& per_rule,
                            const Trajectory& trajectory,
                            const std::optional<CounterReset>& counter_reset,
                            const std::optional<EpochBars>& bars, const std::optional<StatedCount>& last_count,
                            std::optional<int> exit_code) {
  TrainingState s;
  s.counter_reset = counter_reset;
  for (unsigned i = 0; i < rules.rules.size(); ++i) {
    const RuleEvidence& e = per_rule[i];
    if (e.count == 0) continue;
    switch (rules.rules[i].role) {
      case Role::completion:
        s.completed = true;
        s.completion_line = std::max(s.completion_line, e.count > 1 ? e.last.line : e.first.line);
        break;
      case Role::resume: s.resume_loaded = true; break;
      case Role::resume_request:
        s.resume_requested = true;
        if (s.resume_request_rule < 0) {
          s.resume_request_rule = static_cast<int>(i);
          s.requested_step = number(make_evidence(rules, i, e, e.first).values, "step");
        }
        break;
      default: break;
    }
  }
  // The run reached the length it planned: evidence of its end, even where no
  // line announces it.
  if (!s.completed) {
    if (const std::uint64_t line = reached_planned_length(rules, per_rule, trajectory, last_count)) {
      s.completed = true;
      s.completion_line = line;
    }
  }
  // The process ended by itself after training progressed: that is the end of
  // the run, even where no line announces it.
  if (!s.completed && exit_code == 0 && trajectory.last) {
    s.completed = true;
    s.completion_line = trajectory.last->line;
  }
  read_counters(s, trajectory);
  s.steps = steps_taken(rules, per_rule, trajectory);
  // Where no line reports a step, the epoch bars' counts are the batches run,
  // when the log shows the first epoch's (a piece of a longer log does not
  // show all of them). Accumulated batches make fewer steps: an upper bound.
  if (!s.steps && bars && bars->first_epoch <= 1) {
    s.steps = static_cast<double>(bars->batches());
    s.steps_are_batches = true;
  }
  s.budget = read_budget(rules, per_rule, bars);
  s.evaluation_at_chance = evaluation_at_chance(trajectory.evaluation);
  s.loss_at_chance = loss_at_stated_chance(rules, per_rule, trajectory);
  s.problem = training_problem(rules.taxonomy, s, trajectory);
  return s;
}

std::optional<double> steps_or_budget(const TrainingState& s) {
  if (s.steps) return s.steps;
  if (s.budget) return s.budget->steps;
  return std::nullopt;
}

std::size_t readings_after(const Trajectory& t, std::uint64_t line) {
  return static_cast<std::size_t>(std::count_if(t.series.begin(), t.series.end(), [&](const LossReading& r) {
    return r.line > line && std::isfinite(r.loss);
  }));
}

}  // namespace gpudiag::detail
