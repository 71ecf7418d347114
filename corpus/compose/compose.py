"""Composes the corpus logs that this machine cannot capture: GPU, fabric and scheduler failures.

    python corpus/compose/compose.py

Each log is a GPU job's surroundings (jobs.py) plus the failure text of
log-formats.md (failures.py), drawn from a seed derived from its id, so a
rerun writes the same bytes. Also derives the ``unknown`` logs from real
captures cut off mid-training (source ``derived``). Writes
corpus/logs/composed/<id>.log and corpus/logs/composed/index.jsonl.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import failures as F
import jobs as J
import noise as N

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent
OUT = CORPUS / "logs" / "composed"
CAPTURED = CORPUS / "logs" / "captured"

Composed = Tuple[List[str], Optional[int]]  # lines, exit code
RECIPES: Dict[str, List[Callable[[random.Random], Composed]]] = {}
# The published corpus files this evidence under another g15 class than the fine class's default.
G15_OVERRIDE = {"sm90": "runtime_error"}


DRAWS: Dict[str, int] = {}  # recipe name -> logs drawn from it (default: as TARGET asks)


def recipe(cls: str, draws: int = 0):
    def register(f):
        RECIPES.setdefault(cls, []).append(f)
        if draws:
            DRAWS[f.__name__] = draws
        return f
    return register


def start(rng, world=8, framework="plain", style="rank"):
    """A multi-rank GPU job up to its first progress lines; returns (lines, clock, host, pids)."""
    clock = J.Clock(rng)
    host = rng.choice(J.HOSTS)
    agent = rng.randint(100000, 400000)
    pids = [agent + 60 + r for r in range(world)]
    lines = J.torchrun_banner(clock, agent) if world > 1 else []
    streams = [J.nccl_init(rng, host, pids[r], r, world) for r in range(world)]
    lines += J.interleave(rng, streams)
    if framework == "trainer":
        lines += J.trainer_header(rng, rng.choice([2000, 5000, 12000]), rng.choice([4, 8, 16]), world)
    elif framework == "lightning":
        lines += J.lightning_header(rng, world)
    return lines, clock, host, pids


def progress(rng, framework, steps=None):
    steps = steps or rng.choice([300, 800, 1500])
    if framework == "trainer":
        return J.trainer_records(rng, steps, 50, steps * 4)
    if framework == "lightning":
        return J.lightning_bars(rng, rng.randint(1, 3), rng.choice([250, 600]))
    return J.plain_steps(rng, steps, rng.choice([10, 50]))


def crash(rng, script, final: List[str], rank=None, style="rank"):
    tb = J.traceback(rng, J.train_frames(rng, script), final)
    return J.prefix(tb, style, rank) if rank is not None else tb


def launcher_tail(clock, script, host, rank, pids, code=1, signame=None):
    clock.tick(2)
    g = f"{clock.glog('E')} {pids[0] - 60} torch/distributed/elastic/multiprocessing/api.py:869]"
    return [f"{clock.glog()} {pids[0] - 60} torch/distributed/elastic/multiprocessing/api.py:897] "
            f"Sending process {p} closing signal SIGTERM" for p in pids if p != pids[rank]][:3] + [
        f"{g} failed (exitcode: {code}) local_rank: {rank} (pid: {pids[rank]}) of binary: /usr/bin/python3",
        *J.childfailed(clock, script, host, rank, rank, code, pids[rank], signame)]


# ---------------------------------------------------------------- B · GPU memory and hardware
def _oom(rng, text_fn, framework="plain", world=8, launcher=True, **kw):
    lines, clock, host, pids = start(rng, world, framework)
    lines += progress(rng, framework)
    script = rng.choice(J.SCRIPTS)
    r = rng.randrange(world)
    lines += crash(rng, script, [text_fn(rng, **kw)], rank=r if world > 1 else None)
    if world > 1 and launcher:
        lines += launcher_tail(clock, script, host, r, pids)
    return lines, 1


for fw, fn, kw in (("trainer", F.oom_current, {}), ("plain", F.oom_current, {"other_process": True}),
                   ("lightning", F.oom_2_0, {}), ("plain", F.oom_1x, {}),
                   ("trainer", F.oom_current, {"cls": "torch.cuda.OutOfMemoryError", "gpu": 3}),
                   ("plain", F.oom_2_0, {"cls": "RuntimeError"})):
    RECIPES.setdefault("cuda_oom", []).append(
        lambda rng, fw=fw, fn=fn, kw=kw: _oom(rng, fn, fw, world=rng.choice([1, 2, 8]), **kw))


@recipe("cuda_oom")
def cublas_alloc(rng):
    lines, clock, host, pids = start(rng, 1, "plain")
    lines += progress(rng, "plain", 100)
    lines += crash(rng, J.SCRIPTS[0], ["RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling "
                                        "`cublasCreate(handle)`"])
    return lines, 1


@recipe("cuda_oom")
def oom_cascade(rng):
    """Rank 2 runs out of memory; the other ranks time out on the collective it never joins."""
    world = 4
    lines, clock, host, pids = start(rng, world, "plain")
    lines += progress(rng, "plain", 500)
    lines += crash(rng, J.SCRIPTS[1], [F.oom_current(rng, gpu=2)], rank=2)
    clock.tick(600)
    for r in (0, 1, 3):
        lines += J.prefix(F.watchdog_timeout(rng, r, 18342), "rank", r)[:4]
    lines += launcher_tail(clock, J.SCRIPTS[1], host, 2, pids)
    return lines, 1


@recipe("cuda_oom")
def oom_after_retry(rng):
    """A batch-size search recovers from two OOMs; a later, longer sequence does not."""
    lines, clock, host, pids = start(rng, 1, "trainer")
    for bs in (64, 32):
        lines.append(f"trying per-device batch size {bs}: {F.oom_current(rng).split(': ', 1)[1][:110]}...")
    lines.append("per-device batch size 16 fits; continuing")
    lines += progress(rng, "trainer", 900)
    lines += crash(rng, J.SCRIPTS[2], [F.oom_current(rng)])
    return lines, 1


@recipe("cuda_oom")
def oom_srun(rng):
    clock = J.Clock(rng)
    job = rng.randint(100000, 999999)
    lines = J.slurm_header(rng, job, ["gpu-a17", "gpu-a18"])
    lines += J.prefix(J.plain_steps(rng, 400, 50), "srun", 0)
    lines += J.prefix(crash(rng, J.SCRIPTS[0], [F.oom_2_0(rng, gpu=1)]), "srun", 5)
    lines += ["srun: error: gpu-a18: task 5: Exited with exit code 1",
              "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
              F.stepd(clock, job, "gpu-a17", step="0")]
    return lines, 1


@recipe("cuda_oom")
def oom_context(rng):
    lines, clock, host, pids = start(rng, 1, "plain")
    lines += crash(rng, J.SCRIPTS[4], ["RuntimeError: CUDA error: out of memory", *F.ASYNC_HINT, F.DSA])
    return lines, 1


@recipe("gpu_hardware")
def fallen_off_bus(rng):
    lines, clock, host, pids = start(rng, 8, "plain")
    lines += progress(rng, "plain")
    p = F.pci(rng)
    lines += [F.xid(rng, clock, 79, "GPU has fallen off the bus.", p), f"NVRM: GPU {p}.0: GPU has fallen off the bus."]
    lines += crash(rng, J.SCRIPTS[1], F.cuda_error("unspecified launch failure", "cudaErrorLaunchFailure"), rank=3)
    lines += launcher_tail(clock, J.SCRIPTS[1], host, 3, pids)
    return lines, 1


@recipe("gpu_hardware")
def ecc_dbe(rng):
    lines, clock, host, pids = start(rng, 1, "trainer")
    lines += progress(rng, "trainer")
    lines.append(F.xid(rng, clock, 48, "An uncorrectable double bit error (DBE) has been detected on GPU "
                       f"({F.pci(rng)}).", F.pci(rng)))
    lines += crash(rng, J.SCRIPTS[2], F.cuda_error("uncorrectable ECC error encountered",
                                                   "cudaErrorECCUncorrectable", async_hint=False))
    return lines, 1


@recipe("gpu_hardware")
def contained(rng):
    lines, clock, host, pids = start(rng, 2, "plain")
    lines += progress(rng, "plain")
    pid = pids[1]
    lines.append(F.xid(rng, clock, 94, "Contained: SM (0x1). RST: No, D-RST: No", F.pci(rng), pid=pid))
    lines += crash(rng, J.SCRIPTS[0], F.cuda_error("uncorrectable ECC error encountered",
                                                   "cudaErrorECCUncorrectable", async_hint=False), rank=1)
    lines += launcher_tail(clock, J.SCRIPTS[0], host, 1, pids)
    return lines, 1


@recipe("gpu_hardware")
def uncontained(rng):
    lines, clock, host, pids = start(rng, 8, "lightning")
    lines += progress(rng, "lightning")
    lines.append(F.xid(rng, clock, 95, "Uncontained: FBHUB (0x3, 0x0). RST: Yes, D-RST: No", F.pci(rng)))
    lines += crash(rng, J.SCRIPTS[3], F.cuda_error("uncorrectable ECC error encountered",
                                                   "cudaErrorECCUncorrectable", async_hint=False), rank=0)
    return lines, 1


@recipe("gpu_hardware")
def gsp_timeout(rng):
    lines, clock, host, pids = start(rng, 4, "plain")
    lines += progress(rng, "plain")
    p = F.pci(rng)
    lines += [F.xid(rng, clock, 119, "Timeout after 6s of waiting for RPC response from GPU2 GSP! Expected "
                    "function 76 (GSP_RM_CONTROL) sequence 1836502 (0x2080014b 0x4).", p),
              F.xid(rng, clock, 154, "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)", p)]
    clock.tick(1800)
    lines += J.prefix(F.watchdog_timeout(rng, 0, 40211, timeout_ms=1800000), "rank", 0)[:5]
    return lines, None


@recipe("gpu_hardware")
def page_retirement(rng):
    lines, clock, host, pids = start(rng, 1, "trainer")
    lines += progress(rng, "trainer")
    lines.append(F.xid(rng, clock, 64, f"Dynamic Page Retirement: Fatal error, unable to retire page "
                       f"(0x{rng.getrandbits(36):x})", F.pci(rng)))
    lines += crash(rng, J.SCRIPTS[2], F.cuda_error("uncorrectable ECC error encountered",
                                                   "cudaErrorECCUncorrectable", async_hint=False))
    return lines, 1


@recipe("gpu_hardware")
def stepd_memory_error(rng):
    clock = J.Clock(rng)
    job = rng.randint(100000, 999999)
    lines = J.slurm_header(rng, job, ["dgx-b12"]) + J.plain_steps(rng, 600, 50)
    lines.append(f"slurmstepd: error: *** JOB {job} ON dgx-b12 UNCORRECTABLE MEMORY ERROR AT {clock.slurm()} ***")
    return lines, None


@recipe("gpu_hardware")
def xid_cascade(rng):
    """Rank 5's GPU falls off the bus; the other ranks' collectives time out afterwards."""
    lines, clock, host, pids = start(rng, 8, "plain")
    lines += progress(rng, "plain", 1500)
    p = F.pci(rng)
    lines.append(F.xid(rng, clock, 79, "GPU has fallen off the bus.", p))
    clock.tick(600)
    for r in (0, 1, 2, 3, 4, 6, 7):
        lines += J.prefix([F.c10_glog(clock, r) + F.watchdog_timeout(rng, r, 77120)[0]], None, r)
    lines += launcher_tail(clock, J.SCRIPTS[1], host, 0, pids, code=-6, signame="SIGABRT")
    return lines, 1


@recipe("gpu_hardware")
def nvlink(rng):
    lines, clock, host, pids = start(rng, 8, "plain")
    lines += progress(rng, "plain")
    lines.append(F.xid(rng, clock, 74, "NVLink: fatal error detected on link 4(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)", F.pci(rng)))
    lines += J.prefix(F.nccl_error(rng, "cuda") + [f"Cuda failure 'an uncorrectable NVLink error was detected during the execution'"], "rank", 6)
    return lines, 1


@recipe("gpu_hardware")
def gpu_lost(rng):
    lines, clock, host, pids = start(rng, 1, "plain")
    lines += progress(rng, "plain")
    p = F.pci(rng)
    lines += [F.xid(rng, clock, 79, "GPU has fallen off the bus.", p),
              f"Unable to determine the device handle for GPU{p}.0: GPU is lost.  Reboot the system to recover this GPU"]
    return lines, None


@recipe("gpu_hardware")
def recovery_drain(rng):
    lines, clock, host, pids = start(rng, 2, "trainer")
    lines += progress(rng, "trainer")
    p = F.pci(rng)
    lines += [F.xid(rng, clock, 154, "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)", p)]
    lines += crash(rng, J.SCRIPTS[2], F.cuda_error("unspecified launch failure", "cudaErrorLaunchFailure"), rank=0)
    return lines, 1


# ---------------------------------------------------------------- cuda_runtime, device_mismatch
def _cuda(rng, text, name, framework="plain", world=1, cls="torch.AcceleratorError", prints=0, async_hint=True):
    lines, clock, host, pids = start(rng, world, framework)
    lines += progress(rng, framework)
    lines += F.device_assert_prints(rng, prints)
    r = rng.randrange(world)
    lines += crash(rng, J.SCRIPTS[r % 5], F.cuda_error(text, name, cls, async_hint), rank=r if world > 1 else None)
    if world > 1:
        lines += launcher_tail(clock, J.SCRIPTS[r % 5], host, r, pids)
    return lines, 1


for args in (("an illegal memory access was encountered", "cudaErrorIllegalAddress", "plain", 1),
             ("device-side assert triggered", "cudaErrorAssert", "trainer", 1, "RuntimeError", 40),
             ("unspecified launch failure", "cudaErrorLaunchFailure", "lightning", 2),
             ("misaligned address", "cudaErrorMisalignedAddress", "plain", 8),
             ("an illegal instruction was encountered", "cudaErrorIllegalInstruction", "plain", 1, "RuntimeError"),
             ("device-side assert triggered", "cudaErrorAssert", "plain", 4, "torch.AcceleratorError", 600)):
    RECIPES.setdefault("cuda_runtime", []).append(lambda rng, a=args: _cuda(rng, *a))


@recipe("cuda_runtime")
def cublas_exec(rng):
    lines, clock, host, pids = start(rng, 1, "trainer")
    lines += progress(rng, "trainer")
    lines += crash(rng, J.SCRIPTS[2], ["RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling "
                                        "`cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16BF, lda, b, "
                                        "CUDA_R_16BF, ldb, &fbeta, c, CUDA_R_16BF, ldc, compute_type, "
                                        "CUBLAS_GEMM_DEFAULT_TENSOR_OP)`"])
    return lines, 1


@recipe("cuda_runtime")
def cudnn_exec(rng):
    lines, clock, host, pids = start(rng, 1, "lightning")
    lines += progress(rng, "lightning")
    lines += crash(rng, J.SCRIPTS[3], ["RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED"])
    return lines, 1


@recipe("cuda_runtime")
def watchdog_cuda(rng):
    """The NCCL watchdog only carries a CUDA error: the cause is the kernel, not the fabric."""
    lines, clock, host, pids = start(rng, 8, "plain")
    lines += progress(rng, "plain")
    text = "CUDA error: an illegal memory access was encountered"
    pg = "[PG ID 0 PG GUID 0(default_pg) Rank 2] "
    lines += J.prefix([F.c10_glog(clock, 2) + f"{pg}Process group watchdog thread terminated with exception: {text}",
                       F.CUDA_SEARCH.format(name="cudaErrorIllegalAddress"), *F.ASYNC_HINT, F.DSA, "",
                       "terminate called after throwing an instance of 'c10::DistBackendError'",
                       f"  what():  {pg}Process group watchdog thread terminated with exception: {text}"], None, 2)
    lines += launcher_tail(clock, J.SCRIPTS[1], host, 2, pids, code=-6, signame="SIGABRT")
    return lines, 1


@recipe("cuda_runtime")
def app_xid(rng):
    lines, clock, host, pids = start(rng, 1, "plain")
    lines += progress(rng, "plain")
    lines.append(F.xid(rng, clock, 31, f"Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 "
                       f"faulted @ 0x7f_{rng.getrandbits(32):08x}. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
                       F.pci(rng), pid=pids[0]))
    lines += crash(rng, J.SCRIPTS[0], F.cuda_error("an illegal memory access was encountered", "cudaErrorIllegalAddress"))
    return lines, 1


@recipe("cuda_runtime")
def assert_cascade(rng):
    """Rank 1 trips a device-side assert; the others time out waiting for it."""
    lines, clock, host, pids = start(rng, 4, "plain")
    lines += progress(rng, "plain", 600)
    lines += J.prefix(F.device_assert_prints(rng, 8), "rank", 1)
    lines += crash(rng, J.SCRIPTS[1], F.cuda_error("device-side assert triggered", "cudaErrorAssert"), rank=1)
    clock.tick(600)
    for r in (0, 2, 3):
        lines += [F.c10_glog(clock, r) + F.watchdog_timeout(rng, r, 9121)[0]]
    lines += launcher_tail(clock, J.SCRIPTS[1], host, 1, pids)
    return lines, 1


DEVICES = (("cuda:0", "cpu"), ("cpu", "cuda:0"), ("cuda:1", "cuda:0"), ("cuda:0", "cuda:3"))


def _mismatch(rng, era, framework, world, argument, method):
    d1, d2 = rng.choice(DEVICES)
    text = {
        "early": f"Expected all tensors to be on the same common device, but found at least two devices, {d1} "
                 f"and {d2}! (when checking arugment for argument {argument} in method {method})",
        "2x": f"Expected all tensors to be on the same device, but found at least two devices, {d1} and {d2}! "
              f"(when checking argument for argument {argument} in method {method})",
        "current": f"Expected all tensors to be on the same device, but got {argument} is on {d2}, different "
                   f"from other tensors on {d1} (when checking argument in method {method})",
    }[era]
    lines, clock, host, pids = start(rng, world, framework)
    if rng.random() < 0.5:
        lines += progress(rng, framework, 100)
    r = rng.randrange(world)
    lines += crash(rng, J.SCRIPTS[r % 5], [f"RuntimeError: {text}"], rank=r if world > 1 else None)
    if world > 1:
        lines += launcher_tail(clock, J.SCRIPTS[r % 5], host, r, pids)
    return lines, 1


for args in (("2x", "plain", 1, "mat1", "wrapper_CUDA_addmm"), ("current", "trainer", 1, "index", "wrapper_CUDA__index_select"),
             ("early", "plain", 1, "mat2", "wrapper_mm"), ("2x", "lightning", 2, "target", "wrapper_CUDA_nll_loss_forward"),
             ("current", "plain", 4, "mat1", "wrapper_CUDA_addmm"), ("2x", "trainer", 8, "index", "wrapper_CUDA__index_select"),
             ("current", "lightning", 1, "weight", "wrapper_CUDA__native_layer_norm"),
             ("2x", "plain", 2, "tensors", "wrapper_CUDA_cat"), ("early", "trainer", 1, "index", "wrapper_index_select"),
             ("current", "plain", 1, "other", "wrapper_CUDA_mul_Tensor"), ("2x", "plain", 1, "weight", "wrapper_CUDA__embedding")):
    RECIPES.setdefault("device_mismatch", []).append(lambda rng, a=args: _mismatch(rng, *a))


# ---------------------------------------------------------------- C · NCCL
def _watchdog(rng, era, world, hung_rank_silent=True):
    lines, clock, host, pids = start(rng, world, "plain")
    lines += progress(rng, "plain", rng.choice([400, 2000]))
    clock.tick(600)
    for r in range(world):
        if r == world - 1 and hung_rank_silent:
            continue  # the stalled rank prints nothing
        block = F.watchdog_timeout(rng, r, 5000 + world, era=era)
        lines += [F.c10_glog(clock, r) + block[0]] + J.prefix(block[1:4], "rank", r)
    lines += launcher_tail(clock, J.SCRIPTS[1], host, 0, pids, code=-6, signame="SIGABRT")
    return lines, 1


for args in (("current", 8), ("2.2", 4), ("1x", 2), ("current", 16)):
    RECIPES.setdefault("nccl_timeout", []).append(lambda rng, a=args: _watchdog(rng, *a))


@recipe("nccl_timeout")
def heartbeat(rng):
    lines, clock, host, pids = start(rng, 8, "trainer")
    lines += progress(rng, "trainer")
    clock.tick(480)
    lines += J.prefix([F.c10_glog(clock, 0, line=1420) + "[PG 0 Rank 0] Heartbeat monitor timed out! Process will "
                       "be terminated after dumping debug info. workMetaList_.size()=2",
                       "[PG 0 Rank 0] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making "
                       "progress in monitoring enqueued collectives. This typically indicates a NCCL/CUDA API "
                       "(e.g., CudaEventDestroy) hang blocking the watchdog, and could be triggered by another "
                       "thread holding the GIL inside a CUDA api (for example, CudaEventDestroy), or other "
                       "deadlock-prone behaviors."], None, 0)
    return lines, -6


@recipe("nccl")
def nccl_system_error(rng):
    lines, clock, host, pids = start(rng, 8, "plain")
    lines += progress(rng, "plain")
    peer = f"10.40.7.{rng.randint(2, 250)}<{rng.randint(30000, 60000)}>"
    lines += ["", f"[{clock.t:%Y-%m-%d %H:%M:%S}] {host}:{pids[4]}:{pids[4] + 77} [4] misc/socket.cc:538 NCCL WARN "
              f"socketProgress: Connection closed by remote peer {host}<{peer}>"]
    lines += J.prefix(crash(rng, J.SCRIPTS[1], F.nccl_error(rng, "system") +
                            [f"socketProgress: Connection closed by remote peer {host}<{peer}>"]), "rank", 4)
    lines += launcher_tail(clock, J.SCRIPTS[1], host, 4, pids)
    return lines, 1


@recipe("nccl")
def ib_completion(rng):
    lines, clock, host, pids = start(rng, 16, "plain")
    lines += progress(rng, "plain")
    lines += ["", f"{host}:{pids[9]}:{pids[9] + 51} [1] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion "
              f"from peer 10.40.3.{rng.randint(2, 250)}<{rng.randint(30000, 60000)}> with status=12 opcode=0 len=0 "
              "vendor err 129 (Recv) localGid ::ffff:10.40.7.17 remoteGids::ffff:10.40.3.9",
              f"{host}:{pids[9]}:{pids[9] + 51} [1] NCCL INFO HINT: In many cases this error occurs when the "
              "NCCL_IB_TIMEOUT is set too short."]
    lines += J.prefix(crash(rng, J.SCRIPTS[0], F.nccl_error(rng, "remote") + ["NET/IB : Got completion from peer "
                                                                              "with status=12"]), "rank", 9)
    return lines, 1


@recipe("nccl")
def shm(rng):
    lines, clock, host, pids = start(rng, 8, "plain")
    lines += ["", f"{host}:{pids[2]}:{pids[2] + 60} [2] include/shm.h:28 NCCL WARN Error while creating shared "
              f"memory segment /dev/shm/nccl-{rng.getrandbits(24):06x} (size 9637888), error: No space left on device (28)"]
    lines += J.prefix(crash(rng, J.SCRIPTS[1], F.nccl_error(rng, "system") + [
        f"Error while creating shared memory segment /dev/shm/nccl-a3f0c1 (size 9637888)"]), "rank", 2)
    return lines, 1


@recipe("nccl")
def nccl_internal(rng):
    lines, clock, host, pids = start(rng, 4, "trainer")
    lines += progress(rng, "trainer")
    lines += J.prefix(crash(rng, J.SCRIPTS[2], F.nccl_error(rng, "internal") + ["Unknown NCCL Error"]), "rank", 0)
    lines += launcher_tail(clock, J.SCRIPTS[2], host, 0, pids)
    return lines, 1


@recipe("nccl")
def comm_aborted(rng):
    lines, clock, host, pids = start(rng, 8, "plain")
    lines += progress(rng, "plain")
    lines += J.prefix([F.c10_glog(clock, 3, line=1901) + "[Rank 3] Collective WorkNCCL(SeqNum=8812, OpType=ALLGATHER, "
                       "NumelIn=1048576, NumelOut=8388608, Timeout(ms)=600000) raised the following async "
                       "exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5"],
                      None, 3)
    lines += crash(rng, J.SCRIPTS[1], ["torch.distributed.DistBackendError: NCCL communicator was aborted on rank 3."], rank=3)
    return lines, 1


@recipe("nccl")
def ib_async(rng):
    lines, clock, host, pids = start(rng, 8, "lightning")
    lines += progress(rng, "lightning")
    lines += ["", f"{host}:{pids[0]}:{pids[0] + 41} [0] transport/net_ib.cc:142 NCCL WARN NET/IB : mlx5_0:1 async "
              "fatal event: local catastrophic error"]
    lines += crash(rng, J.SCRIPTS[3], F.nccl_error(rng, "system") + ["NET/IB : mlx5_0:1 async fatal event: local catastrophic error"], rank=0)
    return lines, 1


@recipe("rendezvous_failure")
def nccl_uniqueid(rng):
    lines, clock, host, pids = start(rng, 8, "plain")
    lines += crash(rng, J.SCRIPTS[1], [
        "torch.distributed.DistBackendError: [5] is setting up NCCL communicator and retrieving ncclUniqueId from "
        "[0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout"], rank=5)
    return lines, 1


# ---------------------------------------------------------------- D · signals, cluster OOM
@recipe("oom_killer")
def kernel_oom(rng):
    lines, clock, host, pids = start(rng, 1, "plain")
    lines += progress(rng, "plain", 300)
    pid = pids[0]
    lines += [f"[{rng.uniform(8e4, 9e5):.6f}] python invoked oom-killer: gfp_mask=0x140dca(GFP_HIGHUSER_MOVABLE|"
              "__GFP_COMP|__GFP_ZERO), order=0, oom_score_adj=0",
              f"[{rng.uniform(8e4, 9e5):.6f}] Out of memory: Killed process {pid} (python) total-vm:{rng.randint(10**8, 9 * 10**8)}kB, "
              f"anon-rss:{rng.randint(10**8, 4 * 10**8)}kB, file-rss:{rng.randint(10**5, 10**6)}kB, shmem-rss:0kB, "
              "UID:1000 pgtables:812345kB oom_score_adj:0",
              f"/var/spool/slurmd/job{rng.randint(10**5, 10**6)}/slurm_script: line 14: {pid} Killed"
              "                  python train.py --config configs/7b.yaml"]
    return lines, 137


@recipe("oom_killer")
def slurm_oom_event(rng):
    clock = J.Clock(rng)
    job = rng.randint(100000, 999999)
    lines = J.slurm_header(rng, job, ["cn-0423"]) + J.plain_steps(rng, 500, 50)
    lines += [f"slurmstepd: error: Detected 1 oom_kill event in StepId={job}.0. Some of the step tasks have been OOM Killed.",
              "srun: error: cn-0423: task 0: Out Of Memory"]
    return lines, None


@recipe("oom_killer")
def slurm_oom_old(rng):
    clock = J.Clock(rng)
    job = rng.randint(100000, 999999)
    lines = J.slurm_header(rng, job, ["cn-0101"]) + J.trainer_records(rng, 300, 50, 1200)
    lines += [f"slurmstepd: error: Detected 2 oom-kill event(s) in StepId={job}.batch cgroup. Some of your "
              "processes may have been killed by the cgroup out-of-memory handler."]
    return lines, None


@recipe("oom_killer")
def dataloader_killed(rng):
    lines, clock, host, pids = start(rng, 1, "trainer")
    lines += progress(rng, "trainer")
    w = rng.randint(100000, 400000)
    lines += ["ERROR: DataLoader worker (pid " + str(w) + ") is killed by signal: Killed. "]
    lines += crash(rng, J.SCRIPTS[2], [f"RuntimeError: DataLoader worker (pid(s) {w}) exited unexpectedly"])
    return lines, 1


# ---------------------------------------------------------------- E · training correctness (other frameworks)
def megatron(rng, clock, total, last, **kw):
    return ([f"setting training iterations to {total}", "training ..."]
            + J.megatron_iterations(rng, clock, 10, last, 10, total, **kw))


@recipe("nan_loss")
def megatron_nan(rng):
    clock = J.Clock(rng)
    lines = megatron(rng, clock, 500000, 3000, nan_from=2400)
    lines.append(f"Rank 0, node {rng.choice(J.HOSTS)}, device 0, iteration 3000: Unexpected result nan "
                 "(message='found NaN in local forward loss calculation')")
    return lines, 1


@recipe("nan_loss")
def deepspeed_storm(rng):
    lines = [f"[2026-03-0{rng.randint(1, 9)} 10:0{k}:00,000] [INFO] [logging.py:128:log_dist] [Rank 0] step={k * 10}, "
             f"skipped={k}, lr=[0.0001], mom=[(0.9, 0.95)]" for k in range(1, 6)]
    scale = 65536.0
    while scale >= 2:
        lines.append(f"[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {scale}, reducing to {scale / 2}")
        scale /= 2
    lines += crash(rng, J.SCRIPTS[1], ["Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run."])
    return lines, 1


@recipe("nan_loss")
def keras_nan(rng):
    lines = ["Epoch 1/20"] + [f"{k}/1875 ━━━━━━━━━━━━━━━━━━━━ {rng.randint(10, 90)}s {rng.randint(20, 40)}ms/step - "
                             f"loss: {2.3 - k / 1000:.4f}" for k in range(100, 800, 100)]
    lines += ["812/1875 ━━━━━━━━━━━━━━━━━━━━ 31s 29ms/step - loss: nan", "Batch 812: Invalid loss, terminating training"]
    return lines, 0


@recipe("nan_loss")
def lightning_not_finite(rng):
    lines, clock, host, pids = start(rng, 1, "lightning")
    lines += J.lightning_bars(rng, 2, 400)
    lines.append("Monitored metric val_loss = nan is not finite. Previous best value was 0.812. Signaling Trainer to stop.")
    return lines, 0


@recipe("loss_divergence")
def megatron_diverge(rng):
    clock = J.Clock(rng)
    return megatron(rng, clock, 200000, 4000, diverge_from=3000) + ["[after training is done] datetime: "
                                                                     f"{clock.t:%Y-%m-%d %H:%M:%S}.000000 "], 0


@recipe("loss_divergence")
def lightning_divergence(rng):
    lines, clock, host, pids = start(rng, 1, "lightning")
    lines += J.lightning_bars(rng, 1, 400, start=2.0, end=1.9)
    lines.append("Divergence threshold reached: train_loss = 1843.2 > 100.0. Signaling Trainer to stop.")
    return lines, 0


@recipe("loss_divergence")
def megatron_spiky(rng):
    clock = J.Clock(rng)
    lines = megatron(rng, clock, 200000, 2500, diverge_from=2300)
    lines.append(f"Rank 0, node {rng.choice(J.HOSTS)}, device 0, iteration 2500: Unexpected result 412.7 (message='Spiky loss')")
    return lines, 1


@recipe("resume_from_scratch")
def megatron_random(rng):
    clock = J.Clock(rng)
    lines = ["using world size: 64, data-parallel size: 8, context-parallel size: 1, tensor-model-parallel size: 8",
             "  load ............................................ /lustre/ckpt/gpt-7b",
             "  save ............................................ /lustre/ckpt/gpt-7b",
             "WARNING: could not find the metadata file /lustre/ckpt/gpt-7b/latest_checkpointed_iteration.txt",
             "    will not load any checkpoints and will start from random"]
    return lines + megatron(rng, clock, 500000, 600), None


@recipe("resume_from_scratch")
def deepspeed_no_latest(rng):
    lines = ["resume_from_checkpoint: /scratch/ckpt/run-14",
             "Unable to find latest file at /scratch/ckpt/run-14/latest, if trying to load latest checkpoint please "
             "ensure this file exists or pass an explicit checkpoint tag when loading a checkpoint."]
    lines += J.plain_steps(rng, 400, 20, fmt="step")
    return lines, None


@recipe("resume_from_scratch")
def accelerate_new_run(rng):
    lines = ["--resume_from_checkpoint=latest", "Checkpoint 'latest' does not exist. Starting a new training run."]
    lines += J.plain_steps(rng, 500, 50)
    return lines, None


@recipe("checkpoint_load_error")
def megatron_missing(rng):
    return ["  load ............................................ /lustre/ckpt/llama-13b",
            ">> '--exit-on-missing-checkpoint' is set but no checkpoint was found under /lustre/ckpt/llama-13b, exiting"], 1


@recipe("undertrained")
def megatron_short(rng):
    clock = J.Clock(rng)
    lines = ["setting training iterations to 3", "training ..."]
    lines += J.megatron_iterations(rng, clock, 1, 3, 1, 3)
    lines.append(f"[after training is done] datetime: {clock.t:%Y-%m-%d %H:%M:%S}.000000 ")
    return lines, 0


@recipe("env_error")
def sm90(rng):
    return ["/usr/local/lib/python3.11/site-packages/torch/cuda/__init__.py:230: UserWarning: ",
            "NVIDIA H100 80GB HBM3 with CUDA capability sm_90 is not compatible with the current PyTorch installation.",
            "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86.",
            "If you want to use the NVIDIA H100 80GB HBM3 GPU with PyTorch, please check the instructions at "
            "https://pytorch.org/get-started/locally/", ""] + crash(
        rng, J.SCRIPTS[0], ["RuntimeError: CUDA error: no kernel image is available for execution on the device", *F.ASYNC_HINT, F.DSA]), 1


@recipe("env_error")
def driver_too_old(rng):
    text = ("The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by "
            "downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx "
            "Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your "
            "version of the CUDA driver.")
    return [f"/usr/local/lib/python3.11/site-packages/torch/cuda/__init__.py:129: UserWarning: CUDA initialization: "
            f"{text} (Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:109.)",
            "  return torch._C._cuda_getDeviceCount() > 0"] + crash(rng, J.SCRIPTS[2], [f"RuntimeError: {text}"]), 1


# ---------------------------------------------------------------- F · scheduler events
def _slurm_job(rng, reason, progressing=True, framework="plain", stepd_reason=None):
    clock = J.Clock(rng)
    job = rng.randint(100000, 999999)
    node = rng.choice(J.HOSTS)
    lines = J.slurm_header(rng, job, [node])
    lines += J.trainer_records(rng, 1500, 50, 20000) if framework == "trainer" else J.plain_steps(rng, 2000, 50)
    clock.tick(rng.uniform(30, 120) if progressing else rng.uniform(3 * 3600, 9 * 3600))
    lines += ["srun: Job step aborted: Waiting up to 32 seconds for job step to finish.", F.stepd(clock, job, node, reason)]
    if stepd_reason:
        lines.append(f"slurmstepd: error: *** REASON: {stepd_reason} ***")
    return lines


for args in (("DUE TO TIME LIMIT", True), ("DUE TO TIME LIMIT", False), ("DUE TO TIME LIMIT", True, "trainer"),
             ("DUE TO TIME LIMIT", False, "trainer")):
    RECIPES.setdefault("timeout", []).append(lambda rng, a=args: (_slurm_job(rng, *a), None))
for args in (("DUE TO PREEMPTION", True), ("DUE TO JOB REQUEUE", True), ("DUE TO PREEMPTION", True, "trainer")):
    RECIPES.setdefault("preempted", []).append(lambda rng, a=args: (_slurm_job(rng, *a), None))
for args in (("DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS", True),
             ("DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS", True, "trainer")):
    RECIPES.setdefault("node_failure", []).append(lambda rng, a=args: (_slurm_job(rng, *a), None))
for args in (("", True), ("DUE to SIGNAL Terminated", True), ("", True, "trainer")):
    RECIPES.setdefault("cancelled", []).append(lambda rng, a=args: (_slurm_job(rng, *a), None))


@recipe("timeout")
def megatron_timeout(rng):
    clock = J.Clock(rng)
    job = rng.randint(100000, 999999)
    lines = megatron(rng, clock, 500000, 8000)
    clock.tick(40)
    return lines + [F.stepd(clock, job, "dgx-b12", "DUE TO TIME LIMIT")], None


@recipe("timeout")
def step_timeout_hung(rng):
    clock = J.Clock(rng)
    job = rng.randint(100000, 999999)
    lines = J.slurm_header(rng, job, ["gpu-a17"]) + J.prefix(J.plain_steps(rng, 300, 50), "srun", 0)
    clock.tick(6 * 3600)
    return lines + [F.stepd(clock, job, "gpu-a17", "DUE TO TIME LIMIT", step="0"),
                    "srun: error: Timed out waiting for job step to complete"], None


@recipe("preempted")
def lightning_requeue(rng):
    lines, clock, host, pids = start(rng, 1, "lightning")
    job = rng.randint(100000, 999999)
    lines = ["SLURM auto-requeueing enabled. Setting signal handlers."] + lines + J.lightning_bars(rng, 2, 500)
    lines += ["Handling auto-requeue signal: 10", f"requeing job {job}...", f"Requeued SLURM job: {job}"]
    return lines, 0


@recipe("preempted")
def megatron_sigterm_preempt(rng):
    clock = J.Clock(rng)
    job = rng.randint(100000, 999999)
    lines = megatron(rng, clock, 500000, 1200)
    lines += [f"slurmstepd: error: *** STEP {job}.0 ON hgx-r3-14 CANCELLED AT {clock.slurm()} DUE TO PREEMPTION ***",
              "exiting program after receiving SIGTERM."]
    return lines, None


@recipe("node_failure")
def srun_node_failure(rng):
    clock = J.Clock(rng)
    job = rng.randint(100000, 999999)
    lines = J.slurm_header(rng, job, ["gpu-a17", "gpu-a18"]) + J.prefix(J.plain_steps(rng, 900, 50), "srun", 0)
    lines += ["srun: error: Node failure on gpu-a18", "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
              F.stepd(clock, job, "gpu-a17", "DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS")]
    return lines, None


@recipe("node_failure")
def node_failure_cascade(rng):
    """A node drops out; the surviving ranks' collectives time out afterwards."""
    lines, clock, host, pids = start(rng, 8, "plain")
    job = rng.randint(100000, 999999)
    lines += progress(rng, "plain", 1200)
    lines += ["srun: error: Node failure on cn-0424"]
    clock.tick(600)
    for r in (0, 1, 2, 3):
        lines.append(F.c10_glog(clock, r) + F.watchdog_timeout(rng, r, 30001)[0])
    lines.append(F.stepd(clock, job, "cn-0423", "DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS"))
    return lines, None


