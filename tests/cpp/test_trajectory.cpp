#include <algorithm>
#include <numeric>
#include <cmath>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <deque>
#include <string>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "test_util.hpp"
#include "trajectory_builder.hpp"

using namespace gpudiag;
using namespace gpudiag::testing;
using detail::parse_progress;

namespace {

std::string plain_run(int steps, double (*loss)(int), int every = 10) {
  std::string log;
  for (int s = 1; s <= steps; s += (s == 1 ? every - 1 : every))
    log += "step " + std::to_string(s) + " loss " + std::to_string(loss(s)) + "\n";
  return log;
}

// Feeds lines to a builder as a stream feeds a piece's lines: their bytes
// stay until keep_texts(), called every `piece` lines and at the end.
class Pieces {
 public:
  Pieces(detail::TrajectoryBuilder& b, std::size_t piece) : b_(b), piece_(piece) {}
  void add(std::string text, std::uint64_t line, std::uint64_t layout = 0) {
    lines_.push_back(std::move(text));
    b_.add_line(lines_.back(), line, layout);
    if (lines_.size() >= piece_) end_piece();
  }
  void end_piece() {
    b_.keep_texts();
    lines_.clear();
  }
  void set_piece(std::size_t piece) { piece_ = piece; }

 private:
  detail::TrajectoryBuilder& b_;
  std::size_t piece_;
  std::deque<std::string> lines_;  // their addresses stay as lines are added
};

}  // namespace

TEST(Progress, ReadsEveryFrameworksLossLine) {
  struct Case {
    const char* line;
    double step, loss;
  } cases[] = {
      {"step 20 loss 6.6581", 20, 6.6581},
      {"iter 10/200 | loss 72130.21094 | lr 2.00e+00", 10, 72130.21094},
      {"[train] epoch=0 step=10 loss=1170728.0000 lr=4", 10, 1170728.0},
      {"{\"step\": 20, \"epoch\": 0, \"loss\": 9.4071, \"lr\": 0.0}", 20, 9.4071},
      {" [2026-08-11 12:40:52] iteration       10/  500000 | consumed samples:  5120 | lm loss: "
       "1.009469E+01 | loss scale: 1.0 | grad norm: 1.335 |",
       10, 10.09469},
      {"step 40 | loss 5.8342 | lr 6.00e-05 | 206.3 TFLOP/s", 40, 5.8342},
      // Qualified keys that name a training step's loss, on a line with its step.
      {"step:1375/1393 train_loss:3.2820 train_time:177070ms step_avg:129.72ms", 1375, 3.282},
      {"iter: 19  total_loss: 1.834  loss_cls: 0.69  loss_box_reg: 0.12  lr: 0.000399", 19, 1.834},
      {"Training Iteration: 120  step_loss : 1.0703125  learning_rate : 0.00316", 120, 1.0703125},
      // A bracketed counter.
      {"  === Epoch:[  0/120],step:[ 10/197],img_size:[416],total_loss:1777.3824|loss_ciou:2.1019|lr:0.0000", 10,
       1777.3824},
  };
  for (const auto& c : cases) {
    auto r = parse_progress(c.line);
    ASSERT_TRUE(r.loss) << c.line;
    EXPECT_DOUBLE_EQ(*r.loss, c.loss) << c.line;
    ASSERT_TRUE(r.step) << c.line;
    EXPECT_EQ(*r.step, c.step) << c.line;
  }
  // An epoch's counter with its total makes a qualified key a reading, as a
  // step does; alone, the key is a run's summary.
  auto epoch_line = parse_progress("epoch=0/250,total_loss=1.870129, 1 epoch time=61.985902, left time=4.304577");
  ASSERT_TRUE(epoch_line.loss);
  EXPECT_DOUBLE_EQ(*epoch_line.loss, 1.870129);
  EXPECT_FALSE(parse_progress("epoch=0,total_loss=1.870129").loss);
  // An epoch's summary reads its average loss, where it states no other; a
  // step's running average is no reading.
  auto average = parse_progress("INFO:root:Epoch 3 - Average Loss: 4.1080, Average Accuracy: 0.0444, Samples: 1013");
  ASSERT_TRUE(average.loss);
  EXPECT_DOUBLE_EQ(*average.loss, 4.108);
  EXPECT_FALSE(parse_progress("Epoch 3 step 120 avg loss: 4.1080").loss);
  auto both = parse_progress("Epoch 3 - loss: 3.9, avg loss: 4.1080");
  ASSERT_TRUE(both.loss);
  EXPECT_DOUBLE_EQ(*both.loss, 3.9);
  // The best loss so far is a record, however its key reads: inf is its start.
  EXPECT_FALSE(parse_progress("{'best_train_loss': inf, 'best_valid_loss': inf, 'model_warm_step': 700}").loss);
  EXPECT_FALSE(parse_progress("step 300 | min_train_loss 0.52").loss);
  EXPECT_EQ(parse_progress("step 300 | train_loss 0.61 | best_train_loss 0.52").loss, 0.61);
  // HF Trainer's dict (quoted values in recent versions), a Lightning bar and
  // a Keras line carry no step number.
  auto hf = parse_progress("{'loss': '4.689', 'grad_norm': '1.394', 'learning_rate': '0.001867'}");
  ASSERT_TRUE(hf.loss);
  EXPECT_DOUBLE_EQ(*hf.loss, 4.689);
  auto bar = parse_progress("Epoch 0:  8%|8  | 5/64 [00:00<00:02, 22.76it/s, v_num=0, train_loss=9.33e+6]");
  ASSERT_TRUE(bar.loss);
  EXPECT_DOUBLE_EQ(*bar.loss, 9.33e6);
  // The epoch a line states, in the forms frameworks print it.
  EXPECT_EQ(parse_progress("Epoch: [15][ 1/32]\tTime 67.5 (68.6)\tLoss 1.3906 (1.3309)").epoch, 15.0);
  EXPECT_EQ(parse_progress("{'loss': 0.5, 'learning_rate': 1e-05, 'epoch': 2.5}").epoch, 2.5);
  EXPECT_FALSE(parse_progress("step 10 loss 0.5 (3 epochs planned)").epoch);
  auto keras = parse_progress("100/1875 ━━━━━━━━━━━━━━━━━━━━ 45s 39ms/step - loss: 2.2000");
  ASSERT_TRUE(keras.loss);
  EXPECT_DOUBLE_EQ(*keras.loss, 2.2);
}

