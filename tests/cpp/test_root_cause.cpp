#include <gtest/gtest.h>

#include <cstdio>

#include <string>

#include "test_util.hpp"

using namespace gpudiag;
using namespace gpudiag::testing;

// Rank 2 runs out of memory; ranks 0, 1 and 3 then hit the watchdog and the
// launcher reaps everyone with SIGABRT. The root cause is rank 2's OOM.
TEST(RootCause, FirstFailingRankOverTheCascade) {
  const std::string log =
      "[rank0]: step 4200 loss 2.31\n"
      "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 2 has a total "
      "capacity of 79.19 GiB of which 1.2 GiB is free.\n"
      "[rank0]:[E0620 02:24:27.131 4412 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective "
      "operation timeout: WorkNCCL(SeqNum=5008, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600035 "
      "milliseconds before timing out.\n"
      "[rank1]:[E0620 02:24:27.131 4412 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective "
      "operation timeout: WorkNCCL(SeqNum=5008, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600035 "
      "milliseconds before timing out.\n"
      "terminate called after throwing an instance of 'c10::DistBackendError'\n"
      "  exitcode  : -6 (pid: 183889)  (SIGABRT)\n";
  Diagnosis d = diagnose_text(log);
  EXPECT_EQ(d.cls, "cuda_oom");
  ASSERT_FALSE(d.evidence.empty());
  EXPECT_EQ(d.evidence.front().rank, 2);
  EXPECT_EQ(d.evidence.front().values.at("requested"), "4.00 GiB");
  const Finding* cascade = finding(d, "cascade");
  ASSERT_NE(cascade, nullptr);
  EXPECT_EQ(cascade->cls, "nccl_timeout");
  EXPECT_NE(cascade->message.find("rank 0"), std::string::npos) << cascade->message;
  EXPECT_NE(cascade->message.find("(rank 2)"), std::string::npos) << cascade->message;
  bool names_rank = false;
  for (const auto& s : d.verdict.shows) names_rank |= s == "the first failure is on rank 2";
  EXPECT_TRUE(names_rank);
}

TEST(RootCause, CascadeAloneIsReported) {
  // No rank says why: the timeout is all there is, and it is not dressed up as
  // the watchdog's abort or the RuntimeError that carries it.
  Diagnosis d = diagnose_text(
      "[rank1]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by "
      "peer [127.0.0.1]:3821. This is typically caused by a remote worker crashing.\n"
      "  exitcode  : -6 (pid: 9196)  (SIGABRT)\n");
  EXPECT_EQ(d.cls, "native_abort");
  Diagnosis peer = diagnose_text(
      "[rank1]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by "
      "peer [127.0.0.1]:3821. This is typically caused by a remote worker crashing.\n");
  EXPECT_EQ(peer.cls, "nccl");
  EXPECT_EQ(peer.evidence.front().rank, 1);
}

TEST(RootCause, RecoveredFailuresDoNotDecide) {
  std::string log = "auto batch size: CUDA out of memory. Tried to allocate 8.82 GiB.\n";
  for (int s = 10; s <= 200; s += 10)
    log += "step " + std::to_string(s) + " loss " + std::to_string(3.0 / s) + "\n";
  Diagnosis done = diagnose_text(log + "training complete\n", 0);
  EXPECT_EQ(done.cls, "healthy");
  ASSERT_NE(finding(done, "recovered"), nullptr);
  EXPECT_EQ(finding(done, "recovered")->cls, "cuda_oom");
  // Cut off mid-run: still not an OOM, since training went on after it.
  EXPECT_EQ(diagnose_text(log).cls, "unknown");
  // The same OOM as the last word of the log is the cause.
  EXPECT_EQ(diagnose_text("step 10 loss 2.0\n" + std::string("torch.OutOfMemoryError: CUDA out of memory. "
                                                              "Tried to allocate 8.82 GiB.\n")).cls,
            "cuda_oom");
}

// A failure the last progress line itself shows lasted to the end of
// training: a loss scale halved to nothing on every overflow, printed beside
// a loss that stays finite, is no recovery though the run then completes.
TEST(RootCause, AFailureTheLastProgressLineShowsIsNotRecovered) {
  std::string log;
  double scale = 65536;
  for (int s = 10; s <= 200; s += 10) {
    if (s > 60) scale /= 1024;
    char line[96];
    std::snprintf(line, sizeof line, "step %d loss %.4f | loss_scale: %.6g\n", s, 0.5 + 0.001 * (s % 3), scale);
    log += line;
  }
  Diagnosis d = diagnose_text(log + "training finished: 200 steps\n", 0);
  EXPECT_EQ(d.cls, "nan_loss");
  EXPECT_EQ(finding(d, "recovered"), nullptr);
}

