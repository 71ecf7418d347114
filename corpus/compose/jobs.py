"""The surroundings of a composed log: a GPU job's start-up, progress and launcher lines.

Every generator takes a ``random.Random`` so each log is reproducible from its
seed. Formats follow ../shared/docs/log-formats.md (§1 prefixes, §2 launchers,
§11 progress markers).
"""

from __future__ import annotations

import datetime as dt
import math
import random
from typing import Iterable, List, Optional

HOSTS = ("gpu-a17", "node07", "dgx-b12", "hgx-r3-14", "cn-0423", "g4-node-31")
SCRIPTS = ("/workspace/train.py", "/home/ml/project/pretrain_gpt.py", "/opt/jobs/run_clm.py",
           "/mnt/code/finetune.py", "/workspace/llm/train_sft.py")


class Clock:
    def __init__(self, rng: random.Random):
        self.t = dt.datetime(2026, rng.randint(1, 10), rng.randint(1, 28), rng.randint(0, 23),
                             rng.randint(0, 59), rng.randint(0, 59), rng.randint(0, 999999))

    def tick(self, seconds: float) -> dt.datetime:
        self.t += dt.timedelta(seconds=seconds)
        return self.t

    def glog(self, level="W") -> str:  # W1102 11:40:02.118000
        return f"{level}{self.t:%m%d %H:%M:%S}.{self.t.microsecond:06d}"

    def slurm(self) -> str:
        return f"{self.t:%Y-%m-%dT%H:%M:%S}"


def prefix(lines: Iterable[str], style: Optional[str], rank: int) -> List[str]:
    """Rank prefixes: torchrun's [rankN]: and [defaultN]:, srun --label's 'N: '."""
    p = {"rank": f"[rank{rank}]: ", "default": f"[default{rank}]:", "srun": f"{rank}: ",
         None: ""}[style]
    return [p + line for line in lines]


def interleave(rng: random.Random, streams: List[List[str]]) -> List[str]:
    """Merges per-rank streams as a shared pipe does: each keeps its order."""
    out, pos = [], [0] * len(streams)
    while any(p < len(s) for p, s in zip(pos, streams)):
        live = [i for i, s in enumerate(streams) if pos[i] < len(s)]
        i = rng.choice(live)
        take = rng.randint(1, 3)
        out += streams[i][pos[i]:pos[i] + take]
        pos[i] += take
    return out


def torchrun_banner(clock: Clock, pid: int) -> List[str]:
    g = f"{clock.glog()} {pid} torch/distributed/run.py:792]"
    return [f"{g} ", f"{g} *****************************************",
            f"{g} Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, "
            "to avoid your system being overloaded, please further tune the variable for optimal "
            "performance in your application as needed.",
            f"{g} *****************************************"]


def nccl_init(rng: random.Random, host: str, pid: int, rank: int, nranks: int, version="2.21.5") -> List[str]:
    tid = pid + rng.randint(40, 90)
    p = f"{host}:{pid}:{tid} [{rank % 8}] NCCL INFO"
    lines = []
    if rank == 0:
        lines.append(f"{p} NCCL version {version}+cuda12.4")
    lines += [f"{p} Bootstrap : Using ib0:10.40.{rng.randint(1, 9)}.{rng.randint(2, 250)}<0>",
              f"{p} NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.40.7.17<0>",
              f"{p} Using network IB",
              f"{p} comm 0x{rng.getrandbits(40):x} rank {rank} nranks {nranks} cudaDev {rank % 8} "
              f"nvmlDev {rank % 8} busId {rng.choice(['18', '2a', '3a', '5d', '9a', 'ab', 'ba', 'db'])}000 "
              f"commId 0x{rng.getrandbits(64):x} - Init COMPLETE"]
    if rng.random() < 0.5:
        lines.insert(2, f"{p} Channel 00/08 : {rank} {(rank + 1) % nranks}")
    return lines