// The keyword sites of a line, and the plan of its parse, are kept for later
// lines that differ from it only in their digits (one format string, other
// numbers). Every example line of the shipped rules, and copies of it with
// other digits, must read the same whether a copy follows its original (sites
// reused, the parse replayed where its numbers answer alike) or is read first
// on a fresh thread (nothing kept).
TEST(Progress, LinesOfOneLayoutReadAsIfEachWereReadAlone) {
  auto same = [](const std::optional<double>& a, const std::optional<double>& b) {
    return a.has_value() == b.has_value() && (!a || *a == *b || (std::isnan(*a) && std::isnan(*b)));
  };
  auto alike = [&](const detail::ProgressReading& a, const detail::ProgressReading& b) {
    return same(a.step, b.step) && same(a.epoch, b.epoch) && same(a.loss, b.loss) &&
           same(a.evaluation_loss, b.evaluation_loss) && same(a.step_seconds, b.step_seconds) &&
           same(a.grad_norm, b.grad_norm) && same(a.learning_rate, b.learning_rate) &&
           same(a.loss_scale, b.loss_scale) && same(a.items_per_second, b.items_per_second) &&
           a.bar_position == b.bar_position && a.bar_total == b.bar_total && a.grad_non_finite == b.grad_non_finite;
  };
  // Each example line with digits, then its copies.
  std::vector<std::string> lines;
  std::mt19937 rng(29);
  for (const Rule& rule : shipped_rules()->rules())
    for (const Example& e : rule.examples) {
      if (std::none_of(e.line.begin(), e.line.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
      std::string copy = e.line;
      for (char& c : copy)
        if (c >= '0' && c <= '9') c = static_cast<char>('0' + (c - '0' + 7) % 10);  // 0 -> 7, 3 -> 0
      lines.push_back(e.line);
      lines.push_back(std::move(copy));
      // Copies with other digits, read by the plan of their layout where each
      // number answers the parse's questions as the first one's did.
      for (int k = 0; k < 3; ++k) {
        std::string other = e.line;
        for (char& c : other)
          if (c >= '0' && c <= '9') c = static_cast<char>('0' + rng() % 10);
        lines.push_back(std::move(other));
      }
    }
  ASSERT_GT(lines.size(), 600u);
  // One length, two layouts that part only at their last key.
  lines.push_back("step 10 loss 2.5 | lr 0.01");
  lines.push_back("step 10 loss 2.5 | dt 0.01");
  // Lines of one layout whose numbers answer otherwise: a step that is not
  // whole, an epoch past 1e6, a rate of zero, a bar's total of zero, a NaN,
  // step times in ms, bare and per step.
  for (const char* line : {"step 10.0 loss 2.5 lr 0.1", "step 10.5 loss 2.5 lr 0.1", "step 00.0 loss 0.0 lr 0.0",
                           "epoch 1 loss 2.5", "epoch 9 loss 2.5", "epoch 1000000 loss 2.5", "epoch 9999999 loss 2.5",
                           "Epoch 3:  45%|####5     | 9/20 [00:03<00:04,  2.61it/s, loss=0.3]",
                           "Epoch 3:  45%|####5     | 9/00 [00:03<00:04,  0.00it/s, loss=0.3]",
                           "Epoch 3:  45%|####5     | 0/20 [00:03<00:04,  1.00it/s, loss=0.3]",
                           " 12/100 [00:03<00:04,  1.61s/it, loss=2.5]", " 12/100 [00:03<00:04,  0.00s/it, loss=2.5]",
                           "iteration 7 | elapsed time per iteration (ms): 425.0 | lm loss: 2.17E+00 | grad norm: 1.2",
                           "iteration 7 | elapsed time per iteration (ms): 404.5 | lm loss: 2.17E+00 | grad norm: 0.0",
                           "iteration 7 | elapsed time per iteration (ms): 404.5 | lm loss: 9.99E+99 | grad norm: 9.9",
                           "step 12 loss 2.5 dt: 51.25ms", "step 12 loss 2.5 dt: 00.00ms", "step 12 loss 2.5 dt: 51.25s",
                           "[2990] loss=0.5, lr=0.1", "[0000] loss=0.5, lr=0.1", "step 1 loss nan lr 0.1",
                           "step 1 loss inf lr 0.1", "{'loss': 2.5, 'grad_norm': nan, 'epoch': 0.0}",
                           "{'loss': 2.5, 'grad_norm': 1.5, 'epoch': 0.0}", "{'loss': 2.5, 'grad_norm': 1.5, 'epoch': 0.5}",
                           "tok/sec: 10130.34 step 3 loss 2.5", "tok/sec: 00000.00 step 3 loss 2.5"})
    lines.push_back(line);
  // Numbers of every form a replay reads by where its digits lie (and those
  // it reads as found): signs, a bare point, 19 digits and 20, mantissas past
  // 2^53, exponents of 1 to 4 digits within and past 1e+-22; each with
  // copies of other digits.
  for (const char* line : {"step 10 loss -1.5 lr +0.25", "step 10 loss -0.0 lr 0.1", "step 10 loss 5. lr .5",
                           "step 10 loss 1234567890123456789 lr 0.1", "step 10 loss 12345678901234567890 lr 0.1",
                           "step 10 loss 9007199254740993 lr 0.1", "step 10 loss 0.000000000000000001 lr 0.1",
                           "step 10 loss 2.5e-05 lr 1E+2", "step 10 loss 2.5e-30 lr 1E+25", "step 10 loss 2.5e100 lr 0.1",
                           "step 10 loss 2.5e-0300 lr 0.1", "step 10 loss 2.5e lr 0.1", "step 10 loss 3.1415926535897932 lr 0.1",
                           "Epoch 3:  45%|####5     | 1234567890123456789/9999999999999999999 [00:03<00:04,  2.61it/s, loss=0.3]",
                           "Epoch 3:  45%|####5     | 12345678901234567890/99999999999999999999 [00:03<00:04,  2.61it/s, loss=0.3]"}) {
    lines.push_back(line);
    for (int k = 0; k < 4; ++k) {
      std::string other = line;
      for (char& c : other)
        if (c >= '0' && c <= '9') c = static_cast<char>('0' + rng() % 10);
      lines.push_back(std::move(other));
    }
  }
  std::vector<detail::ProgressReading> alone(lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) std::thread([&] { alone[i] = parse_progress(lines[i]); }).join();
  // In file order (each copy right after its original), then by length, so
  // that lines of one length but another layout meet too.
  std::vector<std::size_t> order(lines.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::size_t> by_length = order;
  std::stable_sort(by_length.begin(), by_length.end(),
                   [&](std::size_t a, std::size_t b) { return lines[a].size() < lines[b].size(); });
  // A tag names a layout, as the scanner's layout number does for a line:
  // lines of one layout share it.
  auto tag = [](std::string line) {
    for (char& c : line)
      if (c >= '0' && c <= '9') c = '0';
    return std::hash<std::string>()(line) | 1;
  };
  std::size_t read = 0;
  for (const auto& sequence : {order, by_length})
    for (bool tagged : {false, true})
      for (std::size_t i : sequence) {
        const detail::ProgressReading r = parse_progress(lines[i], tagged ? tag(lines[i]) : 0);
        read += r.loss.has_value();
        EXPECT_TRUE(alike(r, alone[i])) << lines[i];
      }
  EXPECT_GT(read, 80u);
  // A tag's layout read again after the layouts kept were all replaced by
  // others of its length: read as itself.
  const std::string first = "step 10 loss 2.5 | lr 0.01";
  const detail::ProgressReading want = parse_progress(first);
  ASSERT_TRUE(want.learning_rate);
  parse_progress(first, tag(first));
  for (char k = 'a'; k <= 'p'; ++k) {
    const std::string other = std::string("step 10 loss 2.5 | k") + k + " 0.01";
    parse_progress(other, tag(other));
  }
  EXPECT_TRUE(alike(parse_progress("step 11 loss 2.7 | lr 0.02", tag(first)), parse_progress("step 11 loss 2.7 | lr 0.02")));
}

TEST(Progress, FindsKeysWhereverTheyFallInTheLine) {
  // Keys are found sixteen bytes at a time by their first two letters: a key
  // across a block's edge, in the last bytes of a line or in capitals is
  // found as anywhere else.
  const std::string line = "Step 12 | LOSS 3.5 | Grad_Norm 2.25 | lr 0.1 | 0.5s/it | eval";
  for (std::size_t pad = 0; pad < 40; ++pad) {
    const std::string s = std::string(pad, '#') + " " + line;
    auto r = parse_progress(s);
    ASSERT_TRUE(r.loss) << pad;
    EXPECT_DOUBLE_EQ(*r.loss, 3.5) << pad;
    EXPECT_EQ(r.step, 12.0) << pad;
    EXPECT_EQ(r.grad_norm, 2.25) << pad;
    EXPECT_EQ(r.learning_rate, 0.1) << pad;
    EXPECT_EQ(r.step_seconds, 0.5) << pad;
  }
  // The shortest lines, read byte by byte.
  EXPECT_EQ(parse_progress("loss 2").loss, 2.0);
  EXPECT_EQ(parse_progress("Loss:1").loss, 1.0);
}

TEST(Progress, SkipsWhatIsNotTheTrainingLoss) {
  EXPECT_FALSE(parse_progress("epoch 3 val_loss 0.41").loss);
  EXPECT_FALSE(parse_progress("step 3 | eval loss: 0.41").loss);
  EXPECT_FALSE(parse_progress("iteration 7 | loss scale: 65536.0").loss);
  EXPECT_FALSE(parse_progress("`loss_type=None` was set in the config").loss);
  // A run's average printed at the end is not a reading of its last step.
  EXPECT_FALSE(parse_progress("{'train_runtime': '12.23', 'train_steps_per_second': '2.454', "
                              "'train_loss': '4.507', 'epoch': '1.875'}").loss);
  EXPECT_FALSE(parse_progress("train_loss=4.5072").loss);
  // Code quoted in a traceback mentions the loss without reporting one.
  EXPECT_FALSE(parse_progress("    loss.backward()").loss);
  EXPECT_FALSE(parse_progress("    loss = criterion(logits, labels)").loss);
  auto nan = parse_progress("step 120 loss nan");
  ASSERT_TRUE(nan.loss);
  EXPECT_TRUE(std::isnan(*nan.loss));
  EXPECT_TRUE(parse_progress("{'loss': '0', 'grad_norm': 'nan'}").grad_non_finite);
  // A running average is not a reading; one that is NaN says a step's loss was.
  EXPECT_FALSE(parse_progress("Epoch 1, Step 125, avg_loss: 0.022").loss);
  // A part of the loss is no reading of it; NaN in a part is NaN in the loss.
  EXPECT_FALSE(parse_progress("iter: 100 loss_cls: 0.5 loss_box_reg: 0.2").loss);
  auto part = parse_progress("train iter: 100 loss_net: nan loss_scale: 785.4200");
  ASSERT_TRUE(part.loss);
  EXPECT_TRUE(std::isnan(*part.loss));
  EXPECT_FALSE(parse_progress("iteration 7 | loss_scale: nan").loss);
  auto average = parse_progress("Training Iteration: 2933  average_loss : nan  step_loss : 1.0703125");
  ASSERT_TRUE(average.loss);
  EXPECT_TRUE(std::isnan(*average.loss));
}

TEST(Trajectory, MemoryStaysBoundedAndExtremesStayExact) {
  auto rules = RuleSet::builtin(CacheOptions{false, {}});
  detail::TrajectoryBuilder b(rules->impl(), 512);
  Pieces pieces(b, 1000);
  const int n = 200000;
  for (int s = 1; s <= n; ++s)
    pieces.add("step " + std::to_string(s) + " loss " + std::to_string(s == 777 ? 99.0 : 10.0 / s),
               static_cast<std::uint64_t>(s));
  pieces.end_piece();
  Trajectory t = b.finish();
  EXPECT_EQ(t.readings, static_cast<std::uint64_t>(n));
  EXPECT_LE(t.series.size(), 512u + 5);  // the landmarks beside the even points
  EXPECT_GE(t.series.size(), 256u);
  EXPECT_EQ(t.first->step, 1);
  EXPECT_EQ(t.last->step, n);
  EXPECT_EQ(t.peak->step, 777);  // kept exactly
  EXPECT_EQ(t.max_step, n);
  // Evenly spread: the kept steps are one stride apart, but for the peak, the
  // lowest and the last reading, which the series shows wherever they fell.
  const std::uint64_t landmarks[] = {777, t.lowest->step, static_cast<std::uint64_t>(n)};
  std::vector<std::uint64_t> even;
  std::size_t shown = 0;
  for (const auto& r : t.series) {
    const bool landmark = std::find(std::begin(landmarks), std::end(landmarks), r.step) != std::end(landmarks);
    shown += landmark;
    if (!landmark) even.push_back(r.step);
  }
  EXPECT_EQ(shown, 3u);
  const std::uint64_t stride = even[1] - even[0];
  EXPECT_GT(stride, 256u);
  for (std::size_t i = 1; i < even.size(); ++i) EXPECT_EQ(even[i] - even[i - 1], stride);
  for (std::size_t i = 1; i < t.series.size(); ++i) EXPECT_LT(t.series[i - 1].step, t.series[i].step);
}

TEST(Trajectory, NonFiniteReadingsKeepTheirPlaceInTheSeries) {
  // 6 finite readings, then 15 NaN: the series shows all 21, at their steps.
  std::string log;
  for (int s = 1; s <= 21; ++s) log += "step " + std::to_string(s) + " loss " + (s > 6 ? "nan" : std::to_string(3.0 - s / 10.0)) + "\n";
  const Trajectory t = diagnose_text(log, std::nullopt).trajectory;
  ASSERT_EQ(t.readings, 21u);
  ASSERT_EQ(t.series.size(), 21u);
  for (std::size_t i = 0; i < t.series.size(); ++i) {
    EXPECT_EQ(t.series[i].step, i + 1);
    EXPECT_EQ(std::isnan(t.series[i].loss), i >= 6);
  }
  EXPECT_EQ(t.shape, TrajectoryShape::non_finite);
  // Past the capacity, a NaN stretch still shows as NaN points, and the first
  // non-finite reading is shown wherever the stride fell.
  auto rules = RuleSet::builtin(CacheOptions{false, {}});
  detail::TrajectoryBuilder b(rules->impl(), 64);
  Pieces pieces(b, 1000);
  for (int s = 1; s <= 10000; ++s)
    pieces.add("step " + std::to_string(s) + " loss " + (s >= 9001 ? "inf" : s == 4321 ? "nan" : std::to_string(5.0 - s / 5000.0)),
               static_cast<std::uint64_t>(s));
  pieces.end_piece();
  const Trajectory big = b.finish();
  EXPECT_LE(big.series.size(), 64u + 5);
  const auto shown = [&](std::uint64_t step) {
    return std::any_of(big.series.begin(), big.series.end(), [&](const LossReading& r) { return r.step == step; });
  };
  EXPECT_TRUE(shown(4321) && shown(1) && shown(10000) && shown(9000));  // first NaN, first, last, lowest
  EXPECT_TRUE(std::isinf(big.series.back().loss));
  EXPECT_GE(std::count_if(big.series.begin(), big.series.end(), [](const LossReading& r) { return std::isinf(r.loss); }), 5);
}

TEST(Trajectory, FollowsOneRankOnly) {
  std::string log;
  for (int s = 1; s <= 100; s += 10) {
    log += "[default0]:step " + std::to_string(s) + " loss " + std::to_string(5.0 / s) + "\n";
    log += "[default1]:step " + std::to_string(s) + " loss " + std::to_string(50.0 * s) + "\n";
  }
  Diagnosis d = diagnose_text(log + "[default0]:training complete\n");
  EXPECT_EQ(d.trajectory.rank, 0);
  EXPECT_EQ(d.trajectory.readings, 10u);
  EXPECT_EQ(d.trajectory.shape, TrajectoryShape::decreasing);
  EXPECT_EQ(d.cls, "healthy");
}

// A progress bar redraws one line with carriage returns: each redraw is a
// reading, behind a rank tag too.
TEST(Trajectory, ReadsEveryRedrawOfAProgressBar) {
  Diagnosis d = diagnose_text("[rank0]: step 1 loss 2.0\r step 2 loss 1.9\r step 3 loss 1.8\r step 4 loss 1.7\n");
  EXPECT_EQ(d.trajectory.readings, 4u);
  EXPECT_EQ(d.trajectory.last->step, 4u);
}

TEST(TrainingCorrectness, HealthyNeedsALossThatFell) {
  Diagnosis d = diagnose_text(plain_run(200, [](int s) { return 8.0 / s; }) + "training complete\n", 0);
  EXPECT_EQ(d.cls, "healthy");
  EXPECT_EQ(d.trajectory.shape, TrajectoryShape::decreasing);
  bool says_fell = false;
  for (const auto& s : d.verdict.shows) says_fell |= s.find("the loss fell from 8") != std::string::npos;
  EXPECT_TRUE(says_fell);
  // Completed, but nothing shows training: healthy, and the verdict says what it cannot know.
  Diagnosis bare = diagnose_text("training complete\n", 0);
  EXPECT_EQ(bare.cls, "healthy");
  bool unverifiable = false;
  for (const auto& s : bare.verdict.cannot_decide)
    unverifiable |= s.find("no loss trajectory") != std::string::npos;
  EXPECT_TRUE(unverifiable);
}

TEST(TrainingCorrectness, DivergencePlateauAndNoDecrease) {
  auto spike = diagnose_text(plain_run(200, [](int s) { return s < 30 ? 8.0 : 300.0 / (s - 28); }) +
                             "training complete\n");
  EXPECT_EQ(spike.cls, "loss_divergence");
  EXPECT_EQ(spike.trajectory.shape, TrajectoryShape::diverged);
  EXPECT_EQ(spike.g15, "nan_loss");

  auto flat = diagnose_text(plain_run(200, [](int s) { return 4.70 + 0.01 * (s % 3); }) +
                            "training complete\n");
  EXPECT_EQ(flat.trajectory.shape, TrajectoryShape::plateau);
  EXPECT_EQ(flat.cls, "loss_divergence");

  // lr = 0: the batches differ, so the loss wanders, but it never trends down.
  // While the run is going, a loss that never fell below where it began is a
  // problem; one that ended below it, if less than a run's should, is none
  // until the log shows more (a piece of a longer log, one fold of several,
  // each starting over, look so). Once it completed, a loss that only fell
  // little is what a fine-tune near its floor looks like too, so only a rise
  // away from the lowest loss (see below) is.
  const std::string flat_wander = plain_run(300, [](int s) { return 8.75 - 1.5 * std::sin(s * 0.7); });
  auto wander = diagnose_text(flat_wander);
  EXPECT_EQ(wander.trajectory.shape, TrajectoryShape::no_decrease);
  EXPECT_EQ(wander.cls, "loss_divergence");
  const std::string wandering =
      plain_run(300, [](int s) { return 8.75 - 1.5 * std::sin(s * 0.7) - (s > 100 ? 1.0 : 0.0); });
  auto wander_lower = diagnose_text(wandering);
  EXPECT_EQ(wander_lower.trajectory.shape, TrajectoryShape::no_decrease);
  EXPECT_EQ(wander_lower.cls, "unknown");
  auto wander_done = diagnose_text(wandering + "training complete\n");
  EXPECT_EQ(wander_done.trajectory.shape, TrajectoryShape::no_decrease);
  EXPECT_EQ(wander_done.cls, "healthy");

  auto nan = diagnose_text("step 1 loss 2.3\nstep 2 loss 2.1\nstep 3 loss nan\ntraining complete\n");
  EXPECT_EQ(nan.cls, "nan_loss");
  EXPECT_EQ(nan.trajectory.first_non_finite->line, 3u);
}

// A loss that settles at ln k, a uniform guess over k classes, learned
// nothing: a collapse, however few the readings.
TEST(TrainingCorrectness, LossStuckAtChance) {
  const std::string stuck =
      "loss 1.356284\nloss 1.386393\nloss 1.386381\nloss 1.386379\nloss 1.386330\n";
  Diagnosis d = diagnose_text(stuck, 0);
  EXPECT_EQ(d.cls, "loss_divergence");
  EXPECT_EQ(d.trajectory.shape, TrajectoryShape::plateau);
  bool says = false;
  for (const auto& s : d.verdict.shows) says |= s.find("ln 4") != std::string::npos;
  EXPECT_TRUE(says);
  // Near, but not at, a chance level: a short run is not judged.
  EXPECT_NE(diagnose_text("loss 1.50\nloss 1.45\nloss 1.41\nloss 1.37\nloss 1.35\n", 0).cls,
            "loss_divergence");
}

// A log that begins past the first epochs (a resumed run, a piece of a long
// one) does not show where the loss started: a loss that fell less than a
// fresh run's would is no problem there, where from epoch 0 it is one.
TEST(TrainingCorrectness, ALogThatBeginsMidRunIsNotJudgedByItsStart) {
  auto run_from = [](int epoch) {
    std::string log;
    for (int i = 0; i < 40; ++i)
      log += "Epoch: [" + std::to_string(epoch + i / 10) + "][" + std::to_string(i % 10 + 1) +
             "/10]\tLoss " + std::to_string(1.3 - 0.004 * i + (i % 3) * 0.15) + "\n";
    return log;
  };
  Diagnosis fresh = diagnose_text(run_from(0));
  EXPECT_EQ(fresh.trajectory.shape, TrajectoryShape::no_decrease);
  EXPECT_EQ(fresh.cls, "loss_divergence");
  Diagnosis resumed = diagnose_text(run_from(15));
  ASSERT_TRUE(resumed.trajectory.first_epoch);
  EXPECT_EQ(*resumed.trajectory.first_epoch, 15.0);
  EXPECT_NE(resumed.cls, "loss_divergence");
}

TEST(TrainingCorrectness, ResumeThatStartsOver) {
  const std::string run = plain_run(200, [](int s) { return 8.0 / s; }) + "training complete\n";
  auto scratch = diagnose_text("args: resume_dir='/ckpt/run-7'\n" + run);
  EXPECT_EQ(scratch.cls, "resume_from_scratch");
  EXPECT_EQ(scratch.evidence.front().values.at("checkpoint"), "/ckpt/run-7");
  auto resumed = diagnose_text("args: resume_dir='/ckpt/run-7'\nresumed from /ckpt/run-7/last.pt\n" + run);
  EXPECT_EQ(resumed.cls, "healthy");
  auto not_asked = diagnose_text("args: resume_dir=None\n" + run);
  EXPECT_EQ(not_asked.cls, "healthy");
}

// A requested resume, with any value, is judged by what the step counters
// do: a run that counts on from its checkpoint resumed, one that starts again
// near zero did not, whether or not a line says so.
TEST(TrainingCorrectness, ResumeCountersSayWhetherTheRunWentOn) {
  auto steps_from = [](int first, int count) {
    std::string log;
    for (int i = 0; i < count; ++i)
      log += "step " + std::to_string(first + 10 * i) + " loss " + std::to_string(2.0 - 0.001 * i) + "\n";
    return log + "training complete\n";
  };
  const std::string named = "+ python train.py --resume_from_checkpoint output/checkpoint-500 --bf16\n";
  auto over = diagnose_text(named + steps_from(10, 30));
  EXPECT_EQ(over.cls, "resume_from_scratch");
  EXPECT_EQ(over.evidence.front().values.at("step"), "500");
  Diagnosis went_on = diagnose_text(named + steps_from(510, 30));
  EXPECT_EQ(went_on.cls, "healthy");
  EXPECT_NE(joined(went_on.verdict.shows).find("the run resumed"), std::string::npos);
  // A name without a step: the logging interval is the yardstick.
  const std::string unnamed = "resume: runs/exp3/last.pt\n";
  EXPECT_EQ(diagnose_text(unnamed + steps_from(10, 30)).cls, "resume_from_scratch");
  EXPECT_EQ(diagnose_text(unnamed + steps_from(5000, 30)).cls, "healthy");
  EXPECT_EQ(diagnose_text("resume: True\n" + steps_from(10, 30)).cls, "resume_from_scratch");
  EXPECT_EQ(diagnose_text("resume_from_checkpoint: null\n" + steps_from(10, 30)).cls, "healthy");
}

// A checkpoint's global step that goes back to near zero in the place where
// a run had got far: the job started over, and that, not the cancel that
// followed, is its story. Another place (a sweep's next trial) or a listing
// sorted by name is no restart.
TEST(TrainingCorrectness, ACheckpointCounterBackAtZeroIsARestart) {
  const std::string restarted =
      "-rw-r----- 1 user group 209M Nov 29 05:14 'epoch=4849-step=53350.ckpt'\n"
      "-rw-r----- 1 user group 209M Nov 29 07:49 'epoch=5460-step=60071.ckpt'\n"
      "-rw-r----- 1 user group 209M Nov 29 10:59 'epoch=27-step=308.ckpt'\n"
      "slurmstepd: error: *** STEP 4714782.0 ON gpu-node-001 CANCELLED AT 2023-11-29T15:47:21 ***\n";
  Diagnosis d = diagnose_text(restarted);
  EXPECT_EQ(d.cls, "resume_from_scratch");
  EXPECT_EQ(d.evidence.front().line, 3u);
  EXPECT_TRUE(has_finding(d, "stop", "cancelled", "after_restart"));
  const std::string sweep =
      "Saving model checkpoint to /runs/trial-1/checkpoint-2000\n"
      "Saving model checkpoint to /runs/trial-2/checkpoint-10\n"
      "slurmstepd: error: *** STEP 4714782.0 ON gpu-node-001 CANCELLED AT 2023-11-29T15:47:21 ***\n";
  EXPECT_EQ(diagnose_text(sweep).cls, "cancelled");
  const std::string listing = "checkpoint-1000\ncheckpoint-10000\ncheckpoint-100000\ncheckpoint-2000\n"
                              "slurmstepd: error: *** STEP 4714782.0 ON gpu-node-001 CANCELLED AT 2023-11-29T15:47:21 ***\n";
  EXPECT_EQ(diagnose_text(listing).cls, "cancelled");
}

TEST(TrainingCorrectness, UndertrainedCountsSteps) {
  auto short_run = diagnose_text("step 1 loss 8.75\nstep 2 loss 4.23\ntraining finished: 2 steps in 0.1s\n", 0);
  EXPECT_EQ(short_run.cls, "undertrained");
  // HF Trainer prints no step numbers; its summary gives runtime x steps/s.
  auto hf = diagnose_text(
      "{'loss': '4.706', 'grad_norm': '2.131', 'learning_rate': '0.002', 'epoch': '0.03'}\n"
      "{'train_runtime': '0.935', 'train_samples_per_second': '25.67', 'train_steps_per_second': "
      "'3.209', 'train_loss': '4.695', 'epoch': '0.09'}\n");
  EXPECT_EQ(hf.cls, "undertrained");
  auto lightning = diagnose_text("`Trainer.fit` stopped: `max_steps=3` reached.\n");
  EXPECT_EQ(lightning.cls, "undertrained");
  // Ten steps leave the loss where it began (here at ln 50304, a uniform
  // guess over the vocabulary): too short a run, not a stuck one.
  std::string at_start = "vocab_size: 50304\n";
  for (int step = 0; step < 10; ++step)
    at_start += "step: " + std::to_string(step) + "/19073 | loss: " + std::to_string(10.826 - 0.005 * step) + "\n";
  EXPECT_EQ(diagnose_text(at_start + "Training completed\n").cls, "undertrained");
  EXPECT_EQ(diagnose_text(at_start).cls, "loss_divergence");
}

// A loss in a field that names an evaluation is not a training reading.
TEST(Trajectory, EvaluationLossesAreNotTrainingReadings) {
  auto rules = RuleSet::builtin(CacheOptions{false, {}});
  std::string log;
  for (int step = 100; step <= 3000; step += 100) {
    log += "INFO - Step " + std::to_string(step) + ", Loss: 0.05\n";
    if (step % 1000 == 0)
      log += "INFO - Validation - Loss: 0.2009, F1: 0.9989\nEpoch 3, Val Loss 0.3\nvalidation | loss 0.4\n";
  }
  Diagnosis d = diagnose_bytes(rules, log, {});
  EXPECT_EQ(d.trajectory.readings, 30u);
  ASSERT_TRUE(d.trajectory.peak);
  EXPECT_DOUBLE_EQ(d.trajectory.peak->loss, 0.05);
}

// The evaluation loss is read apart from the training loss, under its own
// keys and in an evaluation's field, never from a summary or a path.
TEST(Progress, ReadsTheEvaluationLossApart) {
  struct Case {
    const char* line;
    double loss;
  } cases[] = {
      {"{'eval_loss': 1.9777, 'eval_runtime': 0.8175, 'epoch': 0.01}", 1.9777},
      {"2025-10-18 21:47:28,618 - INFO - Validation - Loss: 0.6915, F1: 0.2857", 0.6915},
      {"step 0: train loss 10.9364, val loss 10.9380", 10.938},
      {"Epoch [647/650], Validation Loss: 0.0017, Validation L1: 0.2673", 0.0017},
      {"Val epoch 3 has acc 0.249 and loss 1.386", 1.386},
      {"step 100 | train/loss: 2.31 | eval/loss 2.5", 2.5},  // wandb's and HF's namespaces
      // A loop at work on an evaluation.
      {"I1216 14:42:44.291301 1396 train.py:398] Evaluated 10/287 with L2 loss 0.00036223349161446095",
       0.00036223349161446095},
  };
  for (const auto& c : cases) {
    auto r = parse_progress(c.line);
    ASSERT_TRUE(r.evaluation_loss) << c.line;
    EXPECT_DOUBLE_EQ(*r.evaluation_loss, c.loss) << c.line;
  }
  // The training loss of the same line stays the training loss.
  auto both = parse_progress("step 0: train loss 10.9364, val loss 10.9380");
  ASSERT_TRUE(both.loss);
  EXPECT_DOUBLE_EQ(*both.loss, 10.9364);
  EXPECT_FALSE(parse_progress("Evaluated 10/287 with L2 loss 0.00036").loss);
  EXPECT_FALSE(parse_progress("step 10 loss 0.5").evaluation_loss);
  EXPECT_FALSE(parse_progress("Best validation loss: 0.6915").evaluation_loss);
  EXPECT_FALSE(parse_progress("epoch 3 val_loss_cls 0.41").evaluation_loss);
  EXPECT_FALSE(parse_progress("Saving /ckpt/epoch=0-step=4-val_loss=0.0000.ckpt").evaluation_loss);
}

// A table whose header names its columns: the rows below it are readings of
// the columns the header names, training and evaluation apart.
TEST(Trajectory, ReadsTablesByTheirHeader) {
  const std::string fastai =
      "epoch     train_loss  valid_loss  accuracy  time\n"
      "0         0.383562    0.214515    0.931000  00:08\n"
      "1         0.201000    0.190000    0.940000  00:08\n"
      "2         nan         nan         0.100000  00:08\n";
  Diagnosis nan = diagnose_text(fastai);
  EXPECT_EQ(nan.cls, "nan_loss");
  EXPECT_EQ(nan.trajectory.readings, 3u);
  EXPECT_EQ(nan.trajectory.first_non_finite->line, 4u);
  EXPECT_EQ(nan.trajectory.evaluation.readings, 3u);
  // HF Trainer's notebook table, as a text export has it: tab-separated, with
  // "No log" where no training loss was logged yet.
  Diagnosis hf = diagnose_text(
      "Step\tTraining Loss\tValidation Loss\n10\tNo log\t0.9\n20\t0.8\t0.7\n30\t0.6\t0.5\n40\t0.4\t0.3\n"
      "Training completed. Do not forget to share your model on huggingface.co/models =)\n", 0);
  EXPECT_EQ(hf.cls, "healthy");
  EXPECT_EQ(hf.trajectory.readings, 3u);
  EXPECT_EQ(hf.trajectory.first->step, 20u);
  EXPECT_EQ(hf.trajectory.evaluation.readings, 4u);
  EXPECT_DOUBLE_EQ(hf.trajectory.evaluation.last->value, 0.3);
  // No header, a header without a step or epoch column, or a row whose cells
  // do not line up: no readings.
  EXPECT_EQ(diagnose_text("0         nan         nan         0.100000  00:08\n").trajectory.readings, 0u);
  EXPECT_EQ(diagnose_text("the training loss went up\n1\t2\t3\n").trajectory.readings, 0u);
  EXPECT_EQ(diagnose_text("Step\tTraining Loss\n10\t0.5\t0.4\n").trajectory.readings, 0u);
}

TEST(Trajectory, TheEvaluationSeriesIsBoundedWithExactExtremes) {
  auto rules = RuleSet::builtin(CacheOptions{false, {}});
  detail::TrajectoryBuilder b(rules->impl(), 64);
  Pieces pieces(b, 1000);
  const int n = 5000;
  for (int s = 1; s <= n; ++s) {
    pieces.add("step " + std::to_string(s) + " loss " + std::to_string(10.0 / s), 2 * s);
    pieces.add("step " + std::to_string(s) + " eval_loss " + std::to_string(s == 333 ? 0.001 : 20.0 / s),
               2 * s + 1);
  }
  pieces.end_piece();
  Trajectory t = b.finish();
  EXPECT_EQ(t.readings, static_cast<std::uint64_t>(n));
  EXPECT_EQ(t.evaluation.readings, static_cast<std::uint64_t>(n));
  EXPECT_LE(t.evaluation.series.size(), 64u);
  EXPECT_EQ(t.evaluation.lowest->step, 333u);
  EXPECT_EQ(t.evaluation.last->step, static_cast<std::uint64_t>(n));
  EXPECT_DOUBLE_EQ(t.lowest->loss, 10.0 / n);  // no evaluation reading in the training series
}

// The step budget comes from the plan lines when the run reports no count:
// the training set over the batch of one step, times the epochs. A run that
// completed within a handful of steps, or within a hundred with its
// evaluation loss still at chance, is undertrained.
TEST(TrainingCorrectness, UndertrainedReadsTheStepBudget) {
  auto run = [](int samples, double eval_loss) {
    return "  per_device_train_batch_size: 4\n  gradient_accumulation_steps: 2\n  num_train_epochs: 1\n"
           "Split: Train=" + std::to_string(samples) + ", Val=20, Test=40\n"
           "Epoch 1/1 - Train Loss: 0.3847, Train F1: 0.5347\n"
           "Validation - Loss: " + std::to_string(eval_loss) + ", F1: 0.2857\n"
           "Training completed!\n";
  };
  // 60 samples in batches of 4 x 2: 8 steps.
  Diagnosis few = diagnose_text(run(60, 0.41), 0);
  EXPECT_EQ(few.cls, "undertrained");
  EXPECT_TRUE(joined(few.verdict.shows).find("the plan allows 8 optimisation steps: 60 training samples "
                                             "in batches of 4 x 2 accumulated, over 1 epoch") !=
              std::string::npos)
      << joined(few.verdict.shows);
  // 140 samples: 18 steps, with the evaluation at ln 2.
  Diagnosis chance = diagnose_text(run(140, 0.6915), 0);
  EXPECT_EQ(chance.cls, "undertrained");
  EXPECT_TRUE(joined(chance.verdict.shows).find("sits at ln 2") != std::string::npos);
  // The same 18 steps with an evaluation loss that moved off chance, and a
  // run at chance with a budget of many steps, are not.
  EXPECT_EQ(diagnose_text(run(140, 0.41), 0).cls, "healthy");
  EXPECT_EQ(diagnose_text(run(14000, 0.6915), 0).cls, "healthy");
  // A stated total wins over the budget derived from the parts.
  EXPECT_EQ(diagnose_text("  Total optimization steps = 2,000\n" + run(60, 0.41), 0).cls, "healthy");
}

// Where no line reports a step, the bars over each epoch's batches count
// them ("Epoch 0:  50%|#####| 4/8 [...]"): summed over the epochs from the
// first, or the total of one times the planned epochs when the log does not
// show the first epoch. A bar labelled otherwise may count epochs: not read.
TEST(TrainingCorrectness, UndertrainedCountsEpochBars) {
  auto bar = [](int epoch, int position, int total, double loss) {
    return "Epoch " + std::to_string(epoch) + ":  50%|#####     | " + std::to_string(position) + "/" +
           std::to_string(total) + " [00:01<00:01,  3.95it/s, loss=" + std::to_string(loss) + ", v_num=0]";
  };
  const std::string stopped = "`Trainer.fit` stopped: `max_epochs=2` reached.\n";
  // Two epochs of 3 batches, redrawn with carriage returns: 6 batches.
  std::string tiny = "  | Name | Type | Params\n";
  for (int epoch = 0; epoch < 2; ++epoch)
    tiny += bar(epoch, 1, 3, 2.3) + "\r" + bar(epoch, 2, 3, 2.2) + "\r" + bar(epoch, 3, 3, 2.1) + "\n";
  Diagnosis few = diagnose_text(tiny + stopped, 0);
  EXPECT_EQ(few.cls, "undertrained");
  EXPECT_TRUE(joined(few.verdict.shows).find("the run completed after 6 batches, as its epoch progress bars "
                                             "count them") != std::string::npos)
      << joined(few.verdict.shows);
  // Two epochs of 400 batches: many steps.
  std::string long_run;
  for (int epoch = 0; epoch < 2; ++epoch)
    for (int b = 100; b <= 400; b += 100) long_run += bar(epoch, b, 400, 2.0 - 0.2 * epoch - b / 1000.0) + "\n";
  EXPECT_EQ(diagnose_text(long_run + stopped, 0).cls, "healthy");
  // A piece of a log from its last epoch: the bar's total times the planned
  // epochs is the budget, 3 x 3 batches here.
  const std::string last = "max_epochs: 3\n" + bar(2, 3, 3, 0.4) + "\n" + "`Trainer.fit` stopped: `max_epochs=3` reached.\n";
  Diagnosis budget = diagnose_text(last, 0);
  EXPECT_EQ(budget.cls, "undertrained");
  EXPECT_TRUE(joined(budget.verdict.shows).find("the plan allows 9 batches: 3 epochs of 3, as the epoch's "
                                                "progress bar counts them (lines 2, 3)") != std::string::npos)
      << joined(budget.verdict.shows);
  // A bar over the epochs themselves counts no batch.
  std::string epochs;
  for (int e = 1; e <= 5; ++e)
    epochs += "Training: 100%|##########| " + std::to_string(e) + "/5 [00:10<00:00,  0.5it/s, loss=" +
              std::to_string(1.0 / e) + "]\n";
  EXPECT_EQ(diagnose_text(epochs + "Training complete\n", 0).cls, "healthy");
}

// A loss that ends at ln k for the k a plan line states (the vocabulary, the
// labels) is a uniform guess: the model learned nothing, even in a run that
// completed, where a loss that merely fell little is no problem.
TEST(TrainingCorrectness, ALossAtTheStatedChanceLearnedNothing) {
  auto run = [](double centre, double noise) {
    std::string log;
    for (int step = 10; step <= 400; step += 10) {
      const double wobble = noise * ((step * 7919 % 100) / 50.0 - 1);  // -noise to +noise
      log += "step " + std::to_string(step) + " loss " + std::to_string(centre + wobble) + "\n";
    }
    return log + "training complete\n";
  };
  const std::string vocabulary = "  \"vocab_size\": 50257,\n";
  Diagnosis lm = diagnose_text(vocabulary + run(std::log(50257.0), 0.15), 0);
  EXPECT_EQ(lm.cls, "loss_divergence");
  EXPECT_EQ(lm.trajectory.shape, TrajectoryShape::no_decrease);
  EXPECT_TRUE(joined(lm.verdict.shows).find("sits at ln 50257 = 10.8249, a uniform guess over the 50257 outputs "
                                            "that line 1 states") != std::string::npos)
      << joined(lm.verdict.shows);
  // The same vocabulary with a loss that settled lower, and the same loss
  // with no stated vocabulary: a run that completed, whose loss fell little.
  EXPECT_EQ(diagnose_text(vocabulary + run(3.1, 0.15), 0).cls, "healthy");
  EXPECT_EQ(diagnose_text(run(std::log(50257.0), 0.15), 0).cls, "healthy");
  // A classifier's labels: at ln 3 it guesses.
  EXPECT_EQ(diagnose_text("Namespace(num_labels=3, lr=0.1)\n" + run(std::log(3.0), 0.01), 0).cls,
            "loss_divergence");
  EXPECT_EQ(diagnose_text("Namespace(num_labels=3, lr=0.1)\n" + run(0.6, 0.05), 0).cls, "healthy");
}

// Divergence is judged against the running minimum: a loss that fell far
// and climbed back for good has diverged, below its first reading though it
// stays; the low readings of a noisy per-batch loss make no minimum.
TEST(TrainingCorrectness, DivergenceIsARiseAboveTheRunningMinimum) {
  std::string back_up, noisy;
  for (int step = 1; step <= 120; ++step) {
    const double loss = step <= 60 ? 10.0 / step : 0.2 + 0.05 * (step - 60);  // 10 -> 0.17 -> 3.2
    back_up += "step " + std::to_string(step) + " loss " + std::to_string(loss) + "\n";
    const double batch = (step * 7919 % 100) / 100.0;  // 0 to 0.99 at random around a falling mean
    noisy += "step " + std::to_string(step) + " loss " + std::to_string(2.0 / step + batch) + "\n";
  }
  Diagnosis d = diagnose_text(back_up + "training complete\n", 0);
  EXPECT_EQ(d.cls, "loss_divergence");
  EXPECT_EQ(d.trajectory.shape, TrajectoryShape::diverged);
  EXPECT_TRUE(joined(d.verdict.shows).find("then rose for good") != std::string::npos) << joined(d.verdict.shows);
  EXPECT_EQ(diagnose_text(noisy + "training complete\n", 0).cls, "healthy");
}

// A flat loss in a completed run that went on from a checkpoint is its
// floor; from scratch, or at chance, it is a plateau.
TEST(TrainingCorrectness, AFlatLossIsAPlateauOnlyWhereTheRunStartedThere) {
  auto flat = [](int first, double level) {
    std::string log;
    for (int step = first; step < first + 200; step += 10)
      log += "step " + std::to_string(step) + " loss " + std::to_string(level + 0.001 * (step % 3)) + "\n";
    return log + "training complete\n";
  };
  EXPECT_EQ(diagnose_text(flat(1, 1.7), 0).cls, "loss_divergence");
  EXPECT_EQ(diagnose_text("Restored all states from the checkpoint at /ckpt/last.ckpt\n" +
                              flat(5001, 1.7), 0).cls,
            "healthy");
  EXPECT_EQ(diagnose_text("Restored all states from the checkpoint at /ckpt/last.ckpt\n" + flat(5001, 2.302585), 0).cls,
            "loss_divergence");  // ln 10: chance
}

// A log cut short whose loss did not fall is judged by where it starts: from
// scratch it is a problem; going on from a checkpoint it says nothing.
TEST(TrainingCorrectness, ALossThatDidNotFallAfterACheckpointSaysNothing) {
  std::string log;
  for (int step = 1; step <= 40; ++step)
    log += "step " + std::to_string(step) + " loss " + std::to_string(1.5 + 0.1 * ((step * 37) % 7 - 3)) + "\n";
  EXPECT_EQ(diagnose_text(log).cls, "loss_divergence");
  EXPECT_EQ(diagnose_text("Restored all states from the checkpoint at /ckpt/last.ckpt\n" + log).cls, "unknown");
}

// A completed fine-tune sits near its floor from the start: not a failure.
// A completed run whose loss rose away from its lowest is.
TEST(Trajectory, CompletedRunsAreJudgedAgainstTheirLowestLoss) {
  std::string flat, rising;
  for (int step = 1; step <= 60; ++step) {
    flat += "step " + std::to_string(step) + " loss " + std::to_string(0.95 - 0.0005 * step + 0.01 * (step % 3)) + "\n";
    rising += "step " + std::to_string(step) + " loss " + std::to_string(3.5 + 3.5 * step / 60.0 + 0.05 * (step % 3)) + "\n";
  }
  EXPECT_EQ(diagnose_text(flat, 0).cls, "healthy");
  EXPECT_EQ(diagnose_text(rising, 0).cls, "loss_divergence");
}

// The lowest a completed run's loss rose away from is a level it held (the
// median of a window of readings), not one low reading of a noisy loss.
TEST(Trajectory, OneLowReadingIsNoLowestToRiseFrom) {
  static constexpr double kNoise[] = {0.06, -0.05, 0.0, 0.04, -0.06, 0.02};
  auto run = [&](int low_from, int low_to) {
    std::string log;
    for (int step = 0; step < 18; ++step) {
      const double loss = step >= low_from && step <= low_to ? 0.33 : 0.6 - 0.004 * step + kNoise[step % 6];
      log += "step " + std::to_string(10 * (step + 1)) + " loss " + std::to_string(loss) + "\n";
    }
    return log + "training complete\n";
  };
  EXPECT_EQ(diagnose_text(run(12, 12), 0).cls, "healthy");
  EXPECT_EQ(diagnose_text(run(3, 7), 0).cls, "loss_divergence");
}

// A loss that ends at its lowest did not rise away from it, whatever spike
// came before in its last third: the lowest it rose away from is one it held
// before its late readings.
TEST(Trajectory, ALossThatEndsAtItsLowestDidNotRiseFromIt) {
  static constexpr double kLoss[] = {1.59, 1.58, 1.72, 1.44, 1.44, 1.41, 1.36, 2.09, 1.70, 1.52, 1.40,
                                     1.35, 1.31, 1.26, 2.59, 2.21, 1.90, 1.64, 1.41, 1.24, 1.13};
  std::string log;
  for (int step = 0; step < 21; ++step)
    log += "step " + std::to_string(step + 1) + " loss " + std::to_string(kLoss[step]) + "\n";
  const Diagnosis done = diagnose_text(log + "training complete\n", 0);
  EXPECT_EQ(done.trajectory.shape, TrajectoryShape::no_decrease);
  EXPECT_NE(done.cls, "loss_divergence");
  EXPECT_NE(diagnose_text(log).cls, "loss_divergence");
}

// An online RL trainer's loss (its lines report a reward) is no objective to
// fall: GRPO's starts at zero and follows the KL penalty up. DPO's implicit
// rewards (`rewards/chosen`) make no such trainer: its loss should fall.
TEST(Trajectory, APolicyOptimisersLossIsNotJudgedByItsFall) {
  auto run = [](const std::string& extra) {
    std::string log;
    for (int step = 1; step <= 40; ++step)
      log += "{'loss': " + std::to_string(step == 1 ? 0.0 : 0.001 * step) + ", " + extra +
             "'learning_rate': 1e-06, 'epoch': " + std::to_string(step / 40.0) + "}\n";
    return log + "{'train_runtime': 1200.5, 'train_samples_per_second': 0.8, 'train_loss': 0.02, 'epoch': 1.0}\n";
  };
  EXPECT_EQ(diagnose_text(run("'reward': 0.61, 'reward_std': 0.08, 'kl': 0.002, ")).cls, "healthy");
  EXPECT_EQ(diagnose_text(run("'reward_std': 0.08, ")).cls, "healthy");
  EXPECT_EQ(diagnose_text(run("")).cls, "loss_divergence");
  EXPECT_EQ(diagnose_text(run("'rewards/chosen': 0.1, 'rewards/margins': 0.2, ")).cls, "loss_divergence");
}

// A run whose step counter states its total and reached it on its last
// progress line completed, where the counter ran over the whole run; one that
// restarts each epoch counts that epoch's batches.
TEST(TrainingCorrectness, ACounterThatReachedItsStatedTotalCompletedTheRun) {
  auto run = [](int epochs, int per_epoch, int stop) {
    std::string log;
    int done = 0;
    for (int epoch = 0; epoch < epochs && done < stop; ++epoch)
      for (int step = 1; step <= per_epoch && done < stop; ++step, ++done)
        log += "step " + std::to_string(epochs == 1 ? step : step) + "/" + std::to_string(per_epoch) +
               " | loss " + std::to_string(3.0 / (1 + 0.05 * done)) + " | lr 1.0e-04\n";
    return log;
  };
  EXPECT_EQ(diagnose_text(run(1, 200, 200)).cls, "healthy");
  EXPECT_EQ(diagnose_text(run(1, 200, 150)).cls, "unknown");
  EXPECT_EQ(diagnose_text(run(3, 80, 240)).cls, "unknown");
  const auto c = detail::stated_count("[2021-11-24 22:00:48 INFO] iter: 80000/80000, loss: 0.1656, lr: 0.000000");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->step, 80000);
  EXPECT_EQ(c->total, 80000);
  EXPECT_FALSE(detail::stated_count("step 20 | loss 2.5"));
  EXPECT_FALSE(detail::stated_count("step 20/200abc | loss 2.5"));
  const auto bar = detail::stated_count("Epoch 5/5: 100%|##########| 50/50 [00:10<00:00, 4.9it/s, loss=0.1]");
  ASSERT_TRUE(bar);
  EXPECT_EQ(bar->epoch, 5);
  EXPECT_EQ(bar->epochs, 5);
  EXPECT_EQ(bar->step, 50);
  EXPECT_EQ(bar->total, 50);
  // An epoch counter that reached its total: the last epoch ran, where the
  // line is its summary or its last step; an epoch's first step is not its end.
  auto epochs = [](const std::string& last) {
    std::string log;
    for (int epoch = 1; epoch <= 10; ++epoch)
      log += "----- Epoch[" + std::to_string(epoch) + "/10], Train Loss: " + std::to_string(3.0 / epoch) +
             ", Train Acc: 0.9\n";
    return log + last;
  };
  EXPECT_EQ(diagnose_text(epochs("")).cls, "healthy");
  EXPECT_EQ(diagnose_text(epochs("Epoch [11/12] Step [1/100] Loss: 0.2\n")).cls, "unknown");
  EXPECT_EQ(diagnose_text(epochs("Epoch [12/12] Step [1/100] Loss: 0.2\n")).cls, "unknown");
  EXPECT_EQ(diagnose_text(epochs("Epoch [12/12] Step [100/100] Loss: 0.2\n")).cls, "healthy");
  // The run's own ETA at its last reading: under a minute left is its end;
  // an ETA beside an epoch is that epoch's (torchvision's MetricLogger).
  const auto eta = detail::stated_count("[09/02 02:43:17 d2.utils.events]:  eta: 0:00:00  iter: 299  total_loss: 0.3553");
  ASSERT_TRUE(eta);
  EXPECT_EQ(eta->eta_seconds, 0);
  EXPECT_EQ(detail::stated_count("eta: 1 day, 2:03:04  iter: 19  total_loss: 1.9")->eta_seconds, 93784);
  EXPECT_EQ(detail::stated_count("ETA 12:30 | it 5 | loss 1.9")->eta_seconds, 750);
  const auto metric_logger = detail::stated_count("Epoch: [3]  [1250/1251]  eta: 0:00:00  lr: 0.1  loss: 1.2");
  ASSERT_TRUE(metric_logger);
  EXPECT_FALSE(metric_logger->eta_seconds);
  EXPECT_EQ(metric_logger->epoch_named, 3);
  EXPECT_EQ(metric_logger->step, 1250);  // the epoch's own count
  EXPECT_EQ(metric_logger->total, 1251);
  EXPECT_FALSE(detail::stated_count("beta: 0:00:00 loss: 1.2"));
  auto detectron = [](const std::string& last_eta) {
    std::string log;
    for (int iter = 19; iter < 300; iter += 20)
      log += "[09/02 02:4" + std::to_string(iter % 10) + ":17 d2.utils.events]:  eta: " +
             (iter == 299 ? last_eta : "0:05:00") + "  iter: " + std::to_string(iter) +
             "  total_loss: " + std::to_string(2.0 / (1 + iter / 50.0)) + "  time: 1.25\n";
    return log;
  };
  EXPECT_EQ(diagnose_text(detectron("0:00:00")).cls, "healthy");
  EXPECT_EQ(diagnose_text(detectron("0:04:00")).cls, "unknown");
  EXPECT_EQ(diagnose_text("[09/02 02:43:17 d2.utils.events]:  eta: 0:00:00  iter: 0  total_loss: 2.5\n").cls, "unknown");
  // The last reading names the last epoch a plan line stated: counted from 0
  // where the first reading was epoch 0, from 1 otherwise.
  auto planned = [](int first, int last) {
    std::string log = "config: lr: 0.1, epochs: 20, batch_size: 64\n";
    for (int epoch = first; epoch <= last; ++epoch)
      log += "epoch: " + std::to_string(epoch) + " done, loss: " + std::to_string(2.0 / (epoch + 1)) + "\n";
    return log;
  };
  EXPECT_EQ(diagnose_text(planned(0, 19)).cls, "healthy");
  EXPECT_EQ(diagnose_text(planned(0, 18)).cls, "unknown");
  EXPECT_EQ(diagnose_text(planned(1, 20)).cls, "healthy");
  EXPECT_EQ(diagnose_text(planned(1, 19)).cls, "unknown");
  EXPECT_EQ(detail::stated_count("epoch: 19 done, AUC: 0.94, loss: 0.10")->epoch_named, 19);
  EXPECT_FALSE(detail::stated_count("{'loss': 0.3, 'epoch': 0.37}"));
  // A counter right behind the epoch's counts that epoch's steps.
  const auto inner = detail::stated_count("Epoch:[1/1](56608/56608), loss: 1.8960, lr: 0.00000100");
  ASSERT_TRUE(inner);
  EXPECT_EQ(inner->epochs, 1);
  EXPECT_EQ(inner->step, 56608);
  EXPECT_EQ(inner->total, 56608);
  auto one_epoch = [](int last) {
    std::string log;
    for (int step = 50; step <= last; step += 50)
      log += "Epoch:[1/1](" + std::to_string(step) + "/1000), loss: " + std::to_string(2.5 - step / 1000.0) + "\n";
    return log;
  };
  EXPECT_EQ(diagnose_text(one_epoch(1000)).cls, "healthy");
  EXPECT_EQ(diagnose_text(one_epoch(700)).cls, "unknown");
  // The counters are those of the reading's own segment, however long its
  // line (tqdm's redraws before a summary make lines of kilobytes, past the
  // evidence's excerpt) and in however many pieces the log is scanned.
  std::string bars;
  for (int epoch = 1; epoch <= 30; ++epoch) {
    for (int batch = 0; batch <= 28; ++batch)
      bars += "\rTraining Epoch " + std::to_string(epoch) + ": " + std::to_string(batch * 100 / 28) + "%|#| " +
              std::to_string(batch) + "/28 [00:02<00:01, 1.3it/s, Batch_Loss=0.0718]";
    bars += "\rEpoch " + std::to_string(epoch) + "/30, Train Loss: " + std::to_string(1.0 / epoch) +
            ", Val Loss: 0.08\n";
  }
  EXPECT_EQ(diagnose_text(bars).cls, "healthy");
  EXPECT_EQ(diagnose_text(bars, {}, 4096).cls, "healthy");
  EXPECT_EQ(diagnose_text(bars.substr(0, bars.rfind("\rEpoch 30/30"))).cls, "unknown");
}

// A line of a layout seen before takes its body from the layout's first
// line, and with it whether the body holds carriage returns: every redraw of
// a bar is read on every line of its layout, the first and those after.
TEST(Progress, EveryRedrawOfALayoutSeenBeforeIsRead) {
  std::string log;
  int segments = 0;
  for (int line = 0; line < 30; ++line) {
    for (int redraw = 0; redraw < 3; ++redraw, ++segments) {
      if (redraw) log += '\r';
      log += ' ';
      log += std::to_string(10 + segments % 80);
      log += "/99 [00:01<00:02, 12.34it/s, loss=";
      log += std::to_string(2 + segments % 7);
      log += ".5]";
    }
    log += "\n";
  }
  const Diagnosis d = diagnose_text(log);
  EXPECT_EQ(d.trajectory.readings, static_cast<std::uint64_t>(segments));
  // Lines without a carriage return, of one layout, read one each.
  std::string plain;
  for (int line = 0; line < 30; ++line) plain += "step " + std::to_string(10 + line) + " loss 2.5\n";
  EXPECT_EQ(diagnose_text(plain).trajectory.readings, 30u);
}

namespace {

double value_of(const LossReading& r) { return r.loss; }
double value_of(const Reading& r) { return r.value; }

// Every field of a trajectory and of what the builder says beside it, one
// reading a line, numbers to the last bit.
std::string describe(detail::TrajectoryBuilder& b) {
  const Trajectory t = b.finish();
  std::string out;
  auto number = [&](double x) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.17g ", x);
    out += buffer;
  };
  // A loss reading or a reading of another series, where there is one.
  auto entry = [&](const char* name, const auto& r) {
    out += name;
    if (r) {
      number(value_of(*r));
      out += std::to_string(r->step) + " " + std::to_string(r->line) + (r->step_reported ? " s" : "");
    }
    out += "\n";
  };
  auto loss = [&](const char* name, const std::optional<LossReading>& r) { entry(name, r); };
  auto reading = [&](const char* name, const std::optional<Reading>& r) { entry(name, r); };
  out += "readings " + std::to_string(t.readings) + " shape " + std::string(to_string(t.shape)) + " max_step " +
         (t.max_step ? std::to_string(*t.max_step) : "-") + "\n";
  loss("first ", t.first);
  loss("last ", t.last);
  loss("lowest ", t.lowest);
  loss("peak ", t.peak);
  loss("first_non_finite ", t.first_non_finite);
  for (const LossReading& r : t.series) loss("kept ", r);
  const std::pair<const char*, const Series*> series[] = {
      {"evaluation", &t.evaluation}, {"grad_norm", &t.grad_norm},   {"learning_rate", &t.learning_rate},
      {"loss_scale", &t.loss_scale}, {"step_time", &t.step_time}, {"throughput", &t.throughput}};
  for (const auto& [name, s] : series) {
    out += std::string(name) + " " + std::to_string(s->readings) + "\n";
    reading(" first ", s->first);
    reading(" last ", s->last);
    reading(" lowest ", s->lowest);
    reading(" peak ", s->peak);
    for (const Reading& r : s->series) reading(" kept ", r);
  }
  if (const auto c = b.last_count(); c && c->step) out += "count step " + std::to_string(*c->step) + "\n";
  if (const auto c = b.step_time_change()) {
    out += "step time ";
    number(c->early);
    number(c->late);
    out += "\n";
  }
  return out;
}

// A line with every digit read as 0: its layout, as the scanner numbers it.
std::uint64_t layout_of(std::string line) {
  for (char& c : line)
    if (c >= '0' && c <= '9') c = '0';
  return std::hash<std::string>{}(line) | 1;
}

std::string printed(const char* format, auto... values) {
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, format, values...);
  return buffer;
}

}  // namespace