// A loss that went non-finite is the training's own state: the run
// completing after it does not outlive it (a NaN evaluation before the final
// summary).
TEST(RootCause, ANonFiniteLossIsNotOutlivedByTheRunCompleting) {
  std::string log;
  for (int s = 1; s <= 16; ++s) log += "{'loss': 0.0, 'learning_rate': 5e-05, 'epoch': " + std::to_string(s / 160.0) + "}\n";
  const std::string nan_eval = "{'eval_loss': nan, 'eval_accuracy': nan, 'eval_runtime': 0.53, 'epoch': 0.1}\n";
  const std::string summary =
      "{'train_runtime': 10.89, 'train_samples_per_second': 23.5, 'train_steps_per_second': 1.47, 'train_loss': 0.0, "
      "'epoch': 0.1}\n";
  EXPECT_EQ(diagnose_text(log + nan_eval + summary, 0).cls, "nan_loss");
  EXPECT_EQ(diagnose_text(log + nan_eval + summary).cls, "nan_loss");
}

// In a run asked to resume, a checkpoint that failed to load before training
// began, in a run that then trained and completed, is no recovery: the run
// started over from scratch. Unless the counters show it went on from a
// checkpoint after all. Without a request it is a fine-tune's partial load.
// Python reports an exception raised in a destructor at shutdown as ignored:
// the exception that ended the run came before it.
TEST(RootCause, AnExceptionPythonIgnoredIsNoCause) {
  const std::string fatal =
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 222, in train_one_epoch\n"
      "    logger.info('mean loss: %f' % (loss_sum / float(num_batches)))\n"
      "ZeroDivisionError: float division by zero\n";
  const std::string ignored =
      "Exception ignored in: <bound method Dataset.__del__ of <data.Dataset object at 0x7f6acd354ac8>>\n"
      "Traceback (most recent call last):\n"
      "  File \"/code/data.py\", line 151, in __del__\n"
      "    while not self.queue.empty():\n"
      "FileNotFoundError: [Errno 2] No such file or directory\n";
  const Diagnosis d = diagnose_text(fatal + ignored);
  EXPECT_EQ(d.cls, "div_zero");
  // Without the report, the same traceback is the last exception, and decides.
  EXPECT_EQ(diagnose_text(fatal + ignored.substr(ignored.find('\n') + 1)).cls, "file_not_found");
  // An exception after the ignored one's traceback is a cause again.
  const std::string later =
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 30, in <module>\n"
      "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.json'\n";
  EXPECT_EQ(diagnose_text(ignored + later).cls, "file_not_found");
  EXPECT_EQ(diagnose_text(ignored).cls, "unknown");
}

TEST(RootCause, AFailedResumeThatTheRunWentOnAfterIsARestart) {
  const std::string mismatch =
      "Error(s) in loading state_dict for GPT: size mismatch for wte.weight: copying a param\n";
  const std::string failed = "+ python train.py --resume_from_checkpoint runs/gpt/last.pt\n" + mismatch;
  std::string fresh, resumed;
  for (int s = 10; s <= 200; s += 10) {
    fresh += "step " + std::to_string(s) + " loss " + std::to_string(3.0 / s) + "\n";
    resumed += "step " + std::to_string(5000 + s) + " loss " + std::to_string(0.5 - s / 1000.0) + "\n";
  }
  Diagnosis d = diagnose_text(failed + fresh + "training complete\n", 0);
  EXPECT_EQ(d.cls, "resume_from_scratch");
  ASSERT_FALSE(d.evidence.empty());
  EXPECT_EQ(d.evidence.front().cls, "checkpoint_load_error");
  EXPECT_EQ(finding(d, "recovered"), nullptr);
  EXPECT_EQ(diagnose_text(failed + resumed + "training complete\n", 0).cls, "healthy");
  Diagnosis fine_tune = diagnose_text(mismatch + fresh + "training complete\n", 0);
  EXPECT_EQ(fine_tune.cls, "healthy");
  EXPECT_TRUE(has_finding(fine_tune, "recovered", "checkpoint_load_error"));
  // The same error as the log's last word is the cause.
  EXPECT_EQ(diagnose_text(fresh + failed).cls, "checkpoint_load_error");
}

TEST(RootCause, ApplicationXidIsNotHardware) {
  Diagnosis d = diagnose_text(
      "[669598.79] NVRM: Xid (PCI:0000:9a:00): 31, pid=121814, name=python, Ch 00000008, MMU Fault\n"
      "torch.AcceleratorError: CUDA error: an illegal memory access was encountered\n");
  EXPECT_EQ(d.cls, "cuda_runtime");
  ASSERT_NE(finding(d, "context"), nullptr);
  EXPECT_EQ(finding(d, "context")->evidence->values.at("xid"), "31");
  EXPECT_EQ(diagnose_text("NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n").cls,
            "gpu_hardware");
}

// Rank 3 cannot find its data shard and exits; rank 0 then sees the NCCL
// connection fail. Rule order alone would pick the NCCL error; the log shows
// rank 3 failing first.
TEST(RootCause, EarliestRankDecidesBetweenSpecificCauses) {
  const std::string log =
      "[rank0]: step 10 loss 3.2\n"
      "[rank3]: FileNotFoundError: [Errno 2] No such file or directory: '/data/shard-0003.bin'\n"
      "[rank0]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled "
      "system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n";
  Diagnosis d = diagnose_text(log);
  EXPECT_EQ(d.cls, "file_not_found");
  ASSERT_FALSE(d.evidence.empty());
  EXPECT_EQ(d.evidence.front().rank, 3);
  const Finding* other = finding(d, "also_matched");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->cls, "nccl");
  EXPECT_NE(other->message.find("rank 3's failure comes earlier"), std::string::npos) << other->message;

  // Inside one event, rule order decides: the more specific class wins.
  Diagnosis same = diagnose_text("[rank0]: RuntimeError: CUDA error: out of memory\n");
  EXPECT_EQ(same.cls, "cuda_oom");
  // And a peer-loss symptom on the same rank is a consequence, not a rival.
  Diagnosis lost = diagnose_text(
      "[rank0]: FileNotFoundError: [Errno 2] No such file or directory: '/data/shard-0003.bin'\n"
      "[rank0]: ncclRemoteError: A call failed possibly due to a network error or a remote process "
      "exiting prematurely.\n");
  EXPECT_EQ(lost.cls, "file_not_found");
}