@recipe("cancelled")
def keyboard_interrupt(rng):
    lines, clock, host, pids = start(rng, 1, "lightning")
    lines += J.lightning_bars(rng, 1, 500)
    lines += ["", "Detected KeyboardInterrupt, attempting graceful shutdown ..."]
    return lines, 130


@recipe("cancelled")
def step_cancelled(rng):
    clock = J.Clock(rng)
    job = rng.randint(100000, 999999)
    lines = J.slurm_header(rng, job, ["g4-node-31"]) + J.prefix(J.plain_steps(rng, 700, 50), "srun", 0)
    lines += ["srun: forcing job termination", F.stepd(clock, job, "g4-node-31", step="0"),
              "srun: error: g4-node-31: task 0: Terminated"]
    return lines, None


# ---------------------------------------------------------------- G · healthy GPU jobs with look-alikes
@recipe("healthy")
def megatron_healthy(rng):
    clock = J.Clock(rng)
    lines = ["RerunStateMachine initialized in mode RerunMode.DISABLED"] + megatron(rng, clock, 2000, 2000)
    lines += [f" [{clock.t:%Y-%m-%d %H:%M:%S}] saving checkpoint at iteration     2000 to /lustre/ckpt/gpt in torch_dist format",
              f"[after training is done] datetime: {clock.t:%Y-%m-%d %H:%M:%S}.000000 "]
    return lines, 0