// Most progress segments of a long run are counted without their numbers
// being read (TrajectoryBuilder::Skims); what the builder reports must be
// what reading every one of them reports. Lines of many layouts (exponents,
// a mantissa of zero before an exponent, negative numbers, rates of zero,
// evaluation losses, NaN, steps that restart, bars redrawn with carriage
// returns, numbers at a segment's end), new extremes late in the run, in
// pieces of random sizes, with and without layout numbers.
TEST(Trajectory, SegmentsCountedUnreadLeaveEverySeriesAsReadingThemWould) {
  auto rules = RuleSet::builtin(CacheOptions{false, {}});
  for (const unsigned seed : {1u, 2u, 3u, 4u}) {
    std::mt19937 random(seed);
    auto uniform = [&](double low, double high) { return std::uniform_real_distribution<double>(low, high)(random); };
    auto chance = [&](double p) { return uniform(0, 1) < p; };
    detail::TrajectoryBuilder skimming(rules->impl(), 64), reading(rules->impl(), 64, false);
    Pieces a(skimming, 100), b(reading, 100);
    const bool layouts = seed % 2 == 0;
    int step = 0;
    double level = 3;
    for (std::uint64_t line = 1; line <= 40000; ++line) {
      step = chance(0.0002) ? step / 2 : step + 1;  // a restart now and then
      level *= chance(0.5) ? 0.9999 : 1.00009;
      // A spike or a dip late in the run: a new extreme after long quiet.
      const double loss = level * (chance(0.001) ? uniform(0.2, 5) : uniform(0.9, 1.1));
      std::string text;
      switch (random() % 8) {
        case 0:
        case 1:
          text = printed(
              " iteration %8d/ 5000000 | consumed samples: %12d | elapsed time per iteration (ms): %.1f | "
              "learning rate: %.6E | global batch size: %5d | lm loss: %.6E | loss scale: %.1f | grad norm: %.3f |",
              step, step * 512, uniform(380, 440), chance(0.01) ? 0.0 : uniform(1e-5, 3e-4), 512, loss,
              chance(0.01) ? 32768.0 : 65536.0, uniform(0.1, 2.5));
          break;
        case 2:
          text = printed("{'loss': %.4f, 'grad_norm': %.3f, 'learning_rate': %.3e, 'epoch': %.2f}", loss,
                         uniform(0.1, 2.5), uniform(1e-5, 2e-5), step / 1000.0);
          break;
        case 3:
          for (int redraw = 0; redraw < 3; ++redraw)
            text += printed("\r%d/100000 [00:00<00:10, %.1fit/s, loss=%.3f]", step + redraw,
                            chance(0.02) ? 0.0 : uniform(1, 9.9), loss);
          break;
        case 4:
          text = printed("step %d loss %.5f reward %.3f", step, -loss / 100, uniform(-1, 1));
          break;
        case 5:
          text = chance(0.05) ? printed("step %d eval_loss nan", step)
                              : printed("step %d eval_loss %.4f", step, loss * uniform(1, 1.2));
          break;
        case 6:
          text = chance(0.002) ? printed("step %d loss nan", step) : printed("step %d loss %.6f", step, loss);
          break;
        default:
          text = printed("gpu-node-00:1234:1300 [0] NCCL INFO Channel %02d/0 : 0[0] -> 1[1] via P2P/IPC", step % 32);
      }
      const std::uint64_t layout = layouts ? layout_of(text) : 0;
      a.add(text, line, layout);
      b.add(text, line, layout);
      if (chance(0.01)) {
        const std::size_t piece = 1 + random() % 500;
        a.set_piece(piece);
        b.set_piece(piece);
      }
    }
    a.end_piece();
    b.end_piece();
    EXPECT_GT(skimming.skimmed(), skimming.readings() / 2) << "seed " << seed;
    EXPECT_EQ(reading.skimmed(), 0u);
    EXPECT_EQ(describe(skimming), describe(reading)) << "seed " << seed;
  }
}