namespace {

const char* kSummary =
    "0: torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
    "0: ============================================================\n"
    "0: train.py FAILED\n"
    "0: ------------------------------------------------------------\n"
    "0: Failures:\n"
    "0: [1]:\n"
    "0:   time      : 2026-11-22_09:37:27\n"
    "0:   host      : node-2\n"
    "0:   rank      : 5 (local_rank: 1)\n"
    "0:   exitcode  : -15 (pid: 9305)\n"
    "0:   error_file: <N/A>\n"
    "0:   traceback : Signal 15 (SIGTERM) received by PID 9305\n"
    "0: [2]:\n"
    "0:   time      : 2026-11-22_09:37:27\n"
    "0:   host      : node-2\n"
    "0:   rank      : 6 (local_rank: 2)\n"
    "0:   exitcode  : 1 (pid: 9306)\n"
    "0:   error_file: <N/A>\n"
    "0:   traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
    "0: ------------------------------------------------------------\n"
    "0: Root Cause (first observed failure):\n"
    "0: [0]:\n"
    "0:   time      : 2026-11-22_09:37:25\n"
    "0:   host      : node-2\n"
    "0:   rank      : 4 (local_rank: 0)\n"
    "0:   exitcode  : -6 (pid: 9304)\n"
    "0:   error_file: <N/A>\n"
    "0:   traceback : Signal 6 (SIGABRT) received by PID 9304\n"
    "0: ============================================================\n";

}  // namespace

TEST(Launcher, SummaryIsReadPerFailedWorker) {
  Diagnosis d = diagnose_text(kSummary);
  ASSERT_TRUE(d.launcher);
  ASSERT_TRUE(d.launcher->root_cause);
  const FailedWorker& root = *d.launcher->root_cause;
  EXPECT_EQ(root.rank, 4);
  EXPECT_EQ(root.local_rank, 0);
  EXPECT_EQ(root.host, "node-2");
  EXPECT_EQ(root.time, "2026-11-22_09:37:25");
  EXPECT_EQ(root.exit_code, -6);
  EXPECT_EQ(root.signal, 6);
  EXPECT_EQ(root.signal_name, "SIGABRT");
  EXPECT_EQ(root.line, 23u);
  EXPECT_EQ(d.launcher->other_failure_count, 2u);
  ASSERT_EQ(d.launcher->other_failures.size(), 2u);
  EXPECT_EQ(d.launcher->other_failures[0].rank, 5);
  EXPECT_EQ(d.launcher->other_failures[0].signal_name, "SIGTERM");
  EXPECT_EQ(d.launcher->other_failures[1].rank, 6);
  EXPECT_EQ(d.launcher->other_failures[1].exit_code, 1);
  EXPECT_FALSE(d.launcher->other_failures[1].signal);
  bool noted = false;
  for (const auto& s : d.verdict.shows)
    noted |= s.find("the launcher's summary names rank 4 on node-2 as its first observed failure "
                    "(line 23): exit code -6 (SIGABRT); 2 other ranks failed after it") == 0;
  EXPECT_TRUE(noted);
}

TEST(Launcher, FieldsAwayFromASummaryAreNotRead) {
  // A config dump's aligned `rank      : 3` is not a failed worker.
  Diagnosis d = diagnose_text("config:\n  rank      : 3 (local_rank: 3)\n  exitcode  : 1 (pid: 1)\n");
  EXPECT_FALSE(d.launcher);
  // Two summaries (an elastic restart, then the final failure): the last one counts.
  std::string twice = std::string(kSummary) + "restarting\nrestarting\nrestarting\nrestarting\n" +
                      "Root Cause (first observed failure):\n[0]:\n"
                      "  time      : 2026-11-22_10:00:00\n  rank      : 7 (local_rank: 3)\n"
                      "  exitcode  : -9 (pid: 1)\n";
  Diagnosis last = diagnose_text(twice);
  ASSERT_TRUE(last.launcher && last.launcher->root_cause);
  EXPECT_EQ(last.launcher->root_cause->rank, 7);
  EXPECT_EQ(last.launcher->root_cause->signal_name, "SIGKILL");
  EXPECT_EQ(last.launcher->other_failure_count, 0u);
}

