#include "gpudiag/taxonomy.hpp"

#include <algorithm>
#include <array>

namespace gpudiag {
namespace {

constexpr std::string_view kNoRerun = "no: the same inputs fail the same way";
constexpr std::string_view kMaybeRerun = "maybe: a rerun on other hardware may pass";
constexpr std::string_view kRerun = "yes: resubmitting is the remedy";

// Ordered as in taxonomy.md.
constexpr std::array kClasses = {
    // A · Startup and configuration
    ClassInfo{"missing_module", "startup", "job", "missing_module", "missing Python module",
              "a Python module the job imports is not installed in its environment",
              "install the module (or fix its name) in the job's environment, then rerun", kNoRerun,
              "whether the module is missing everywhere or only on this node's image"},
    ClassInfo{"env_error", "startup", "job", "missing_module", "environment mismatch",
              "the software environment does not match the job: a shared library, driver or "
              "GPU architecture the build expects is absent",
              "align the driver, CUDA runtime and framework build with the GPU, then rerun",
              kNoRerun, "which component is the one out of step, unless the log names it"},
    ClassInfo{"config_error", "startup", "job", "traceback", "invalid configuration",
              "the job's configuration or arguments were rejected before training started",
              "fix the argument or configuration value named in the error", kNoRerun,
              "whether other settings are also invalid: validation stops at the first"},
    ClassInfo{"data_error", "startup", "job", "traceback", "unreadable dataset",
              "the dataset could not be read or parsed",
              "check the data files and their schema at the place named in the error", kNoRerun,
              "how many records are affected"},
    ClassInfo{"asset_error", "startup", "job", "file_not_found", "model or tokenizer unavailable",
              "a model, tokenizer or checkpoint could not be obtained",
              "check the path or repository id and the credentials the job runs with", kNoRerun,
              "whether the asset exists under another name"},
    ClassInfo{"file_not_found", "startup", "job", "file_not_found", "file not found",
              "the job opened a path that does not exist",
              "create the file or correct the path; check the working directory and mounts",
              kNoRerun, "whether the path is wrong or a mount was missing on this node"},
    ClassInfo{"permission", "startup", "job", "permission", "permission denied",
              "the job lacks permission for a path it needs",
              "write to a directory the job owns, or fix the path's permissions", kNoRerun,
              "whether the permissions or the path are what is wrong"},
    // B · GPU memory and hardware
    ClassInfo{"cuda_oom", "gpu", "job", "cuda_oom", "CUDA out of memory",
              "a GPU allocation failed: the model, batch or activations need more memory than "
              "the device has free",
              "reduce the batch size or sequence length, or use activation checkpointing, "
              "mixed precision or sharding",
              "no, unless another process held GPU memory at the time",
              "whether memory was fragmented or held by another process on the same GPU"},
    ClassInfo{"gpu_hardware", "gpu", "infra", "cuda_runtime", "GPU hardware fault",
              "the GPU itself failed (Xid, ECC or a device that left the bus)",
              "drain the node and report the GPU to the operators; rerun elsewhere", kMaybeRerun,
              "whether the fault is permanent or transient"},
    ClassInfo{"cuda_runtime", "gpu", "job", "cuda_runtime", "CUDA runtime error",
              "a CUDA kernel or library call failed: an out-of-bounds index, an illegal address "
              "or a failed launch in the job's computation",
              "rerun with CUDA_LAUNCH_BLOCKING=1 to find the failing operation; check index and "
              "label ranges",
              kNoRerun, "which operation failed: CUDA errors are reported asynchronously"},
    ClassInfo{"device_mismatch", "gpu", "job", "device_mismatch", "tensors on different devices",
              "an operation received tensors on different devices",
              "move the named tensors (model, inputs, labels) to the same device", kNoRerun,
              "which tensor was left behind, unless the error names the argument"},
    // C · Distributed coordination
    ClassInfo{"rendezvous_failure", "distributed", "infra", "nccl", "rendezvous failure",
              "the ranks never formed a process group",
              "check the master address and port, the firewall, and that every node started",
              kMaybeRerun, "which node failed to join"},
    ClassInfo{"nccl_timeout", "distributed", "infra", "nccl", "collective timeout",
              "a collective operation hung until the watchdog reaped it, usually because a peer "
              "rank died or stalled first",
              "find the rank that failed first and diagnose its log", kMaybeRerun,
              "the root cause, if the rank that stalled first is not in this log"},
    ClassInfo{"nccl", "distributed", "infra", "nccl", "NCCL communication failure",
              "NCCL or c10d failed to communicate between ranks",
              "rerun with NCCL_DEBUG=INFO; check the network fabric and the peers' logs",
              kMaybeRerun, "whether the fabric or a dying peer broke the connection"},
    // D · Signals and host memory
    ClassInfo{"oom_killer", "signal", "job", "oom_killer", "killed by the OOM killer",
              "the kernel or cgroup OOM killer ended the process: host memory ran out",
              "reduce host memory use (DataLoader workers, prefetch, in-memory datasets) or ask "
              "for more memory",
              kNoRerun, "what used the memory: the kill leaves no Python traceback"},
    ClassInfo{"ram_oom", "signal", "job", "ram_oom", "host memory allocation failed",
              "a host memory allocation failed inside the process",
              "reduce the size of the host allocation or request a larger node", kNoRerun,
              "whether other processes on the node held the memory"},
    ClassInfo{"bus_error", "signal", "job", "ram_oom", "bus error (SIGBUS)",
              "the process got SIGBUS, typically DataLoader workers out of shared memory",
              "enlarge /dev/shm or lower num_workers", kNoRerun,
              "which mapping faulted"},
    ClassInfo{"segfault", "signal", "job", "segfault", "segmentation fault",
              "native code crashed with SIGSEGV",
              "get a native backtrace (faulthandler, gdb) and check extension and driver versions",
              "maybe: some crashes are nondeterministic",
              "which library crashed, without a native backtrace"},
    ClassInfo{"native_abort", "signal", "job", "segfault", "native abort (SIGABRT)",
              "native code aborted (an uncaught C++ exception or a failed check)",
              "read the what() message; fix the condition it reports", kNoRerun,
              "the Python call that led there, when no traceback was printed"},
    // E · Training correctness
    ClassInfo{"nan_loss", "training", "job", "nan_loss", "loss became NaN",
              "the loss became NaN or Inf: the optimisation is numerically unstable",
              "lower the learning rate, add gradient clipping or warm-up, check the data for bad "
              "values, or use bf16",
              kNoRerun, "which batch or layer first produced the non-finite value"},
    ClassInfo{"loss_divergence", "training", "job", "nan_loss", "loss diverged",
              "the loss stayed finite but diverged, plateaued or never decreased",
              "check the learning rate schedule, the labels and the loss function", kNoRerun,
              "whether longer training would have recovered"},
    ClassInfo{"resume_from_scratch", "training", "job", "generic", "resume started from scratch",
              "the run was asked to resume but started again from its initial state",
              "check the checkpoint path and the resume flag", kNoRerun,
              "whether a checkpoint existed at the expected place"},
    ClassInfo{"checkpoint_load_error", "training", "job", "runtime_error",
              "checkpoint could not be loaded",
              "loading a checkpoint failed: its keys or shapes do not match the model, or the "
              "file is corrupt",
              "load the checkpoint with the model configuration that wrote it, or fix the file",
              kNoRerun, "whether the checkpoint or the model definition changed"},
    ClassInfo{"undertrained", "training", "job", "generic", "too few training steps",
              "the run completed after only a handful of optimisation steps",
              "check max_steps / epochs and the dataset size", kNoRerun,
              "whether so few steps were intended"},
    // F · Cluster and scheduler events
    ClassInfo{"node_failure", "cluster", "infra", "generic", "node failure",
              "the scheduler lost a node under the job", "resubmit; report the node", kRerun,
              "what failed on the node"},
    ClassInfo{"preempted", "cluster", "scheduler", "generic", "preempted",
              "the job was preempted or requeued by the scheduler",
              "resubmit or resume from the last checkpoint", kRerun,
              "when the job will be scheduled again"},
    ClassInfo{"timeout", "cluster", "scheduler", "generic", "wall-clock limit reached",
              "the scheduler ended the job at its time limit",
              "ask for more time or checkpoint and resume", kRerun,
              "whether the run would have finished with more time"},
    ClassInfo{"cancelled", "cluster", "scheduler", "generic", "cancelled",
              "a user or operator cancelled the job", "ask who cancelled it, if unexpected",
              kRerun, "why it was cancelled"},
    // Python exceptions with no more specific class
    ClassInfo{"div_zero", "exception", "job", "div_zero", "division by zero",
              "the job divided by zero (an empty count, batch or split)",
              "guard the denominator named in the traceback", kNoRerun,
              "which value was zero, beyond the line the traceback names"},
    ClassInfo{"assertion", "exception", "job", "assertion", "assertion failed",
              "an assertion in the job's code failed", "check the condition the assertion tests",
              kNoRerun, "why the condition did not hold"},
    ClassInfo{"runtime_error", "exception", "job", "runtime_error", "runtime error",
              "a RuntimeError that no more specific class explains ended the run",
              "read the error message and the traceback above it", kNoRerun,
              "the underlying cause, beyond what the message says"},
    ClassInfo{"traceback", "exception", "job", "traceback", "uncaught Python exception",
              "an uncaught Python exception ended the run",
              "fix the code at the innermost frame of the traceback", kNoRerun,
              "whether the bad value came from the code, the data or the configuration"},
    // G · Baseline
    ClassInfo{"healthy", "baseline", "none", "generic", "healthy run",
              "the run completed normally", "nothing to do", "not needed",
              "training correctness beyond the markers quoted"},
    ClassInfo{"unknown", "baseline", "none", "generic", "undetermined",
              "the log holds no evidence the rules recognise",
              "read the end of the log and the scheduler's record for the job",
              "unknown", "why the job ended"},
};

constexpr std::array<std::string_view, 15> kG15 = {
    "cuda_oom",      "nccl",           "oom_killer",    "segfault",   "ram_oom",
    "file_not_found", "permission",    "missing_module", "div_zero",  "assertion",
    "nan_loss",      "runtime_error",  "traceback",     "device_mismatch", "cuda_runtime"};

}  // namespace

std::span<const ClassInfo> all_classes() { return kClasses; }

const ClassInfo* find_class(std::string_view id) {
  for (const auto& c : kClasses)
    if (c.id == id) return &c;
  return nullptr;
}

std::span<const std::string_view> g15_classes() { return kG15; }

bool is_g15_class(std::string_view id) {
  return std::find(kG15.begin(), kG15.end(), id) != kG15.end();
}

}  // namespace gpudiag
