#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.hpp"
#include "trajectory_builder.hpp"

using namespace gpudiag;
using namespace gpudiag::testing;
using detail::parse_progress;

namespace {

// The reasons of the throughput findings, in order.
std::vector<std::string> throughput(const Diagnosis& d) {
  std::vector<std::string> out;
  for (const auto& f : d.findings)
    if (f.kind == "throughput") out.push_back(f.reason);
  return out;
}

// A completed run of `steps` steps; `dt(step)` the step time in ms.
std::string timed_run(int steps, double (*dt)(int)) {
  std::string log;
  for (int s = 1; s <= steps; ++s)
    log += "step " + std::to_string(s) + " | loss: " + std::to_string(5.0 / s) +
           " | dt: " + std::to_string(dt(s)) + "ms | tok/sec: 1000\n";
  return log + "training complete\n";
}

using Reasons = std::vector<std::string>;

}  // namespace

TEST(Progress, ReadsTheStepTime) {
  struct Case {
    const char* line;
    double seconds;
  } cases[] = {
      {"step 19072 | loss: 3.106784 | lr 6.0000e-05 | norm: 0.3091 | dt: 51754.23ms | tok/sec: 10130.34", 51.75423},
      {" iteration      100/  500000 | elapsed time per iteration (ms): 412.5 | lm loss: 7.1E+00 |", 0.4125},
      {"Epoch 0:  16%|#6        | 10/64 [00:04<00:20,  2.50it/s, loss=3.1]", 0.4},
      {"Training:  1%| | 204/15310 [05:29<6:47:23,  1.62s/it, loss=0.21]", 1.62},
      {"Epoch(train) [1][ 50/500]  lr: 1e-02  eta: 0:10:00  time: 0.5320  data_time: 0.0100  loss: 1.2", 0.532},
      {"step 10 loss 2.5 step_time 0.25", 0.25},
  };
  for (const auto& c : cases) {
    auto r = parse_progress(c.line);
    ASSERT_TRUE(r.step_seconds) << c.line;
    EXPECT_NEAR(*r.step_seconds, c.seconds, 1e-9) << c.line;
  }
  // A timestamp, a `time` without its `data_time`, a bare `dt` are no step time.
  EXPECT_FALSE(parse_progress("2024-01-01 10:00:00 step 10 loss 2.5 time: 10:00:01").step_seconds);
  EXPECT_FALSE(parse_progress("step 10 loss 2.5 dt 3").step_seconds);
  EXPECT_FALSE(parse_progress("step 10 loss 2.5 width: 12ms").step_seconds);
}

// What a progress line reports beside the training loss, each under the keys
// the frameworks print.
TEST(Progress, ReadsTheQuantitiesBesideTheLoss) {
  auto megatron = parse_progress(
      " iteration       10/  500000 | consumed samples:  5120 | elapsed time per iteration (ms): 412.5 | "
      "learning rate: 1.500000E-06 | global batch size:   512 | lm loss: 1.009469E+01 | loss scale: 65536.0 | "
      "grad norm: 1.335 |");
  ASSERT_TRUE(megatron.loss && megatron.learning_rate && megatron.loss_scale && megatron.grad_norm);
  EXPECT_DOUBLE_EQ(*megatron.learning_rate, 1.5e-6);
  EXPECT_DOUBLE_EQ(*megatron.loss_scale, 65536.0);
  EXPECT_DOUBLE_EQ(*megatron.grad_norm, 1.335);
  auto hf = parse_progress("{'loss': '4.689', 'grad_norm': '1.394', 'learning_rate': '0.001867', 'epoch': '0.1562'}");
  ASSERT_TRUE(hf.learning_rate && hf.grad_norm);
  EXPECT_DOUBLE_EQ(*hf.learning_rate, 0.001867);
  auto plain = parse_progress("step 3 loss 2.0 lr 1e-3 loss_scale: 1024");
  ASSERT_TRUE(plain.learning_rate && plain.loss_scale);
  EXPECT_DOUBLE_EQ(*plain.loss_scale, 1024.0);
  // Items per second, as the unit names them, the value after the key or before the unit.
  const std::pair<const char*, double> rates[] = {
      {"step 19072 | loss: 3.106784 | dt: 51754.23ms | tok/sec: 10130.34", 10130.34},
      {"step 5 | loss 6.4 | lr 3.0e-04 | tokens/s 180000 | mem 61.2 GiB", 180000},
      {"Global Step:  10000, accuracy:  94.9%, loss = 0.25 (615.3 examples/sec, 0.21 sec/batch)", 615.3},
      {"{\"loss\": 2.0, \"samples_per_second\": 85.6, \"step\": 7}", 85.6},
  };
  for (auto [line, rate] : rates) {
    auto r = parse_progress(line);
    ASSERT_TRUE(r.items_per_second) << line;
    EXPECT_DOUBLE_EQ(*r.items_per_second, rate) << line;
  }
  EXPECT_FALSE(parse_progress("step 8 loss 2.0 22.76it/s").items_per_second);  // a step rate
  EXPECT_FALSE(parse_progress("step 8 loss 2.0 | 150.2 TFLOP/s").items_per_second);
  // Not a learning rate: part of another word; no loss on the line, nothing beside it.
  EXPECT_FALSE(parse_progress("step 3 loss 2.0 curl 5").learning_rate);
  EXPECT_FALSE(parse_progress("lr 1e-3").learning_rate);
}

