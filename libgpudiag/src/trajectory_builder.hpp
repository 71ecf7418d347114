#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "gpudiag/diagnosis.hpp"
#include "match_sink.hpp"
#include "rule_set_impl.hpp"

namespace gpudiag::detail {

// What one progress line (or one carriage-return segment of it) reports.
struct ProgressReading {
  std::optional<double> step;
  std::optional<double> epoch;
  std::optional<double> loss;
  std::optional<double> evaluation_loss;
  std::optional<double> step_seconds;  // the time of one step, where the line states it
  std::optional<double> grad_norm, learning_rate, loss_scale;
  std::optional<double> items_per_second;  // tokens, samples, examples, images per second
  // The count and total of a bar over one epoch's batches ("Epoch 3: 45%|...|
  // 9/20 [...]"), when the line is one.
  std::optional<std::uint64_t> bar_position, bar_total;
  bool grad_non_finite = false;
  bool reward = false;  // the segment reports a reward (`reward`, `reward_std`): an online RL trainer's
};

// The bars over each epoch's batches that the followed rank drew, as
// Lightning and many loops draw them: the batches run, summed over the
// epochs, and the batches one epoch holds.
struct EpochBars {
  double first_epoch = 0, epoch = 0;  // the first bar's epoch and the last's
  std::uint64_t finished = 0;         // the batches of the epochs before the last
  std::uint64_t position = 0, total = 0;  // the last epoch's bar
  std::uint64_t line = 0;                 // its last line
  std::uint64_t batches() const { return finished + position; }
};

// Reads the training loss, the evaluation loss, the step, the gradient norm,
// the learning rate, the loss scale and the step time out of one line segment. Validation and evaluation losses are not the
// training loss: they are read apart.
// `tag`, where not 0, names the segment's layout (segments of one tag differ
// only in their digits): it spares comparing the segment with the layouts
// read lately.
ProgressReading parse_progress(std::string_view segment, std::uint64_t tag = 0);

// The counters one segment of a progress line (a redraw) states with their
// totals: its step and the total beside it ("step 19560/19560", "iter:
// 80000/80000", "iteration 10/ 500000", tqdm's "| 50/50 [", Keras's bar
// "313/313 [" at its start), its epoch and
// the epochs ("Epoch[100/100]", "epoch 3/10"), the time it says the run has
// left ("eta: 0:00:00", detectron2's, mmcv's: on a segment that names no
// epoch, where an ETA is the run's, not an epoch's as torchvision's
// MetricLogger prints it); none where it states none of them.
struct StatedCount {
  std::optional<double> step, total;
  std::optional<double> epoch, epochs;
  std::optional<double> eta_seconds;
  // The epoch a number behind the epoch key names, with or without a total
  // ("epoch: 19 done", "Epoch [30] done!"): a whole number.
  std::optional<double> epoch_named;
};
std::optional<StatedCount> stated_count(std::string_view segment);

// The median of `v` (not empty).
double median(std::vector<double> v);

// The k of a loss stuck at chance: the last readings (at least 4, the last
// quarter of a longer series) all sit within 0.1% of ln k, the cross-entropy
// of a uniform guess over k classes, for a k from 2 to 100 (beyond that the
// logarithms lie too close together to tell apart). None otherwise.
std::optional<int> chance_classes(const Trajectory& t);

// What each column of a table holds, as its header names it: fastai's
// `epoch  train_loss  valid_loss  accuracy  time`, HF Trainer's notebook table
// `Step	Training Loss	Validation Loss`. Its rows follow as bare numbers.
enum class Column { other, step, epoch, training_loss, evaluation_loss };

// The columns a header line names, when it is one: no cell a number, one a
// step or an epoch, one a loss. Empty otherwise.
std::vector<Column> read_header(std::string_view segment);

// One row of numbers under that header, read as a progress line would be;
// nothing where its cells do not line up with the header's.
ProgressReading read_row(std::string_view segment, const std::vector<Column>& columns);

// A loss that rose for good above its running minimum: the lowest median of a
// window an eighth of the series wide before the last quarter, and the
// median of the last quarter (from the reading `late_from`), 3x or more that.
struct RunningMinimumRise {
  double minimum = 0, late = 0;
  LossReading late_from;
};
std::optional<RunningMinimumRise> rose_above_running_minimum(const std::vector<LossReading>& series);

// The step time of the followed rank late in the run against early in it,
// where it changed enough to slow the run: it jumped several times over
// (`collapse`: throughput collapsed mid-run) or rose steadily.
struct StepTimeChange {
  bool collapse = false;
  double early = 0, late = 0;  // seconds per step, medians of the two windows
  std::uint64_t early_from = 0, early_to = 0, late_from = 0, late_to = 0;  // their lines
  std::uint64_t readings = 0;  // step times read
};

// The k of an evaluation loss that ended at chance: its last reading within
// 0.5% of ln k for k from 2 to 5. A single evaluation is noisier than a
// training series, and past 5 classes the logarithms lie too close together
// for that tolerance. None otherwise.
std::optional<int> evaluation_at_chance(const Series& e);

// Builds the loss trajectory from the lines that progress rules flag. Memory
// is bounded: past `capacity` readings every other kept reading is dropped and
// the sampling stride doubles, so the series stays evenly spread over the run.
//
// It also filters: progress rules only say that a line mentions the loss,
// so a progress hit goes on to the evidence only when the line holds a
// reading of the rank being followed (see take()).
class TrajectoryBuilder : public MatchSink {
 public:
  // `skim`: count the segments that change nothing but counts without
  // reading them (see Skims); off, every segment is read (the reference the
  // tests compare it with).
  explicit TrajectoryBuilder(const RuleSet::Impl& rules, std::size_t capacity = 512, bool skim = true);
  ~TrajectoryBuilder() override;
  TrajectoryBuilder(const TrajectoryBuilder&) = delete;
  TrajectoryBuilder& operator=(const TrajectoryBuilder&) = delete;
  void on_hit(const LineHit& hit) override;
  // The role of the hits it reads (a stream hands it only those).
  static bool reads(Role role) { return role == Role::progress; }
  // Reads a progress hit: whether it goes on (its line held a reading of
  // the rank followed). Two progress rules matching one line still make one
  // set of readings.
  bool take(const LineHit& hit) {
    if (hit.line != last_line_) {
      last_line_ = hit.line;
      last_line_read_ = add_line(hit.full, hit.line, hit.layout);
    }
    return last_line_read_;
  }
  // Whether the line held a training-loss reading of the rank being followed.
  // `layout`: LineHit::layout, where known. The text stays valid until
  // keep_texts() is called, as a scanned piece does.
  bool add_line(std::string_view text, std::uint64_t line, std::uint64_t layout = 0);
  Trajectory finish();  // the series with its shape
  // The counters the segment of the last training-loss reading states.
  std::optional<StatedCount> last_count() const;
  // Reads the segments counted unread whose readings are a series' last,
  // and copies the last reading's segment: until then they are views of the
  // scanned piece. Call it before the bytes that were scanned change.
  void keep_texts();
  std::uint64_t readings() const { return t_.readings; }  // so far
  std::uint64_t skimmed() const;  // of them, counted without being read
  std::optional<StepTimeChange> step_time_change() const;
  const std::optional<EpochBars>& epoch_bars() const { return bars_; }