TEST(RootCause, FailureOnTheWayOutDoesNotHideATrainingProblem) {
  // The loss went NaN; the run still reached its end and then aborted at exit.
  Diagnosis nan = diagnose_text(
      "step 1 loss 11.4\nstep 10 loss 10.6\nstep 20 loss nan\nstep 30 loss nan\ntraining complete\n"
      "terminate called without an active exception\n",
      1);
  EXPECT_EQ(nan.cls, "nan_loss");
  const Finding* exit = finding(nan, "after_completion");
  ASSERT_NE(exit, nullptr);
  EXPECT_EQ(exit->cls, "native_abort");
  // Three steps: another rank aborted at exit before this one printed its
  // completion line.
  Diagnosis few = diagnose_text(
      "step 1 loss 12.3\nstep 2 loss 7.9\nstep 3 loss 10.4\n"
      "terminate called without an active exception\ntraining complete\n",
      1);
  EXPECT_EQ(few.cls, "undertrained");
  EXPECT_NE(finding(few, "after_completion"), nullptr);
  // With nothing wrong in the training, the abort is still why the job failed.
  std::string fine;
  for (int s = 1; s <= 40; ++s) fine += "step " + std::to_string(s * 10) + " loss " + std::to_string(10.0 / s) + "\n";
  Diagnosis aborted = diagnose_text(fine + "training complete\nterminate called without an active exception\n", 1);
  EXPECT_EQ(aborted.cls, "native_abort");
  EXPECT_EQ(finding(aborted, "after_completion"), nullptr);
}

// A line logged at INFO or WARNING level that names an error is what the
// program reported and went on from: context, not the cause.
TEST(LineReading, LoggedWarningsAreContextNotCause) {
  std::string log =
      "[2023-12-03 14:53:32,330] torch._dynamo.convert_frame: [WARNING] FileNotFoundError: [Errno 2] "
      "No such file or directory: 'ldconfig'\n"
      "gpu-node-03:1234:1300 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal "
      "network plugin.\n";
  log += falling_run(300);
  Diagnosis d = diagnose_text(log, 0);
  EXPECT_EQ(d.cls, "healthy");
  const Finding* logged = finding(d, "context");
  ASSERT_NE(logged, nullptr);
  EXPECT_EQ(logged->reason, "below_severity");
  EXPECT_EQ(logged->cls, "file_not_found");
  ASSERT_TRUE(logged->evidence);
  EXPECT_EQ(logged->evidence->severity, "warning");
  // The same words raised (no severity stated) decide.
  EXPECT_EQ(diagnose_text("FileNotFoundError: [Errno 2] No such file or directory: 'data/train.bin'\n", 1).cls,
            "file_not_found");
}

// A completion line behind a logging prefix and decoration is still read.
TEST(LineReading, CompletionBehindLoggingPrefixes) {
  const std::string log = falling_run(300, 10, "INFO:__main__:");
  EXPECT_EQ(diagnose_text(log + "INFO:__main__:\xe2\x9c\x85 Training completed successfully!\n").cls, "healthy");
  EXPECT_EQ(diagnose_text(log + "2025-10-02 14:29:20,764 - INFO - [__main__] - \xf0\x9f\x8e\x89 === Training "
                                "Complete ===\n").cls,
            "healthy");
}

// Whatever its class, a cause after which the same process trained on for a
// long while (more than an output buffer's worth of readings) was survived.
TEST(LineReading, AnyCauseIsSurvivedWhenTrainingGoesOn) {
  std::string log = "step 1 loss 3.0\nAssertionError: batch was empty\n";
  const std::string after = falling_run(400);
  Diagnosis d = diagnose_text(log + after);
  EXPECT_NE(d.cls, "assertion");
  EXPECT_TRUE(has_finding(d, "recovered", "assertion"));
  // A few readings flushed from a buffer after the crash are not survival.
  EXPECT_EQ(diagnose_text(log + "step 2 loss 2.9\nstep 3 loss 2.8\nstep 4 loss 2.7\n", 1).cls, "assertion");
}

