#include <gtest/gtest.h>

#include "test_util.hpp"

using namespace gpudiag;
using namespace gpudiag::testing;

namespace {

struct ClassCase {
  const char* name;
  const char* log;
  const char* cls;
  const char* g15;
};

// One log per class the shipped rules decide, written in the shape each
// program prints (docs: log-formats.md).
const ClassCase kCases[] = {
    {"cuda_oom",
     "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
     "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 15.78 GiB "
     "total capacity; 13.1 GiB already allocated; 1.02 GiB free; 13.6 GiB reserved in total by PyTorch)\n",
     "cuda_oom", "cuda_oom"},
    {"gpu_hardware", "[ 812.33] NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python, GPU has fallen off the bus.\n",
     "gpu_hardware", "cuda_runtime"},
    {"cuda_runtime", "RuntimeError: CUDA error: an illegal memory access was encountered\n", "cuda_runtime",
     "cuda_runtime"},
    {"device_mismatch",
     "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n",
     "device_mismatch", "device_mismatch"},
    {"env_error_arch", "RuntimeError: CUDA capability sm_90 is not compatible with this build\n", "env_error",
     "runtime_error"},
    {"env_error_library",
     "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n", "env_error",
     "missing_module"},
    {"rendezvous_failure",
     "torch.distributed.DistNetworkError: The client socket has timed out after 1800000ms while trying to "
     "connect to (10.0.0.1, 29500).\n",
     "rendezvous_failure", "nccl"},
    {"nccl",
     "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled system "
     "error, NCCL version 2.18.5\n",
     "nccl", "nccl"},
    {"nccl_timeout",
     "[E ProcessGroupNCCL.cpp:828] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=267, "
     "OpType=ALLREDUCE, Timeout(ms)=800) ran for 803 milliseconds before timing out.\n",
     "nccl_timeout", "nccl"},
    {"nccl_timeout_gloo",
     "[default0]:[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
     "unbound_buffer.cc:78] Timed out waiting 10000ms for recv operation to complete\n",
     "nccl_timeout", "nccl"},
    {"oom_killer", "[ 4821.553190] Out of memory: Killed process 40822 (python) total-vm:8923144kB\nKilled\n",
     "oom_killer", "oom_killer"},
    {"ram_oom", "Traceback (most recent call last):\n    buf = bytearray(10 ** 13)\nMemoryError\n", "ram_oom",
     "ram_oom"},
    {"ram_oom_bad_alloc",
     "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n", "ram_oom",
     "ram_oom"},
    {"bus_error",
     "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n",
     "bus_error", "ram_oom"},
    {"segfault", "bash: line 1: 2552014 Segmentation fault      (core dumped) python train.py\n", "segfault",
     "segfault"},
    {"native_abort",
     "terminate called after throwing an instance of 'c10::Error'\n  what():  INTERNAL ASSERT FAILED\n"
     "Aborted (core dumped)\n",
     "native_abort", "segfault"},
    {"missing_module", "ModuleNotFoundError: No module named 'flash_attn_3'\n", "missing_module",
     "missing_module"},
    {"asset_error",
     "OSError: meta-llama/Llama-9 is not a local folder and is not a valid model identifier listed on "
     "'https://huggingface.co/models'\n",
     "asset_error", "file_not_found"},
    {"file_not_found", "FileNotFoundError: [Errno 2] No such file or directory: '/data/train.json'\n",
     "file_not_found", "file_not_found"},
    {"permission", "PermissionError: [Errno 13] Permission denied: '/etc/ckpt.pt'\n", "permission",
     "permission"},
    {"checkpoint_load_error",
     "RuntimeError: Error(s) in loading state_dict for ResNet: size mismatch for fc.weight\n",
     "checkpoint_load_error", "runtime_error"},
    {"nan_loss", "step 0001 | loss = 27.0\nstep 0002 | loss = nan\nNaN detected in loss, aborting.\n",
     "nan_loss", "nan_loss"},
    {"nan_loss_scale_collapse",
     "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0\n"
     "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 1.52587890625e-05\n",
     "nan_loss", "nan_loss"},
    {"nan_loss_bare_step_value", "76970 2.6265104\n76980 nan\n76990 nan\n", "nan_loss", "nan_loss"},
    {"div_zero", "ZeroDivisionError: float division by zero\n", "div_zero", "div_zero"},
    {"assertion_bare", "Traceback (most recent call last):\n    assert a == b\nAssertionError\n", "assertion",
     "assertion"},
    {"runtime_error", "RuntimeError: Trying to resize storage that is not resizable\n", "runtime_error",
     "runtime_error"},
    {"traceback", "Traceback (most recent call last):\n  File \"x.py\", line 3\nKeyError: 'warmup_steps'\n",
     "traceback", "traceback"},
    {"config_error", "usage: train.py [-h] [--lr LR]\ntrain.py: error: argument --lr: invalid float value: '3e-4x'\n",
     "config_error", "traceback"},
    {"data_error",
     "Traceback (most recent call last):\njson.decoder.JSONDecodeError: Expecting ',' delimiter: line 1 column 57 (char 56)\n",
     "data_error", "traceback"},
    {"checkpoint_load_error_hf",
     "ValueError: Can't find a valid checkpoint at /ckpt/run-3/checkpoint-500\n", "checkpoint_load_error",
     "runtime_error"},
    {"checkpoint_load_error_optimizer_state",
     "Traceback (most recent call last):\n  File \"train.py\", line 101, in load_checkpoint\n"
     "    optimizer.load_state_dict(checkpoint['optimizer'])\n"
     "  File \"/opt/venv/lib/python3.7/site-packages/torch/optim/optimizer.py\", line 108, in load_state_dict\n"
     "    saved_groups = state_dict['param_groups']\nKeyError: 'param_groups'\n",
     "checkpoint_load_error", "runtime_error"},
    {"loss_divergence_monitor",
     "Epoch 0: 100%|##| 400/400 [44:40<00:58, 10.52it/s, v_num=3, train_loss=1.863]\n"
     "Divergence threshold reached: train_loss = 1843.2 > 100.0. Signaling Trainer to stop.\n",
     "loss_divergence", "nan_loss"},
    {"resume_from_scratch_announced",
     "--resume_from_checkpoint=latest\nCheckpoint 'latest' does not exist. Starting a new training run.\n",
     "resume_from_scratch", "generic"},
    {"env_error_no_cuda", "AssertionError: Torch not compiled with CUDA enabled\n", "env_error", "missing_module"},
    {"srun_labelled_traceback", "1: Traceback (most recent call last):\n1: KeyError: 'y'\n", "traceback",
     "traceback"},
    {"rank_prefixed_traceback", "[rank1]: Traceback (most recent call last):\n[rank1]: IndexError: list index out of range\n",
     "traceback", "traceback"},
    // A scheduler's kill outranks the collective timeouts and SIGKILLs it leaves behind.
    {"node_failure",
     "step 900 | loss 2.41\nsrun: error: Node failure on cn-0424\n[rank0]: [Rank 0] Watchdog caught collective "
     "operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600012 milliseconds "
     "before timing out.\n",
     "node_failure", "generic"},
    {"timeout",
     "step 2000 | loss 2.31\nslurmstepd: error: *** JOB 884213 ON gpu-a17 CANCELLED AT 2026-05-01T13:45:10 DUE "
     "TO TIME LIMIT ***\nKilled\n",
     "timeout", "generic"},
    {"preempted",
     "slurmstepd: error: *** STEP 77120.0 ON hgx-r3-14 CANCELLED AT 2026-05-01T13:45:10 DUE TO PREEMPTION ***\n",
     "preempted", "generic"},
    {"preempted_requeue", "Handling auto-requeue signal: 10\nrequeing job 4412...\nRequeued SLURM job: 4412\n",
     "preempted", "generic"},
    {"cancelled", "slurmstepd: error: *** JOB 884213 ON gpu-a17 CANCELLED AT 2026-05-01T13:45:10 ***\n",
     "cancelled", "generic"},
    {"cancelled_by_signal",
     "slurmstepd: error: *** JOB 9 ON n1 CANCELLED AT 2026-05-01T13:45:10 DUE to SIGNAL Terminated ***\n",
     "cancelled", "generic"},
    {"healthy",
     "{'loss': '2.731', 'epoch': '0.08'}\nTraining completed. Do not forget to share your model on "
     "huggingface.co/models =)\n",
     "healthy", "generic"},
};

class EveryClass : public ::testing::TestWithParam<ClassCase> {};

TEST_P(EveryClass, IsDiagnosed) {
  const auto& c = GetParam();
  Diagnosis d = diagnose_text(c.log);
  EXPECT_EQ(d.cls, c.cls);
  EXPECT_EQ(d.g15, c.g15);
  const ClassInfo* info = shipped_rules()->taxonomy().find(c.cls);
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(d.owner, info->owner);
  EXPECT_EQ(d.family, info->family);
  ASSERT_FALSE(d.evidence.empty());
  EXPECT_GT(d.confidence, 0.5);
  // The verdict quotes the first piece of evidence with its line number.
  const Evidence& ev = d.evidence.front();
  ASSERT_FALSE(d.verdict.shows.empty());
  const std::string& shown = d.verdict.shows.front();
  EXPECT_EQ(shown.rfind("line " + std::to_string(ev.line), 0), 0u) << shown;
  EXPECT_NE(shown.find(ev.text), std::string::npos) << shown;
  EXPECT_FALSE(d.verdict.implies.empty());
  EXPECT_FALSE(d.verdict.cannot_decide.empty());
}

INSTANTIATE_TEST_SUITE_P(Classes, EveryClass, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace

TEST(ExitCode, SignalAloneDecidesWithLowConfidence) {
  struct {
    int code;
    const char* cls;
  } cases[] = {{-9, "oom_killer"}, {137, "oom_killer"}, {-11, "segfault"}, {139, "segfault"},
               {-6, "native_abort"}, {134, "native_abort"}, {-7, "bus_error"}, {135, "bus_error"},
               {-8, "segfault"}, {136, "segfault"},
               // Stops from outside, a scheduler's limit warnings, a usage error.
               {130, "cancelled"}, {143, "cancelled"}, {-15, "cancelled"}, {140, "timeout"},
               {152, "timeout"}, {2, "config_error"}};
  for (const auto& c : cases) {
    Diagnosis d = diagnose_text("loading data\n", c.code);
    EXPECT_EQ(d.cls, c.cls) << c.code;
    EXPECT_DOUBLE_EQ(d.confidence, 0.5) << c.code;
    EXPECT_TRUE(d.evidence.empty());
    ASSERT_FALSE(d.verdict.shows.empty());
    EXPECT_NE(d.verdict.shows.front().find("exit code " + std::to_string(c.code)), std::string::npos);
  }
}

// Windows ends a crashed process with an NTSTATUS, which Python prints
// unsigned (3221225477) and cmd signed (-1073741819): 0xC0000005 is an access
// violation, what SIGSEGV is on Linux.
TEST(ExitCode, AWindowsStatusStandsForItsSignal) {
  EXPECT_EQ(parse_exit_status("3221225477"), -1073741819);
  EXPECT_EQ(parse_exit_status("-1073741819"), -1073741819);
  EXPECT_EQ(parse_exit_status("137"), 137);
  EXPECT_FALSE(parse_exit_status("4294967296"));
  EXPECT_FALSE(parse_exit_status("13x"));
  EXPECT_FALSE(parse_exit_status(""));
  struct {
    const char* code;
    const char* cls;
  } cases[] = {{"3221225477", "segfault"}, {"3221226505", "native_abort"}, {"3221225786", "cancelled"},
               {"3221225725", "segfault"}, {"3221225480", "unknown"}};
  for (const auto& c : cases) EXPECT_EQ(diagnose_text("loading data\n", *parse_exit_status(c.code)).cls, c.cls) << c.code;
  const Diagnosis d = diagnose_text("loading data\n", *parse_exit_status("3221225477"));
  ASSERT_FALSE(d.verdict.shows.empty());
  EXPECT_NE(d.verdict.shows.front().find("exit code 3221225477 (0xC0000005, STATUS_ACCESS_VIOLATION: as SIGSEGV)"),
            std::string::npos);
  // A launcher's report of it, without the exit status given.
  EXPECT_EQ(diagnose_text("subprocess.CalledProcessError: Command '['python.exe', 'train.py']' returned non-zero exit "
                          "status 3221225477.\n")
                .cls,
            "segfault");
}

TEST(ExitCode, OrdinaryFailureWithoutEvidenceIsUnknown) {
  Diagnosis d = diagnose_text("loading data\n", 1);
  EXPECT_EQ(d.cls, "unknown");
  EXPECT_EQ(d.g15, "generic");
  EXPECT_EQ(d.confidence, 0.0);
}

TEST(ExitCode, AgreeingExitCodeRaisesConfidence) {
  const std::string log = "Segmentation fault (core dumped)\n";
  EXPECT_GT(diagnose_text(log, -11).confidence, diagnose_text(log).confidence);
  Diagnosis d = diagnose_text(log, -9);  // disagrees: the log wins, a finding says so
  EXPECT_EQ(d.cls, "segfault");
  bool noted = false;
  for (const auto& f : d.findings) noted |= f.kind == "exit_code" && f.cls == "oom_killer";
  EXPECT_TRUE(noted);
}

TEST(Healthy, NeedsPositiveEvidence) {
  // No errors is not evidence of completion; an exit status of 0 after
  // training progressed is (and two steps are too few to be a training run).
  EXPECT_EQ(diagnose_text("step 1 loss 2.0\nstep 2 loss 1.5\n").cls, "unknown");
  EXPECT_EQ(diagnose_text("step 1 loss 2.0\nstep 2 loss 1.5\n", 0).cls, "undertrained");
  EXPECT_EQ(diagnose_text("loading data\nbuilding model\n", 0).cls, "unknown");
  std::string done;
  for (int step = 10; step <= 200; step += 10)
    done += "step " + std::to_string(step) + " loss " + std::to_string(3.0 / step) + "\n";
  EXPECT_EQ(diagnose_text(done).cls, "unknown");
  EXPECT_EQ(diagnose_text(done, 0).cls, "healthy");
  done += "training complete\n";
  EXPECT_EQ(diagnose_text(done).cls, "healthy");
  EXPECT_EQ(diagnose_text(done, 0).cls, "healthy");
  EXPECT_EQ(diagnose_text(done, 1).cls, "unknown");  // completed, yet the job failed
}

TEST(Priority, SpecificClassesBeatTheirWrappers) {
  // A CUDA OOM inside a RuntimeError, the watchdog's abort, NCCL error plus timeout.
  EXPECT_EQ(diagnose_text("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n").cls, "cuda_oom");
  EXPECT_EQ(diagnose_text("[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)\n"
                          "terminate called after throwing an instance of 'c10::DistBackendError'\n")
                .cls,
            "nccl_timeout");
  Diagnosis d = diagnose_text(
      "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2)\n"
      "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1275, unhandled system error, NCCL version 2.18.5\n");
  EXPECT_EQ(d.cls, "nccl");
  ASSERT_EQ(d.findings.size(), 1u);  // the timeout; the RuntimeError wrapper is not repeated
  EXPECT_EQ(d.findings[0].cls, "nccl_timeout");
  EXPECT_EQ(d.findings[0].evidence->line, 1u);
}

TEST(LookAlikes, WordsInsideOtherWordsDoNotMatch) {
  EXPECT_EQ(diagnose_text("[inject] mode=nan_loss host=a\n").cls, "unknown");
  EXPECT_EQ(diagnose_text("gpu01:1:2 [0] NCCL INFO Bootstrap : Using eth0\n").cls, "unknown");
  EXPECT_EQ(diagnose_text("lr 3e-4 loss 2.1 nanoseconds 12\n").cls, "unknown");
}

TEST(Rules, PythonFaulthandlerNamesTheSignal) {
  const std::string dump =
      "\n\nCurrent thread 0x00007f32dae18b80 (most recent call first):\n  File \"train.py\", line 186 in main\n";
  EXPECT_EQ(diagnose_text("step 40 loss 4.8489\nFatal Python error: Aborted" + dump).cls, "native_abort");
  EXPECT_EQ(diagnose_text("step 40 loss 4.8489\nFatal Python error: Segmentation fault" + dump).cls, "segfault");
  EXPECT_EQ(diagnose_text("step 40 loss 4.8489\nFatal Python error: Bus error" + dump).cls, "bus_error");
  // bash's report of a job killed by SIGFPE, with no core dumped.
  EXPECT_EQ(diagnose_text("step 40 loss 4.8489\njob.sh: line 4:  8105 Floating point exception"
                          "/usr/bin/python train.py\n").cls,
            "segfault");
}

TEST(Rules, NonFiniteLossInEveryWayItIsPrinted) {
  for (const char* line : {"loss = nan", "loss=nan", "Loss: NaN", "loss nan", "{'loss': 'nan'}",
                           "{\"loss\": NaN}", "{\"train_loss\": \"inf\"}", "loss: -inf", "lm loss | nan"}) {
    Diagnosis d = diagnose_text(std::string("step 7 ") + line + "\n");
    ASSERT_FALSE(d.evidence.empty()) << line;
    EXPECT_EQ(d.evidence.front().rule, "nan_loss.value") << line;
  }
  for (const char* line : {"loss = nanosecond timer", "loss: info", "lossnan", "loss = 0.3 (nan checks on)"})
    EXPECT_NE(diagnose_text(std::string("step 7 ") + line + "\n").cls, "nan_loss") << line;
}

TEST(Values, ExtractedFromTheMatchedLine) {
  Diagnosis d = diagnose_text(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 0 has a total capacity of "
      "79.10 GiB of which 2.12 GiB is free. Of the allocated memory 72.40 GiB is allocated by PyTorch, and "
      "3.95 GiB is reserved by PyTorch but unallocated.\n");
  ASSERT_EQ(d.cls, "cuda_oom");
  const auto& v = d.evidence.at(0).values;
  EXPECT_EQ(v.at("requested"), "3.91 GiB");
  EXPECT_EQ(v.at("gpu"), "0");
  EXPECT_EQ(v.at("total"), "79.10 GiB");
  EXPECT_EQ(v.at("free"), "2.12 GiB");
  EXPECT_EQ(v.at("reserved"), "3.95 GiB");
  EXPECT_NE(d.verdict.shows.at(0).find("requested 3.91 GiB"), std::string::npos);

  Diagnosis x = diagnose_text("NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, DBE\n");
  EXPECT_EQ(x.evidence.at(0).values.at("xid"), "48");
  EXPECT_EQ(x.evidence.at(0).values.at("pci"), "0000:3b:00");
  EXPECT_EQ(diagnose_text("ModuleNotFoundError: No module named 'apex'\n").evidence.at(0).values.at("module"),
            "apex");
  Diagnosis seg = diagnose_text("  traceback : Signal 11 (SIGSEGV) received by PID 8910\n");
  EXPECT_EQ(seg.cls, "segfault");
  EXPECT_EQ(seg.evidence.at(0).values.at("signal"), "SIGSEGV");
  Diagnosis abrt = diagnose_text("failed (exitcode: -6) local_rank: 1 (pid: 8910) of binary: python3\n");
  EXPECT_EQ(abrt.evidence.at(0).values.at("exit_code"), "-6");
  // A value that alternatives capture in groups of the same name.
  EXPECT_EQ(abrt.evidence.at(0).values.at("pid"), "8910");
  EXPECT_EQ(seg.evidence.at(0).values.at("pid"), "8910");
  EXPECT_EQ(diagnose_text("slurmstepd: error: *** JOB 4242 ON n1 CANCELLED AT 2026-11-02T10:00:00 DUE TO PREEMPTION ***\n")
                .evidence.at(0).values.at("job"), "4242");
  EXPECT_EQ(diagnose_text("Requeued SLURM job: 4242\n").evidence.at(0).values.at("job"), "4242");
}

// The launcher's exit report and the job's own exit status go through one
// map from signal to class: the cards' exit_signals.
TEST(ExitCode, LauncherReportsReadLikeTheJobsExitStatus) {
  struct {
    int code;
    const char* cls;
  } cases[] = {{-9, "oom_killer"}, {-11, "segfault"}, {-8, "segfault"}, {-7, "bus_error"}, {-6, "native_abort"}};
  for (const auto& c : cases) {
    const std::string code = std::to_string(c.code);
    Diagnosis summary = diagnose_text("  exitcode  : " + code + " (pid: 9305)\n");
    EXPECT_EQ(summary.cls, c.cls) << c.code;
    EXPECT_EQ(diagnose_text("loading data\n", c.code).cls, c.cls) << c.code;
  }
}

TEST(Confidence, GrowsWithIndependentSignals) {
  double one = diagnose_text("Killed\n").confidence;
  double two = diagnose_text("[ 1.0] Out of memory: Killed process 1 (python)\nsrun: error: n1: task 0: Out Of Memory\n"
                             "Memory cgroup out of memory\n").confidence;
  double with_exit = diagnose_text("Killed\n", -9).confidence;
  EXPECT_GT(one, 0.5);
  EXPECT_GT(with_exit, one);
  EXPECT_GT(two, one);
  EXPECT_LT(with_exit, 1.0);
}