 private:
  // The line's rank and body (past its prefixes), and whether the body may
  // hold a carriage return (false where its layout, known, holds none): false
  // for a line of a rank other than the one followed.
  bool read_tags(std::string_view text, std::uint64_t layout, std::optional<int>& rank, std::string_view& body,
                 bool& may_redraw);
  // read_tags() through the line model, keeping the layout's shape.
  bool read_tags_by_model(std::string_view text, std::uint64_t layout, std::optional<int>& rank,
                          std::string_view& body, bool& may_redraw);
  void add(const ProgressReading& r, std::uint64_t line);
  void add_evaluation(const ProgressReading& r, std::uint64_t line);
  void add_bar(double epoch, std::uint64_t position, std::uint64_t total, std::uint64_t line);
  // One value of a series, at the step and line of `at`.
  void add_value(Series& s, std::size_t& stride, double value, std::uint64_t step, bool step_reported,
                 std::uint64_t line) const;
  template <class R>
  void keep_evenly(std::vector<R>& series, std::size_t& stride, std::uint64_t ordinal, const R& x) const;
  Trajectory shaped() const;

  // Where the line model found the rank and the body of a line of a layout
  // lately read (the model is blind to digits: every line of one layout has
  // them in the same places), so that a progress line of a known layout is
  // not read through its prefixes again.
  struct LineShape {
    std::uint64_t layout = 0;
    bool launcher_rank = false, tag_rank = false;
    std::uint32_t launcher_rank_at = 0, launcher_rank_size = 0, tag_rank_at = 0, tag_rank_size = 0;
    std::uint32_t body_at = 0, body_size = 0;
    bool redraws = false;  // the body holds a carriage return
  };
  // By layout number, one place each (a mix of a few kinds of progress
  // lines, their digit counts varying, holds more layouts than the four
  // kept in turn before, and one of seven lines went through the model).
  static constexpr unsigned kShapeBits = 6;
  std::array<LineShape, std::size_t{1} << kShapeBits> shapes_;
  LineShape& shape_of(std::uint64_t layout) {
    return shapes_[(layout * 0x9E3779B97F4A7C15ull) >> (64 - kShapeBits)];
  }

  const RuleSet::Impl& rules_;
  std::size_t capacity_;
  std::size_t stride_ = 1, evaluation_stride_ = 1, grad_norm_stride_ = 1, learning_rate_stride_ = 1,
              loss_scale_stride_ = 1, step_time_stride_ = 1, throughput_stride_ = 1;
  std::vector<Column> columns_;  // the last table header's, while its rows follow
  bool rank_chosen_ = false;
  std::optional<int> rank_;
  Trajectory t_;
  std::optional<EpochBars> bars_;
  std::uint64_t finite_ = 0;
  bool last_grad_non_finite_ = false;
  bool rewarded_ = false;  // a reading's line reported a reward
  std::string_view last_segment_;  // of the last reading: a view of the piece until keep_texts()
  std::string last_segment_copy_;
  bool last_segment_kept_ = true;
  std::uint64_t last_line_ = 0;
  bool last_line_read_ = false;  // whether last_line_ held a reading

  // Most progress segments of a long run change no series' first, last,
  // lowest or highest reading and fall between the readings a series keeps:
  // those are counted, their numbers compared as text with the ones their
  // layout gave before, and read only if their readings are a series' last
  // when the piece ends (see the .cpp).
  struct Skims;
  std::unique_ptr<Skims> skims_;
};

}  // namespace gpudiag::detail