// How the job was stopped: other schedulers' records, stops raised inside
// Python, a signal exit over a generic wrapper, a launcher reaping workers.
TEST(Termination, SchedulersAndStopsFromOutside) {
  EXPECT_EQ(diagnose_text("epoch 3 loss 1.2\nUser defined signal 2\n\nTERM_RUNLIMIT: job killed after reaching "
                          "LSF run time limit.\nExited with exit code 140.\n",
                          140)
                .cls,
            "timeout");
  EXPECT_EQ(diagnose_text("wandb: Tracking run\nTERM_OWNER: job killed by owner.\nExited with exit code 143.\n",
                          143)
                .cls,
            "cancelled");
  EXPECT_EQ(diagnose_text("=>> PBS: job killed: walltime 86432 exceeded limit 86400\n").cls, "timeout");
  EXPECT_EQ(diagnose_text("=>> PBS: job killed: mem 134217728kb exceeded limit 125829120kb\n").cls, "oom_killer");
  // Kubernetes: an eviction for the node's memory is the job's memory; other
  // evictions and preemptions take the node back; a lost node; a container's
  // exit code in `kubectl describe`.
  const std::string evicted = "step 200 loss 2.10\nStatus:           Failed\nReason:           Evicted\n";
  EXPECT_EQ(diagnose_text(evicted + "Message:          The node was low on resource: memory. Container "
                                    "trainer was using 61234560Ki, request is 32Gi.\n")
                .cls,
            "oom_killer");
  EXPECT_EQ(diagnose_text(evicted + "Message:          The node was low on resource: ephemeral-storage.\n").cls,
            "preempted");
  EXPECT_EQ(diagnose_text("step 200 loss 2.10\n  Normal   Preempted  2m   default-scheduler  Preempted by "
                          "ml/llm-finetune-7c9f on node gke-a100-pool-1\n")
                .cls,
            "preempted");
  EXPECT_EQ(diagnose_text("Reason:       NodeLost\nMessage:      Node gpu-node-07 which was running pod "
                          "train-worker-3 is unresponsive\n")
                .cls,
            "node_failure");
  EXPECT_EQ(diagnose_text("step 200 loss 2.10\n    State:          Terminated\n      Reason:       Error\n"
                          "      Exit Code:    139\n")
                .cls,
            "segfault");
  EXPECT_EQ(diagnose_text("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
                          "KeyboardInterrupt\n",
                          130)
                .cls,
            "cancelled");
  // Nothing in the log but the exit status: SIGTERM is a stop from outside.
  EXPECT_EQ(diagnose_text("step 1 loss 2.0\n", 143).cls, "cancelled");
  // A signal exit says more than a wrapper exception around it.
  EXPECT_EQ(diagnose_text("Traceback (most recent call last):\nsubprocess.CalledProcessError: Command "
                          "'['python', '-u', 'train.py']' died with <Signals.SIGSEGV: 11>.\n")
                .cls,
            "segfault");
  EXPECT_EQ(diagnose_text("Traceback (most recent call last):\nValueError: bad\n", -11).cls, "segfault");
  // Workers the launcher terminated after one failed do not outrank that failure.
  EXPECT_EQ(diagnose_text("[rank1]: Traceback (most recent call last):\n[rank1]: ValueError: bad value\n"
                          "  exitcode  : 1 (pid: 10)\n  exitcode  : -15 (pid: 11)  (SIGTERM)\n")
                .cls,
            "traceback");
  // LSF's success record is a completion.
  const std::string done = falling_run(300);
  EXPECT_EQ(diagnose_text(done + "Successfully completed.\n").cls, "healthy");
}

// A stop from outside says how the job ended; a loss that had already gone
// wrong before it is the cause.
TEST(Termination, StopAfterTheLossWentWrong) {
  std::string log;
  for (int epoch = 1; epoch <= 40; ++epoch)
    log += "epoch " + std::to_string(epoch) + " loss " + std::to_string(epoch < 5 ? 3.0 : 3e31) + "\n";
  Diagnosis d = diagnose_text(log + "TERM_OWNER: job killed by owner.\n", 143);
  EXPECT_EQ(d.cls, "loss_divergence");
  EXPECT_TRUE(has_finding(d, "stop", "cancelled", "after_training_problem"));
  // With a healthy loss, the stop is the answer.
  std::string fine;
  for (int epoch = 1; epoch <= 40; ++epoch)
    fine += "epoch " + std::to_string(epoch) + " loss " + std::to_string(3.0 / epoch) + "\n";
  EXPECT_EQ(diagnose_text(fine + "TERM_OWNER: job killed by owner.\n", 143).cls, "cancelled");
  // A loss that fell, if less than a run's should, had not gone wrong before
  // the stop: the stop cut the run short. One that did not fall at all had.
  auto slow = [](double slope) {
    std::string log;
    for (int step = 1; step <= 60; ++step)
      log += "[Step " + std::to_string(step) + "/100] Loss: " +
             std::to_string(5.3 - slope * step + 0.3 * ((step * 7) % 5 - 2)) + "\n";
    return log + "slurmstepd: error: *** JOB 760737 ON gpu-node-03 CANCELLED AT 2025-08-16T16:27:59 ***\n";
  };
  EXPECT_EQ(diagnose_text(slow(0.01)).cls, "cancelled");
  Diagnosis flat = diagnose_text(slow(-0.001));
  EXPECT_EQ(flat.cls, "loss_divergence");
  EXPECT_TRUE(has_finding(flat, "stop", "cancelled", "after_training_problem"));
}

// One timeline per job: between failure events the earliest decides, inside
// one event (a traceback, `terminate called` and its `what():`) rule order.
TEST(RootCause, EarliestFailureEventDecides) {
  // The scheduler reports the OOM kill (the whole job, untagged); the peers
  // then lose their connection. Rule order alone would pick NCCL.
  const std::string oom =
      "step 100 loss 2.1\n"
      "slurmstepd: error: Detected 1 oom_kill event in StepId=630209.0. Some of the step tasks have been OOM Killed.\n"
      "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
      "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n";
  Diagnosis d = diagnose_text(oom);
  EXPECT_EQ(d.cls, "oom_killer");
  EXPECT_TRUE(has_finding(d, "also_matched", "nccl", "earlier_event"));
  // A peer-loss symptom (the remote process exited) is a consequence of the
  // failure, wherever it falls, and decides only when nothing else does.
  const std::string peer_lost =
      "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
      "ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.21.5\n";
  Diagnosis before = diagnose_text("step 100 loss 2.1\n" + peer_lost +
                                   "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n");
  EXPECT_EQ(before.cls, "cuda_oom");
  EXPECT_TRUE(has_finding(before, "cascade", "nccl"));
  EXPECT_EQ(diagnose_text(peer_lost).cls, "nccl");
  // A missing file, then a crash on the way out much later: the first failure.
  std::string later_crash = "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.bin'\n";
  for (int i = 0; i < 60; ++i) later_crash += "cleaning up worker " + std::to_string(i) + "\n";
  later_crash += "Segmentation fault (core dumped)\n";
  EXPECT_EQ(diagnose_text(later_crash).cls, "file_not_found");
  // One event: the abort and the CUDA error it carries.
  EXPECT_EQ(diagnose_text("terminate called after throwing an instance of 'c10::Error'\n"
                          "  what():  CUDA error: an illegal memory access was encountered\n"
                          "Aborted (core dumped)\n")
                .cls,
            "cuda_runtime");
}