def loss_curve(rng: random.Random, n: int, start: float, end: float) -> List[float]:
    out = []
    for i in range(n):
        frac = i / max(n - 1, 1)
        v = end + (start - end) * math.exp(-4 * frac)
        out.append(max(v * (1 + rng.gauss(0, 0.03)), 1e-3))
    return out


def plain_steps(rng: random.Random, steps: int, every: int, start=6.9, end=2.4, fmt="step") -> List[str]:
    n = steps // every
    losses = loss_curve(rng, n, start, end)
    out = []
    for i, loss in enumerate(losses, 1):
        s = i * every
        if fmt == "step":
            out.append(f"step {s} | loss {loss:.4f} | lr {3e-4 * min(1, s / 200):.2e} | "
                       f"{rng.uniform(180, 240):.1f} TFLOP/s")
        else:
            out.append(f"epoch {s // 500} step {s} loss {loss:.4f}")
    return out


def trainer_header(rng: random.Random, total: int, per_device: int, world: int) -> List[str]:
    return ["***** Running training *****",
            f"  Num examples = {total * per_device * world * rng.choice([1, 2]):,}",
            "  Num Epochs = 1",
            f"  Instantaneous batch size per device = {per_device}",
            f"  Total train batch size (w. parallel, distributed & accumulation) = {per_device * world}",
            "  Gradient Accumulation steps = 1",
            f"  Total optimization steps = {total:,}",
            f"  Number of trainable parameters = {rng.choice([124439808, 1235814400, 6738415616]):,}"]