// A run that restarts its steps (a k-fold loop, a second model) within one
// piece: the largest step stood on a segment counted unread, before the
// restart, and is still the largest the builder reports.
TEST(Trajectory, TheLargestStepOfASegmentCountedUnreadIsKeptPastARestart) {
  auto rules = RuleSet::builtin(CacheOptions{false, {}});
  for (const bool layouts : {false, true}) {
    detail::TrajectoryBuilder skimming(rules->impl(), 64), reading(rules->impl(), 64, false);
    Pieces a(skimming, 1 << 20), b(reading, 1 << 20);
    std::uint64_t line = 0;
    for (const int steps : {3001, 1000}) {
      for (int step = 1; step <= steps; ++step) {
        const std::string text = printed("step %5d loss %.6f", step, 2.0 + 0.5 * ((step * 7919) % 1000) / 1000);
        ++line;
        a.add(text, line, layouts ? layout_of(text) : 0);
        b.add(text, line, layouts ? layout_of(text) : 0);
      }
    }
    a.end_piece();
    b.end_piece();
    ASSERT_GT(skimming.skimmed(), 3000u);
    EXPECT_EQ(describe(skimming), describe(reading));
    EXPECT_NE(describe(skimming).find("max_step 3001\n"), std::string::npos);
  }
}