// A deep traceback: `frames` frames of `prefix`, each with its code line.
std::string deep_frames(const std::string& prefix, int frames) {
  std::string out;
  for (int i = 0; i < frames; ++i)
    out += prefix + "  File \"/w/model.py\", line " + std::to_string(i + 10) + ", in forward\n" +
           prefix + "    return self.block(x)\n";
  return out;
}

TEST(RootCause, AnExceptionDatesFromItsTraceback) {
  // Rank 1's traceback began first; rank 0's error line comes while rank 1's
  // is still printing. The exception is as old as its traceback.
  const std::string interleaved =
      "step 100 loss 2.1\n"
      "[rank1]: Traceback (most recent call last):\n" + deep_frames("[rank1]: ", 20) +
      "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n" +
      deep_frames("[rank1]: ", 10) +
      "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n";
  Diagnosis d = diagnose_text(interleaved);
  EXPECT_EQ(d.cls, "cuda_runtime");
  EXPECT_TRUE(has_finding(d, "also_matched", "cuda_oom", "earlier_rank"));
  // A frame line and the final line of one long traceback are one event,
  // however far apart: inside it, rule order (the allocation failed while
  // a checkpoint was read).
  const std::string one_event =
      "Traceback (most recent call last):\n"
      "  File \"/opt/venv/lib/python3.11/site-packages/torch/serialization.py\", line 1025, in load\n"
      "    return _load(opened_zipfile, map_location, pickle_module)\n" +
      deep_frames("", 30) +
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n";
  EXPECT_EQ(diagnose_text(one_event).cls, "cuda_oom");
  // A chained exception continues the event its first traceback began.
  const std::string chained =
      "Traceback (most recent call last):\n"
      "  File \"/opt/venv/lib/python3.11/site-packages/torch/serialization.py\", line 1025, in load\n" +
      deep_frames("", 25) +
      "KeyError: 'model'\n\nDuring handling of the above exception, another exception occurred:\n\n"
      "Traceback (most recent call last):\n" + deep_frames("", 5) +
      "RuntimeError: CUDA error: device-side assert triggered\n";
  EXPECT_EQ(diagnose_text(chained).cls, "cuda_runtime");
}

// Exceptions as objects: a rule can ask which code raised the exception a
// line closes, and whether training had begun.
TEST(Exceptions, DecidedByTheFrameThatRaisedItAndThePhase) {
  auto traceback = [](const std::string& innermost) {
    return "Traceback (most recent call last):\n"
           "  File \"/work/finetune.py\", line 120, in <module>\n"
           "    trainer.train()\n"
           "  File \"/opt/venv/lib/python3.11/site-packages/transformers/trainer.py\", line 2052, in train\n"
           "    return inner_training_loop(\n" +
           innermost + "ValueError: the learning-rate schedule needs a known number of steps\n";
  };
  const std::string by_trainer =
      "  File \"/opt/venv/lib/python3.11/site-packages/transformers/trainer.py\", line 1008, in "
      "create_scheduler\n    raise ValueError(\n";
  const std::string by_user = "  File \"/work/data.py\", line 12, in __len__\n    raise ValueError(\n";
  // The framework's setup code rejected the configuration.
  EXPECT_EQ(diagnose_text(traceback(by_trainer), 1).cls, "config_error");
  // Raised by the user's own code, through the same Trainer: not a configuration error.
  EXPECT_NE(diagnose_text(traceback(by_user), 1).cls, "config_error");
  // Raised by the framework after training had begun: not setup.
  EXPECT_NE(diagnose_text("step 10 loss 2.5\nstep 20 loss 2.4\n" + traceback(by_trainer), 1).cls,
            "config_error");
  // Raised inside a training step, in a pasted piece with no loss reading
  // before it: the frames say training had begun.
  const std::string in_step =
      "  File \"/opt/venv/lib/python3.11/site-packages/transformers/trainer.py\", line 3579, in "
      "training_step\n    loss = self.compute_loss(model, inputs, num_items_in_batch=n)\n";
  EXPECT_NE(diagnose_text(traceback(in_step + by_trainer), 1).cls, "config_error");
  // Behind rank prefixes, the traceback is read per rank.
  std::string ranked;
  std::string tb = traceback(by_trainer);
  for (std::size_t pos = 0, next; pos < tb.size(); pos = next + 1) {
    next = tb.find('\n', pos);
    ranked += "[rank1]: " + tb.substr(pos, next - pos) + "\n";
  }
  EXPECT_EQ(diagnose_text(ranked, 1).cls, "config_error");
}