def trainer_records(rng: random.Random, steps: int, every: int, total: int, start=2.9, end=1.3,
                    nan_from: Optional[int] = None) -> List[str]:
    out = []
    losses = loss_curve(rng, steps // every, start, end)
    for i, loss in enumerate(losses, 1):
        s = i * every
        shown = "nan" if nan_from is not None and s >= nan_from else f"{loss:.4g}"
        gn = "nan" if shown == "nan" else f"{rng.uniform(0.4, 2.5):.4g}"
        out.append(f"{{'loss': '{shown}', 'grad_norm': '{gn}', 'learning_rate': "
                   f"'{2e-5 * (1 - s / total):.4g}', 'epoch': '{s / total:.4g}'}}")
        if rng.random() < 0.3:
            out.append(f" {int(100 * s / total):2d}%|{'█' * (10 * s // total):<10}| {s}/{total} "
                       f"[{s // 60:02d}:{s % 60:02d}<{(total - s) // 60:02d}:00,  {rng.uniform(1, 3):.2f}it/s]")
    return out


def lightning_header(rng: random.Random, gpus: int) -> List[str]:
    lines = ["GPU available: True (cuda), used: True", "TPU available: False, using: 0 TPU cores",
             "HPU available: False, using: 0 HPUs"]
    lines += [f"LOCAL_RANK: {r} - CUDA_VISIBLE_DEVICES: [{', '.join(map(str, range(gpus)))}]"
              for r in range(gpus)]
    lines.append("You are using a CUDA device ('NVIDIA H100 80GB HBM3') that has Tensor Cores. To "
                 "properly utilize them, you should set `torch.set_float32_matmul_precision('medium' | "
                 "'high')` which will trade-off precision for performance.")
    return lines


def lightning_bars(rng: random.Random, epochs: int, batches: int, start=2.2, end=0.6) -> List[str]:
    out = []
    losses = loss_curve(rng, epochs * 4, start, end)
    for e in range(epochs):
        for q in range(1, 5):
            n = batches * q // 4
            out.append(f"Epoch {e}: {100 * n // batches:3d}%|{'█' * (10 * n // batches):<10}| "
                       f"{n}/{batches} [{n // 9:02d}:{n % 60:02d}<00:{rng.randint(10, 59)}, "
                       f"{rng.uniform(8, 14):.2f}it/s, v_num=3, train_loss={losses[e * 4 + q - 1]:.3f}]")
    return out


def megatron_iterations(rng: random.Random, clock: Clock, first: int, last: int, every: int, total: int,
                        start=9.8, end=3.1, nan_from: Optional[int] = None,
                        diverge_from: Optional[int] = None) -> List[str]:
    out = []
    n = (last - first) // every + 1
    losses = loss_curve(rng, n, start, end)
    nan_count = 0
    for k in range(n):
        it = first + k * every
        clock.tick(every * rng.uniform(1.1, 1.4))
        loss = losses[k]
        if diverge_from is not None and it >= diverge_from:
            loss = losses[k] * (1.6 ** ((it - diverge_from) / every + 1))
        field = f" lm loss: {loss:.6E} |"
        if nan_from is not None and it >= nan_from:
            nan_count += every
            field = ""
        out.append(f" [{clock.t:%Y-%m-%d %H:%M:%S}] iteration {it:8d}/{total:8d} | consumed samples: "
                   f"{it * 512:12d} | elapsed time per iteration (ms): {rng.uniform(1100, 1400):.1f} | "
                   f"throughput per GPU (TFLOP/s/GPU): {rng.uniform(380, 420):.1f} | learning rate: "
                   f"{3e-4 * min(1, it / 2000):.6E} | global batch size:   512 |{field} loss scale: 1.0 | "
                   f"grad norm: {rng.uniform(0.2, 1.5):.3f} | number of skipped iterations:   0 | "
                   f"number of nan iterations: {nan_count:3d} |")
    return out


def traceback(rng: random.Random, frames: List[tuple], final: List[str]) -> List[str]:
    out = ["Traceback (most recent call last):"]
    for path, line, func, code in frames:
        out += [f'  File "{path}", line {line}, in {func}', f"    {code}"]
    return out + final


def train_frames(rng: random.Random, script: str) -> List[tuple]:
    return [(script, rng.randint(300, 700), "<module>", "main()"),
            (script, rng.randint(100, 299), "main", "trainer.train()" if rng.random() < 0.5 else "train(cfg)"),
            ("/usr/local/lib/python3.11/site-packages/torch/nn/modules/module.py", 1775, "_call_impl",
             "return forward_call(*args, **kwargs)")]


def slurm_header(rng: random.Random, job: int, nodes: List[str]) -> List[str]:
    return [f"SLURM_JOB_ID={job}", f"SLURM_JOB_NODELIST={','.join(nodes)}",
            f"srun: job {job} queued and waiting for resources",
            f"srun: job {job} has been allocated resources"]


def childfailed(clock: Clock, script: str, host: str, rank: int, local: int, code: int, pid: int,
                signame: Optional[str], others: List[tuple] = ()) -> List[str]:
    """torchrun's ChildFailedError summary (log-formats §2.1)."""
    ts = f"{clock.t:%Y-%m-%d_%H:%M:%S}"
    tb = (f"Signal {-code} ({signame}) received by PID {pid}" if code < 0 else
          "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")
    lines = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
             "============================================================", f"{script} FAILED",
             "------------------------------------------------------------", "Failures:"]
    if not others:
        lines.append("  <NO_OTHER_FAILURES>")
    for k, (orank, opid) in enumerate(others, 1):
        lines += [f"[{k}]:", f"  time      : {ts}", f"  host      : {host}",
                  f"  rank      : {orank} (local_rank: {orank % 8})",
                  f"  exitcode  : -15 (pid: {opid})", "  error_file: <N/A>",
                  f"  traceback : Signal 15 (SIGTERM) received by PID {opid}"]
    lines += ["------------------------------------------------------------",
              "Root Cause (first observed failure):", "[0]:", f"  time      : {ts}",
              f"  host      : {host}", f"  rank      : {rank} (local_rank: {local})",
              f"  exitcode  : {code} (pid: {pid})", "  error_file: <N/A>", f"  traceback : {tb}",
              "============================================================"]
    return lines
