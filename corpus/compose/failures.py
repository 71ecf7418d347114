"""Failure text that only GPUs, fabrics and schedulers print, as log-formats.md gives it."""

from __future__ import annotations

import random
from typing import List

from jobs import Clock

CUDA_SEARCH = ("Search for `{name}' in https://docs.nvidia.com/cuda/cuda-runtime-api/"
               "group__CUDART__TYPES.html for more information.")
ASYNC_HINT = ["CUDA kernel errors might be asynchronously reported at some other API call, so the "
              "stacktrace below might be incorrect.", "For debugging consider passing CUDA_LAUNCH_BLOCKING=1"]
DSA = "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."


def gib(rng: random.Random, lo: float, hi: float) -> str:
    return f"{rng.uniform(lo, hi):.2f} GiB"


def oom_current(rng: random.Random, cls="torch.OutOfMemoryError", gpu=0, other_process=False) -> str:
    req, free = gib(rng, 0.5, 12), f"{rng.uniform(10, 900):.2f} MiB"
    procs = f"Process {rng.randint(2000, 90000)} has {gib(rng, 1, 9)} memory in use. " if other_process else ""
    return (f"{cls}: CUDA out of memory. Tried to allocate {req}. GPU {gpu} has a total capacity of "
            f"79.19 GiB of which {free} is free. {procs}Including non-PyTorch memory, this process has "
            f"{gib(rng, 60, 78)} memory in use. Of the allocated memory {gib(rng, 55, 74)} is allocated by "
            f"PyTorch, and {gib(rng, 0.2, 4)} is reserved by PyTorch but unallocated. If reserved but "
            "unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to "
            "avoid fragmentation.  See documentation for Memory Management  "
            "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")


def oom_2_0(rng: random.Random, cls="torch.cuda.OutOfMemoryError", gpu=0) -> str:
    return (f"{cls}: CUDA out of memory. Tried to allocate {gib(rng, 0.5, 8)} (GPU {gpu}; 39.39 GiB total "
            f"capacity; {gib(rng, 30, 37)} already allocated; {rng.uniform(10, 700):.2f} MiB free; "
            f"{gib(rng, 37, 39)} reserved in total by PyTorch) If reserved memory is >> allocated memory "
            "try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory "
            "Management and PYTORCH_CUDA_ALLOC_CONF")


def oom_1x(rng: random.Random, gpu=0) -> str:
    return (f"RuntimeError: CUDA out of memory. Tried to allocate {rng.randint(20, 900)}.00 MiB (GPU {gpu}; "
            f"31.75 GiB total capacity; {gib(rng, 28, 30)} already allocated; {rng.randint(5, 90)}.94 MiB "
            f"free; {gib(rng, 30, 31)} reserved in total by PyTorch)")


def cuda_error(text: str, name: str, cls="torch.AcceleratorError", async_hint=True) -> List[str]:
    lines = [f"{cls}: CUDA error: {text}", CUDA_SEARCH.format(name=name)]
    lines += ASYNC_HINT if async_hint else ["For more detailed error information, run with CUDA_LOG_FILE=stderr"]
    return lines + [DSA, ""]


def device_assert_prints(rng: random.Random, n: int) -> List[str]:
    kernel = ("/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:93: operator(): block: [{b},0,0], "
              "thread: [{t},0,0] Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of "
              "bounds\"` failed.")
    return [kernel.format(b=rng.randint(0, 4000), t=rng.randint(0, 127)) for _ in range(n)]


def xid(rng: random.Random, clock: Clock, code: int, msg: str, pci: str, pid=None, name="python") -> str:
    ctx = f"pid={pid}, name={name}, " if pid else ""
    return f"[{rng.uniform(80000, 900000):.6f}] NVRM: Xid (PCI:{pci}): {code}, {ctx}{msg}"


def pci(rng: random.Random) -> str:
    return f"0000:{rng.choice(['18', '2a', '3a', '5d', '9a', 'ab', 'ba', 'db'])}:00"


def watchdog_timeout(rng: random.Random, rank: int, seq: int, op="ALLREDUCE", era="current",
                     timeout_ms=600000) -> List[str]:
    elapsed = timeout_ms + rng.randint(1, 900)
    numel = rng.choice([262144, 1048576, 8388608, 50331648])
    if era == "current":
        work = (f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, "
                f"Timeout(ms)={timeout_ms})")
        pg = "[PG ID 0 PG GUID 0(default_pg) Rank {r}] ".format(r=rank)
    elif era == "2.2":
        work = f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, Timeout(ms)={timeout_ms})"
        pg = f"[PG 0 Rank {rank}] "
    else:
        work = f"WorkNCCL(SeqNum={seq}, OpType={op}, TensorShape=[{numel}], Timeout(ms)={timeout_ms})"
        pg = ""
    text = f"[Rank {rank}] Watchdog caught collective operation timeout: {work} ran for {elapsed} milliseconds before timing out."
    lines = [text]
    if era == "current":
        lines += [f"{pg} failure detected by watchdog at work sequence id: {seq} PG status: last enqueued "
                  f"work: {seq}, last completed work: {seq - 1}",
                  "Stack trace of the failed collective not found, potentially because FlightRecorder is "
                  "disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value."]
    lines += [f"[Rank {rank}] Some NCCL operations have failed or timed out. Due to the asynchronous nature "
              "of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
              f"[Rank {rank}] To avoid data inconsistency, we are taking the entire process down.",
              f"{pg}Process group watchdog thread terminated with exception: {text}"
              if era == "current" else f"{pg}NCCL watchdog thread terminated with exception: {text}",
              "terminate called after throwing an instance of 'c10::DistBackendError'",
              f"  what():  {pg}Process group watchdog thread terminated with exception: {text}",
              "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:"
              f"{rng.choice([632, 668, 1879])} (most recent call first):",
              "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f3c1b96c446 in "
              "/usr/local/lib/python3.11/site-packages/torch/lib/libc10.so)"]
    return lines


def c10_glog(clock: Clock, rank: int, level="E", line=632, pid=4412) -> str:
    nanos = clock.t.microsecond * 1000 + 137 * rank
    return f"[rank{rank}]:[{level}{clock.t:%m%d %H:%M:%S}.{nanos:09d} {pid} ProcessGroupNCCL.cpp:{line}] "


def nccl_error(rng: random.Random, kind: str, version="2.21.5") -> List[str]:
    detail = {
        "system": ("unhandled system error (run with NCCL_DEBUG=INFO for details)",
                   "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or "
                   "device error. "),
        "remote": ("remote process exited or there was a network error",
                   "ncclRemoteError: A call failed possibly due to a network error or a remote process "
                   "exiting prematurely."),
        "internal": ("internal error - please report this issue to the NCCL developers",
                     "ncclInternalError: Internal check failed."),
        "cuda": ("unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
                 "ncclUnhandledCudaError: Call to CUDA function failed."),
    }[kind]
    return [f"torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
            f"NCCLUtils.hpp:{rng.choice([268, 317, 354])}, {detail[0]}, NCCL version {version}", detail[1],
            "Last error:"]


def stepd(clock: Clock, job: int, node: str, reason: str = "", step: str = "") -> str:
    entity = f"STEP {job}.{step}" if step else f"JOB {job}"
    tail = f" {reason}" if reason else ""
    return f"slurmstepd: error: *** {entity} ON {node} CANCELLED AT {clock.slurm()}{tail} ***"