@recipe("healthy")
def megatron_long(rng):
    """A multi-megabyte log: ten thousand iteration lines, every one naming 'nan iterations'."""
    clock = J.Clock(rng)
    lines = ["setting training iterations to 10000", "training ..."]
    lines += J.megatron_iterations(rng, clock, 1, 10000, 1, 10000)
    lines.append(f"[after training is done] datetime: {clock.t:%Y-%m-%d %H:%M:%S}.000000 ")
    return lines, 0


@recipe("healthy")
def deepspeed_warmup_overflow(rng):
    lines = [f"[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {2.0 ** k}, reducing to {2.0 ** (k - 1)}"
             for k in (32, 31, 30)]
    lines += J.plain_steps(rng, 3000, 100) + ["training complete: 3000 steps"]
    return lines, 0


@recipe("healthy")
def torchrun_chatter(rng):
    lines, clock, host, pids = start(rng, 4, "trainer")
    lines.insert(6, f"{host}:{pids[1]}:{pids[1] + 50} [1] NCCL INFO socketPollConnect: connect to 10.40.7.17<41233> "
                 "returned Connection refused, retrying (1/34) after sleep for 100 msec")
    lines += J.trainer_records(rng, 2000, 100, 2000)
    lines += ["", "", "Training completed. Do not forget to share your model on huggingface.co/models =)", "", "",
              f"{{'train_runtime': '{rng.uniform(3000, 9000):.1f}', 'train_samples_per_second': '41.2', "
              f"'train_steps_per_second': '0.322', 'train_loss': '1.612', 'epoch': '1'}}",
              "[rank0]:[W1102 12:00:01.000000 4412 ProcessGroupNCCL.cpp:1538] WARNING: destroy_process_group() was "
              "not called before program exit, which can leak resources. For more info, please see "
              "https://pytorch.org/docs/stable/distributed.html#shutdown",
              f"{clock.glog('I')} {pids[0] - 60} torch/distributed/elastic/agent/server/api.py:889] [default] worker "
              "group successfully finished. Waiting 300 seconds for other agents to finish."]
    return lines, 0