// Keras prints an epoch's header on a line of its own as the epoch begins
// ("Epoch 40/40"), then the epoch's bar: the run reached its end where the
// last epoch's bar after its header reached its count.
TEST(TrainingCorrectness, KerasLastEpochsBarAtItsCountEndedTheRun) {
  auto fit = [](int epochs, int ran, const std::string& last_bar, bool verbose2 = false) {
    std::string log = "Found 20000 images belonging to 2 classes.\n";
    for (int epoch = 1; epoch <= ran; ++epoch) {
      log += "Epoch " + std::to_string(epoch) + "/" + std::to_string(epochs) + "\n";
      const std::string loss = std::to_string(0.7 - 0.01 * epoch).substr(0, 6);
      log += epoch < ran ? (verbose2 ? "313/313 - 331s - loss: " : "313/313 [==============================] - 331s 1s/step - loss: ") +
                               loss + " - acc: 0.84\n"
                         : last_bar + loss + "\n";
    }
    return log;
  };
  const std::string done = "313/313 [==============================] - 338s 1s/step - loss: ";
  EXPECT_EQ(diagnose_text(fit(40, 40, done)).cls, "healthy");
  EXPECT_EQ(diagnose_text(fit(40, 40, "313/313 - 338s - loss: ", true)).cls, "healthy");
  EXPECT_EQ(diagnose_text(fit(40, 39, done)).cls, "unknown");  // an epoch to go
  EXPECT_EQ(diagnose_text(fit(40, 40, "120/313 [=========>....................] - ETA: 3:20 - loss: ")).cls,
            "unknown");  // stopped within it
  // The header alone, the bar not yet drawn.
  EXPECT_EQ(diagnose_text(fit(40, 39, done) + "Epoch 40/40\n").cls, "unknown");
  const auto c = detail::stated_count("  2/1688 [..............................] - ETA: 6:36 - loss: 2.2862");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->step, 2);
  EXPECT_EQ(c->total, 1688);
}