// A setup that slows every step is a throughput finding, never the cause: a
// completed run stays healthy with it. Advice that names the setting is not it.
TEST(Throughput, TheSetupThatSlowsARunIsAFinding) {
  const std::string run = falling_run(200) + "training complete\n";
  Diagnosis blocking = diagnose_text(
      "environ({'CUDA_VISIBLE_DEVICES': '0', 'CUDA_LAUNCH_BLOCKING': '1'})\n" + run, 0);
  EXPECT_EQ(blocking.cls, "healthy");
  EXPECT_EQ(throughput(blocking), Reasons{"launch_blocking"});
  const Finding* f = finding(blocking, "throughput");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->cls, "");  // it points to no class
  EXPECT_EQ(f->line, 1u);
  EXPECT_TRUE(f->message.find("every CUDA kernel launch waits") != std::string::npos) << f->message;
  Diagnosis hint = diagnose_text(
      "RuntimeError: CUDA error: an illegal memory access was encountered\n"
      "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n", 1);
  EXPECT_EQ(hint.cls, "cuda_runtime");
  EXPECT_TRUE(throughput(hint).empty());
  Diagnosis sockets = diagnose_text(
      "node1:2381:2381 [0] NCCL INFO NET/IB : No device found.\n"
      "node1:2381:2381 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n" + run, 0);
  EXPECT_EQ(sockets.cls, "healthy");
  EXPECT_EQ(throughput(sockets), Reasons{"socket_transport"});
  EXPECT_TRUE(throughput(diagnose_text("node1:2381:2381 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB\n" + run, 0))
                  .empty());
}

// A checkpoint saved at nearly every step is a save storm; one every few
// steps, or a handful of saves, is not.
TEST(Throughput, ASaveAtNearlyEveryStepIsASaveStorm) {
  auto run = [](int steps, int save_every) {
    std::string log;
    for (int s = 1; s <= steps; ++s) {
      log += "step " + std::to_string(s) + " loss " + std::to_string(3.0 / s) + "\n";
      if (s % save_every == 0) log += "saved checkpoint ckpt/last.pt at step " + std::to_string(s) + "\n";
    }
    return log + "training complete\n";
  };
  Diagnosis storm = diagnose_text(run(60, 1), 0);
  EXPECT_EQ(storm.cls, "healthy");
  EXPECT_EQ(throughput(storm), Reasons{"save_storm"});
  EXPECT_TRUE(finding(storm, "throughput")->message.find("60 checkpoint saves over 60 optimisation steps") !=
              std::string::npos);
  EXPECT_TRUE(throughput(diagnose_text(run(60, 5), 0)).empty());
  EXPECT_TRUE(throughput(diagnose_text(run(8, 1), 0)).empty());
}

// The step time of the followed rank, late against early: a jump of several
// times is a collapse, a steady rise of half as much again is a rise; noise
// around a level, and the warm-up's slow first steps, are neither.
TEST(Throughput, StepTimeThatRoseOrCollapsed) {
  Diagnosis collapse = diagnose_text(timed_run(200, [](int s) { return s < 100 ? 100.0 + s % 7 : 450.0 + s % 7; }), 0);
  EXPECT_EQ(collapse.cls, "healthy");
  EXPECT_EQ(throughput(collapse), Reasons{"throughput_collapse"});
  Diagnosis rising = diagnose_text(timed_run(200, [](int s) { return 100.0 + s + s % 5; }), 0);
  EXPECT_EQ(throughput(rising), Reasons{"step_time_rising"});
  EXPECT_TRUE(finding(rising, "throughput")->message.find("times slower") != std::string::npos);
  EXPECT_TRUE(throughput(diagnose_text(timed_run(200, [](int s) { return 100.0 + (s * 37) % 40; }), 0)).empty());
  EXPECT_TRUE(throughput(diagnose_text(timed_run(200, [](int s) { return s <= 10 ? 5000.0 : 100.0; }), 0)).empty());
  // One progress bar's redraws are one stretch of the run.
  std::string bar;
  for (int s = 1; s <= 40; ++s)
    bar += "Epoch 0: " + std::to_string(s) + "/40 [00:01<00:02, " + std::to_string(60.0 / s) + "it/s, loss=" +
           std::to_string(3.0 / s) + "]\r";
  EXPECT_TRUE(throughput(diagnose_text(bar + "\ntraining complete\n", 0)).empty());
}

// A straggler report whose slowest rank is far behind the fastest: that rank
// is named; a spread of a few percent is no straggler.
TEST(Throughput, ARankFarBehindTheFastestIsAStraggler) {
  auto run = [](const char* slowest) {
    std::string log;
    for (int s = 100; s <= 1000; s += 100)
      log += " iteration " + std::to_string(s) + "/ 10000 | lm loss: " + std::to_string(8.0 - s / 1000.0) +
             " |\n[2024-10-23 01:29:30] [INFO] | MnRtt/Rnk: 1446.49ms/13 | MxRtt/Rnk: " + slowest +
             "ms/30 | MnTmp/Rnk: 50.00C/0 | MxTmp/Rnk: 91.00C/30\n";
    return log + "[after training is done]\n";
  };
  Diagnosis slow = diagnose_text(run("2310.5"), 0);
  EXPECT_EQ(slow.cls, "healthy");
  EXPECT_EQ(throughput(slow), Reasons{"straggler"});
  const Finding* f = finding(slow, "throughput");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->rank, 30);
  EXPECT_TRUE(f->message.find("rank 30 is a straggler: its step took 2310.5ms against 1446.49ms for rank 13") !=
              std::string::npos)
      << f->message;
  EXPECT_TRUE(throughput(diagnose_text(run("1570.32"), 0)).empty());
}