@recipe("healthy")
def lightning_gpu(rng):
    lines, clock, host, pids = start(rng, 2, "lightning")
    lines += J.lightning_bars(rng, 3, 400) + ["`Trainer.fit` stopped: `max_epochs=3` reached."]
    return lines, 0


@recipe("healthy")
def recovered_oom_search(rng):
    lines, clock, host, pids = start(rng, 1, "trainer")
    lines.append(f"auto batch size: {F.oom_current(rng).split(': ', 1)[1]}")
    lines.append("auto batch size: retrying with per-device batch size 8")
    lines += J.trainer_records(rng, 1000, 50, 1000)
    lines += ["", "", "Training completed. Do not forget to share your model on huggingface.co/models =)", "", ""]
    return lines, 0


@recipe("healthy")
def hf_new_head(rng):
    lines = ["Some weights of LlamaForSequenceClassification were not initialized from the model checkpoint at "
             "/models/llama-3-8b and are newly initialized: ['score.weight']",
             "You should probably TRAIN this model on a down-stream task to be able to use it for predictions and inference."]
    lines += J.trainer_header(rng, 900, 8, 1) + J.trainer_records(rng, 900, 50, 900)
    lines += ["", "", "Training completed. Do not forget to share your model on huggingface.co/models =)", "", ""]
    return lines, 0