TEST(Exceptions, ConfigurationChecksThatAssert) {
  // DeepSpeed and Megatron validate their configuration with assert: raised
  // there, before training, an AssertionError is a rejected configuration.
  const std::string deepspeed =
      "Traceback (most recent call last):\n"
      "  File \"/work/train.py\", line 40, in <module>\n"
      "    engine, _, _, _ = deepspeed.initialize(model=model, config=cfg)\n"
      "  File \"/opt/venv/lib/python3.11/site-packages/deepspeed/runtime/config.py\", line 900, in _do_error_check\n"
      "    assert self.zero_optimization_stage <= ZeroStageEnum.max_stage, (\n"
      "AssertionError: DeepSpeedConfig: Maximum supported ZeRO stage is 3\n";
  EXPECT_EQ(diagnose_text(deepspeed, 1).cls, "config_error");
  std::string in_model = deepspeed;
  in_model.replace(in_model.find("deepspeed/runtime/config.py"), 27, "my_project/model/attention.py");
  EXPECT_EQ(diagnose_text(in_model, 1).cls, "assertion");
  // A constructor rejecting a keyword before training; the same TypeError
  // once training runs is a bug in the code.
  const std::string kwarg =
      "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'\n";
  EXPECT_EQ(diagnose_text(kwarg, 1).cls, "config_error");
  EXPECT_EQ(diagnose_text("step 10 loss 2.5\nstep 20 loss 2.4\n" + kwarg, 1).cls, "traceback");
}

TEST(Exceptions, HubClientAndDatasetLibraryErrorsWhateverTheirWording) {
  const std::string hub =
      "Traceback (most recent call last):\n"
      "  File \"/work/train.py\", line 10, in <module>\n"
      "    tok = AutoTokenizer.from_pretrained(name)\n"
      "  File \"/opt/venv/lib/python3.11/site-packages/transformers/utils/hub.py\", line 403, in cached_file\n"
      "    resolved_file = hf_hub_download(\n"
      "  File \"/opt/venv/lib/python3.11/site-packages/requests/adapters.py\", line 700, in send\n"
      "    raise ConnectTimeout(e, request=request)\n"
      "requests.exceptions.ConnectTimeout: (MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', "
      "port=443): Max retries exceeded\"), '(Request ID: 1)')\n";
  EXPECT_EQ(diagnose_text(hub, 1).cls, "asset_error");
  // The same error type away from the hub client (and its host) is not an
  // asset error.
  std::string elsewhere = hub;
  elsewhere.replace(elsewhere.find("transformers/utils/hub.py"), 25, "wandb/sdk/internal/sender.py");
  elsewhere.replace(elsewhere.find("huggingface.co"), 14, "api.wandb.ai");
  EXPECT_NE(diagnose_text(elsewhere, 1).cls, "asset_error");

  const std::string column =
      "Traceback (most recent call last):\n"
      "  File \"/work/train.py\", line 30, in <module>\n"
      "    texts = ds[\"text\"]\n"
      "  File \"/opt/venv/lib/python3.11/site-packages/datasets/arrow_dataset.py\", line 2762, in __getitem__\n"
      "    return self._getitem(key)\n"
      "  File \"/opt/venv/lib/python3.11/site-packages/datasets/formatting/formatting.py\", line 587, in _check_valid_column_key\n"
      "    raise KeyError(f\"Column {key} not in the dataset. Current columns in the dataset: {columns}\")\n"
      "KeyError: \"Column text not in the dataset. Current columns in the dataset: ['prompt']\"\n";
  EXPECT_EQ(diagnose_text(column, 1).cls, "data_error");
}

// NCCL reports its own failures at WARN level; the rules that read them say so.
TEST(LineReading, NcclWarnLinesAreNcclsErrors) {
  EXPECT_EQ(diagnose_text("step 10 loss 2.0\ngpu-node-03:41872:41901 [3] include/alloc.h:103 NCCL WARN Cuda "
                          "failure 2 'out of memory'\n",
                          1)
                .cls,
            "cuda_oom");
  // srun's and bash's reports of an abort, behind their prefixes.
  EXPECT_EQ(diagnose_text("srun: error: gpu-node-01: task 3: Aborted\n").cls, "native_abort");
  EXPECT_EQ(diagnose_text("/var/spool/slurmd/job7/slurm_script: line 12: 4242 Aborted                 (core dumped) "
                          "python train.py\n")
                .cls,
            "native_abort");
}

// Progress that reached the run's planned length is evidence of completion.
TEST(Completion, ProgressThatReachedThePlannedLength) {
  std::string mm = "runner = dict(type='EpochBasedRunner', max_epochs=3)\n";
  for (int epoch = 1; epoch <= 3; ++epoch) {
    for (int it = 100; it <= 500; it += 100)
      mm += "2022-10-09 06:31:00,973 - mmcls - INFO - Epoch [" + std::to_string(epoch) + "][" +
            std::to_string(it) + "/500]\tlr: 1.000e-04, loss: " + std::to_string(2.0 / (epoch * it / 100.0)) + "\n";
    mm += "2022-10-09 06:31:23,787 - mmcls - INFO - Saving checkpoint at " + std::to_string(epoch) + " epochs\n";
  }
  EXPECT_EQ(diagnose_text(mm).cls, "healthy");
  // One epoch short of the plan: no evidence the run ended.
  EXPECT_EQ(diagnose_text(mm.substr(0, mm.rfind("2022-10-09 06:31:00,973 - mmcls - INFO - Epoch [3][500/500]"))).cls,
            "unknown");
  // A step counter that states its own total.
  std::string nmt;
  for (int step = 500; step <= 5000; step += 500)
    nmt += "[2025-09-21 09:28:23,321 INFO] Step " + std::to_string(step) + "/ 5000; acc:  98.62; ppl:  1.11\n";
  EXPECT_EQ(diagnose_text(nmt).cls, "healthy");
  EXPECT_EQ(diagnose_text(nmt.substr(0, nmt.find("Step 5000"))).cls, "unknown");
}

TEST(Exceptions, CheckpointLoadersAndCudaInitialisation) {
  const std::string header =
      "Traceback (most recent call last):\n"
      "  File \"/work/train.py\", line 44, in <module>\n"
      "    model = AutoModelForCausalLM.from_pretrained(path)\n";
  const std::string ckpt =
      header +
      "  File \"/opt/venv/lib/python3.11/site-packages/transformers/modeling_utils.py\", line 4014, in "
      "_load_pretrained_model\n    state_dict = load_state_dict(shard_file)\n"
      "  File \"/opt/venv/lib/python3.11/site-packages/safetensors/torch.py\", line 311, in load_file\n"
      "    with safe_open(filename, framework=\"pt\", device=device) as f:\n"
      "safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge\n";
  EXPECT_EQ(diagnose_text(ckpt, 1).cls, "checkpoint_load_error");
  const std::string cuda =
      "Traceback (most recent call last):\n"
      "  File \"/work/train.py\", line 12, in <module>\n"
      "    model.cuda()\n"
      "  File \"/opt/venv/lib/python3.11/site-packages/torch/cuda/__init__.py\", line 319, in _lazy_init\n"
      "    torch._C._cuda_init()\n"
      "RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 804: forward compatibility was "
      "attempted on non supported HW\n";
  EXPECT_EQ(diagnose_text(cuda, 1).cls, "env_error");
  // The same RuntimeError raised in the training step is not an environment error.
  std::string step = cuda;
  step.replace(step.find("torch/cuda/__init__.py\", line 319, in _lazy_init"), 48,
               "torch/nn/modules/module.py\", line 1775, in _call_impl");
  EXPECT_NE(diagnose_text(step, 1).cls, "env_error");
}

// A Python warning whose message goes on to the next line: that line is the
// warning's too.
TEST(LineReading, AWarningsSecondLineIsTheWarning) {
  std::string log =
      "/opt/venv/lib/python3.11/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load image "
      "Python extension:\n"
      "libc10_cuda.so: cannot open shared object file: No such file or directory\n"
      "  warn(\n";
  log += falling_run(300);
  Diagnosis d = diagnose_text(log, 0);
  EXPECT_EQ(d.cls, "healthy");
  const Finding* logged = finding(d, "context");
  ASSERT_NE(logged, nullptr);
  EXPECT_EQ(logged->reason, "below_severity");
  // The same line standing alone is an error.
  EXPECT_EQ(diagnose_text("OSError: libc10_cuda.so: cannot open shared object file: No such file or directory\n", 1)
                .cls,
            "env_error");
}

// Slurm cancels a step after its cgroup's OOM kill, and a job it killed past
// its memory limit: the cancel is the kill's. A cancel alone is a cancel, and
// the end-of-job note that memory went past the limit at some point kills
// nothing.
TEST(RootCause, SlurmsCancelAfterItsMemoryKillIsTheKill) {
  const std::string steps = "epoch 1 step 40 loss 2.31\nepoch 1 step 41 loss 2.29\n";
  const std::string cancel = "slurmstepd-gpu-node-01: error: *** STEP 9411285.0 ON gpu-node-01 CANCELLED AT 2022-05-17T17:58:10 ***\n";
  EXPECT_EQ(diagnose_text(steps +
                          "slurmstepd-gpu-node-01: error: Detected 1 oom-kill event(s) in StepId=9411285.0. Some of "
                          "your processes may have been killed by the cgroup out-of-memory handler.\n"
                          "srun: error: gpu-node-01: task 0: Out Of Memory\n" + cancel)
                .cls,
            "oom_killer");
  EXPECT_EQ(diagnose_text(steps + "slurmstepd: error: Job 7518 exceeded memory limit (626359956 > 512000000), being killed\n"
                                  "slurmstepd: error: Exceeded job memory limit\n"
                                  "slurmstepd: error: *** JOB 7518 ON gpu-node-01 CANCELLED AT 2022-06-10T17:11:35 ***\n")
                .cls,
            "oom_killer");
  EXPECT_EQ(diagnose_text(steps + cancel).cls, "cancelled");
  EXPECT_NE(diagnose_text(steps + "slurmstepd: error: Exceeded step memory limit at some point.\n").cls, "oom_killer");
}