# ---------------------------------------------------------------- H · real surroundings (noise.py)
def noisy_start(rng, world, job, nodes, framework="plain"):
    """A batch job's start as real clusters log it: banners, modules, env, NCCL at INFO, warnings."""
    lines = N.slurm_prolog(rng, job, nodes) + N.module_loads(rng) + N.env_dump(rng)
    if rng.random() < 0.5:
        lines += N.pip_freeze(rng)
    if rng.random() < 0.5:
        lines += N.collect_env(rng)
    lines += N.nvidia_smi(rng, min(world, 8))
    clock = J.Clock(rng)
    agent = rng.randint(100000, 400000)
    pids = [agent + 60 + r for r in range(world)]
    lines += J.torchrun_banner(clock, agent)
    streams = [N.nccl_verbose(rng, nodes[r // 8 % len(nodes)], pids[r], r, world) +
               J.prefix(N.harmless_warnings(rng, r), "rank", r) for r in range(world)]
    lines += J.interleave(rng, streams)
    if framework == "trainer":
        lines += J.trainer_header(rng, 2000, 8, world)
    return lines, clock, pids


def noisy_progress(rng, epochs, colour):
    """tqdm epochs redrawn with carriage returns, with validation lines that carry a higher loss."""
    lines, loss = [], rng.uniform(3.0, 4.5)
    for e in range(epochs):
        lines.append(N.tqdm_epoch(rng, e, rng.choice([400, 1200]), loss, colour))
        lines.append(f"INFO:__main__:epoch {e} | train loss {loss:.4f} | "
                     f"{rng.uniform(120, 180):.1f} samples/s")
        lines.append(f"INFO:__main__:validation | loss {loss * 1.4:.4f} | accuracy {0.5 + 0.04 * e:.3f}")
        loss *= rng.uniform(0.8, 0.9)
    return lines


@recipe("healthy", draws=6)
def noisy_slurm_torchrun(rng):
    """8 to 32 ranks behind srun, full of lines that name errors, completing cleanly."""
    world = rng.choice([8, 16, 32])
    job = rng.randint(100000, 999999)
    nodes = [f"gpu-node-{k:02d}" for k in range(1, world // 8 + 1)]
    lines, clock, pids = noisy_start(rng, world, job, nodes)
    lines += J.prefix(noisy_progress(rng, rng.randint(4, 8), rng.random() < 0.5), "srun", 0)
    lines += ["0: INFO:__main__:saved checkpoint checkpoints/final.pt",
              f"0: INFO:__main__:{rng.choice(['Training completed successfully!', 'Finished training.', 'training complete'])}",
              f"0: [rank0]:[W302 11:20:31.092144 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been "
              "destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call "
              "destroy_process_group to ensure that any pending NCCL operations have finished in this process."]
    lines += N.side_process_killed(rng, job) + N.slurm_epilog(job)
    return lines, 0


@recipe("healthy", draws=4)
def noisy_lsf_single_gpu(rng):
    """One GPU under LSF: the job's output, then LSF's report of a clean exit; no exit code given."""
    lines = N.module_loads(rng) + N.harmless_warnings(rng, 0)
    lines += noisy_progress(rng, rng.randint(5, 12), False)
    lines += N.lsf_record(rng, rng.randint(10 ** 7, 10 ** 8), ok=True)
    return lines, None


@recipe("healthy", draws=4)
def noisy_deepspeed(rng):
    """The DeepSpeed launcher on one node: ds_report, launcher lines, stage-3 warnings, a clean end."""
    world = 8
    lines = N.ds_report(rng)
    lines += [f"[2026-05-0{rng.randint(1, 9)} 10:00:0{r}] [INFO] [launch.py:256:main] process {4100 + r} spawned with command: "
              f"['/opt/venvs/llm/bin/python', '-u', 'train.py', '--local_rank={r}', '--deepspeed', 'ds_z3.json']"
              for r in range(world)]
    lines += ["[2026-05-01 10:00:21,118] [WARNING] [stage3.py:2114:step] 1 pytorch allocator cache flushes since last "
              "step. this happens when there is high memory pressure and is detrimental to performance. if this is "
              "happening frequently consider adjusting settings to reduce memory consumption"]
    lines += J.trainer_header(rng, 1500, 4, world) + J.trainer_records(rng, 1500, 50, 1500)
    lines += ["Training completed. Do not forget to share your model on huggingface.co/models =)"]
    lines += [f"[2026-05-01 13:41:0{r}] [INFO] [launch.py:351:main] Process {4100 + r} exits successfully."
              for r in range(world)]
    return lines, 0


@recipe("healthy", draws=2)
def noisy_pbs_pdsh(rng):
    """pdsh fans the command out to hosts that prefix every line; PBS closes the job."""
    hosts = [f"cn-{k:04d}" for k in rng.sample(range(100, 900), 2)]
    lines = []
    for r, host in enumerate(hosts):
        lines += [f"{host}: " + x for x in J.prefix(N.harmless_warnings(rng, r), "rank", r)]
    lines += [f"{hosts[0]}: " + x for x in J.plain_steps(rng, 2000, 50)]
    lines += [f"{hosts[0]}: training complete: 2000 steps"]
    lines += N.pbs_epilogue(rng, rng.randint(10 ** 6, 10 ** 7))
    return lines, 0


@recipe("healthy", draws=1)
def noisy_many_megabytes(rng):
    """A 16-rank run whose every rank echoes its progress: about ten megabytes."""
    world = 16
    job = rng.randint(100000, 999999)
    lines, clock, pids = noisy_start(rng, world, job, ["gpu-node-01", "gpu-node-02"])
    per_rank = [J.prefix(J.plain_steps(rng, 60000, 5), "rank", r) for r in range(world)]
    lines += J.interleave(rng, per_rank)
    lines += ["[rank0]: training complete: 60000 steps"] + N.slurm_epilog(job)
    return lines, 0


@recipe("timeout", draws=2)
def lsf_run_limit(rng):
    lines = N.module_loads(rng) + N.harmless_warnings(rng, 0) + noisy_progress(rng, rng.randint(3, 6), False)
    lines += ["User defined signal 2"] + N.lsf_record(rng, rng.randint(10 ** 7, 10 ** 8), False,
                                                       "TERM_RUNLIMIT: job killed after reaching LSF run time limit.", 140)
    return lines, 140


@recipe("timeout", draws=1)
def pbs_walltime(rng):
    lines = N.module_loads(rng) + noisy_progress(rng, rng.randint(3, 6), True)
    lines += N.pbs_epilogue(rng, rng.randint(10 ** 6, 10 ** 7), "=>> PBS: job killed: walltime 86417 exceeded limit 86400")
    return lines, None


@recipe("cancelled", draws=2)
def lsf_owner_kill(rng):
    lines = ["wandb: Currently logged in as: user. Use `wandb login --relogin` to force relogin",
             "wandb: Tracking run with wandb version 0.18.7"] + noisy_progress(rng, rng.randint(2, 5), False)
    lines += N.lsf_record(rng, rng.randint(10 ** 7, 10 ** 8), False, "TERM_OWNER: job killed by owner.", 143)
    return lines, 143


@recipe("cancelled", draws=1)
def interrupted_traceback(rng):
    """Ctrl-C in the middle of a step: Python's traceback ends in KeyboardInterrupt."""
    script = rng.choice(J.SCRIPTS)
    lines = N.harmless_warnings(rng, 0) + noisy_progress(rng, 2, False)
    lines += J.traceback(rng, J.train_frames(rng, script) + [
        ("/opt/venvs/llm/lib/python3.11/site-packages/torch/autograd/graph.py", 825, "_engine_run_backward",
         "return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass")],
        ["KeyboardInterrupt"])
    return lines, 130


@recipe("oom_killer", draws=1)
def side_monitor_and_real_kill(rng):
    """The batch script's report names the training command: that kill is the cause."""
    job = rng.randint(100000, 999999)
    lines = N.module_loads(rng) + noisy_progress(rng, 3, False)
    lines += [f"/var/spool/slurmd/job{job}/slurm_script: line 38: {rng.randint(20000, 90000)} Killed"
              "                  python train.py --config configs/13b.yaml",
              f"slurmstepd: error: Detected 1 oom_kill event in StepId={job}.batch. Some of the step tasks have been OOM Killed."]
    return lines, 137


@recipe("cuda_oom", draws=1)
def pasted_oom_fragment(rng):
    """Two lines pasted into an issue: the error and one frame, nothing else."""
    return ["    return F.linear(input, self.weight, self.bias)",
            f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {rng.choice([512, 1024, 2048])}.00 MiB. "
            f"GPU 0 has a total capacity of 23.65 GiB of which {rng.randint(100, 400)}.06 MiB is free."], None


@recipe("file_not_found", draws=1)
def pasted_traceback_with_gap(rng):
    """A traceback pasted with its middle cut out ('...')."""
    script = rng.choice(J.SCRIPTS)
    return ["Traceback (most recent call last):", f'  File "{script}", line {rng.randint(100, 500)}, in <module>',
            "    main()", "...", '  File "/opt/venvs/llm/lib/python3.11/site-packages/datasets/load.py", line 1782, in load_dataset',
            "FileNotFoundError: [Errno 2] No such file or directory: '/data/corpus/train-00000-of-00064.parquet'"], None


# ---------------------------------------------------------------- unknown: real captures cut short
def derived_unknown(n: int) -> List[Tuple[str, List[str]]]:
    """Real captured runs cut off mid-training: no failure, no completion, no exit code."""
    out = []
    sources = sorted(p for p in CAPTURED.glob("healthy-*.log") if p.stat().st_size < 200_000)
    for k, path in enumerate(sources[: n]):
        lines = path.read_text(errors="replace").splitlines()
        progress_lines = [i for i, l in enumerate(lines) if "loss" in l]
        if len(progress_lines) < 4:
            continue
        cut = progress_lines[len(progress_lines) // 2]
        out.append((f"unknown-d{len(out) + 1:02d}-{path.stem}", lines[: cut + 1]))
    return out


def seed_of(key: str) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest()[:12], 16)


TARGET = 10  # logs per class, counting the captured ones


def captured_counts() -> Dict[str, int]:
    counts: Dict[str, int] = {}
    index = CAPTURED / "index.jsonl"
    if index.exists():
        for line in index.read_text().splitlines():
            cls = json.loads(line)["class"]
            counts[cls] = counts.get(cls, 0) + 1
    return counts


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.log"):
        old.unlink()
    have = captured_counts()
    rows = []
    for cls, recipes in sorted(RECIPES.items()):
        # Every recipe once; then more draws of them until the class has TARGET logs.
        plain = [f for f in recipes if f.__name__ not in DRAWS]
        wanted = max(len(plain), TARGET - have.get(cls, 0)) if plain else 0
        draws = [plain[k % len(plain)] for k in range(wanted)]
        for f in recipes:  # recipes that ask for a number of draws get exactly that many
            draws += [f] * DRAWS.get(f.__name__, 0)
        for k, f in enumerate(draws):
            sid = f"{cls}-c{k + 1:02d}-{f.__name__ if f.__name__ != '<lambda>' else 'v' + str(k % max(len(plain), 1))}"
            lines, code = f(random.Random(seed_of(sid)))
            (OUT / f"{sid}.log").write_text("\n".join(lines) + "\n")
            row = {"id": sid, "class": cls, "source": "composed", "log_path": f"corpus/logs/composed/{sid}.log",
                   "true_exit_code": code}
            if f.__name__ in G15_OVERRIDE:
                row["mode"] = G15_OVERRIDE[f.__name__]
            rows.append(row)
    for sid, lines in derived_unknown(12):
        (OUT / f"{sid}.log").write_text("\n".join(lines) + "\n")
        rows.append({"id": sid, "class": "unknown", "source": "derived", "log_path": f"corpus/logs/composed/{sid}.log",
                     "true_exit_code": None})
    with open(OUT / "index.jsonl", "w") as f:
        for row in sorted(rows, key=lambda r: r["id"]):
            f.write(json.dumps(row) + "\n")
    print(f"composed {len(rows)} logs into {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
