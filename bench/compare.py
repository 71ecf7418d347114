"""gpudiag beside `cat`, `rg -c` with the same 15 patterns and the published
Python rules, on the same generated inputs: paired runs, median, ratios.

Run: make bench-compare (or python bench/compare.py [--size-mb N] [--reps N]).

Inputs, generated into a temporary folder:
  realistic  30% HF Trainer dicts, 30% Megatron-LM iteration lines, 20% NCCL
             INFO, 10% tqdm bars redrawn with carriage returns, 10% warnings;
             a CUDA OOM traceback at the end
  nccl       NCCL INFO lines and warnings only
  corpus     the published corpus's 474 logs (../shared), in-process from Python
  small      one small log from the command line, warm cache, started with
             posix_spawn and reaped (bench/spawn.py), as bench/startup.py does
Beside each generated log, "matcher alone" is Hyperscan over every byte of it
with the shipped rules' database, nothing done per match
(build/gpudiag_bench's BM_MatcherAloneGivenLog, the log in memory): what a
scan of every byte costs. gpudiag scans only the lines whose layout it has
not seen (README, Scanning), so it can read a log faster than that.
The published rules are reimplemented here from evaluation.md's description
(15 case-insensitive regexes in priority order, first match wins, over the
whole text): they are the reference, not gpudiag's rules.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, List, Sequence, Tuple

from spawn import timed

ROOT = pathlib.Path(__file__).resolve().parents[1]
PUBLISHED_CORPUS = ROOT.parent / "shared" / "corpora" / "gpualert-eval"

# One per class of the published corpus, in priority order.
PUBLISHED_RULES: Sequence[Tuple[str, str]] = (
    ("cuda_oom", r"CUDA out of memory|OutOfMemoryError"),
    ("device_mismatch", r"Expected all tensors to be on the same device"),
    ("cuda_runtime", r"CUDA error|illegal memory access|device-side assert"),
    ("nccl", r"NCCL (?:error|WARN)|ncclInternalError|ncclSystemError"),
    ("segfault", r"Segmentation fault|SIGSEGV"),
    ("oom_killer", r"\bKilled\b|oom-kill|exitcode\s*:\s*-9"),
    ("ram_oom", r"MemoryError|Cannot allocate memory"),
    ("nan_loss", r"loss[^\n]{0,20}\bnan\b"),
    ("file_not_found", r"FileNotFoundError|No such file or directory"),
    ("permission", r"PermissionError|Permission denied"),
    ("missing_module", r"ModuleNotFoundError|No module named"),
    ("div_zero", r"ZeroDivisionError|division by zero"),
    ("assertion", r"AssertionError"),
    ("runtime_error", r"RuntimeError"),
    ("traceback", r"Traceback \(most recent call last\)"),
)

PUBLISHED_SCRIPT = """
import re, sys
RULES = [(c, re.compile(p, re.I)) for c, p in %r]
def classify(text):
    for cls, rx in RULES:
        if rx.search(text):
            return cls
    return "generic"
for path in sys.argv[1:]:
    with open(path, encoding="utf-8", errors="replace") as f:
        print(classify(f.read()))
""" % (list(PUBLISHED_RULES),)

OOM_TAIL = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 212, in <module>\n'
    "    loss.backward()\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity "
    "of 79.15 GiB of which 1.20 GiB is free.\n")


def realistic_line(i: int, rng: random.Random) -> str:
    kind = rng.random()
    rank = i % 8
    if kind < 0.3:
        return (f"{{'loss': {2.5 - i * 1e-7 + rng.random() * 0.1:.4f}, 'grad_norm': {rng.random() * 3:.3f}, "
                f"'learning_rate': {2e-5 * (1 - i * 1e-8):.3e}, 'epoch': {i * 1e-6:.2f}}}\n")
    if kind < 0.6:
        return (f" [2026-11-23 10:{i // 60000 % 60:02d}:{i // 1000 % 60:02d}] iteration {i:>8}/ 5000000 | "
                f"consumed samples: {i * 512:>12} | elapsed time per iteration (ms): {400 + rng.random() * 30:.1f} | "
                f"learning rate: 1.500000E-04 | global batch size:   512 | lm loss: {2.1 + rng.random() * 0.2:.6E} | "
                f"loss scale: 1.0 | grad norm: {rng.random() + 0.5:.3f} |\n")
    if kind < 0.8:
        return (f"gpu-node-{rank // 4:02d}:{180000 + rank}:{180100 + rank} [{rank}] NCCL INFO Channel "
                f"{i % 32:02d}/0 : {rank}[{rank}] -> {(rank + 1) % 8}[{(rank + 1) % 8}] via P2P/IPC/read\n")
    if kind < 0.9:
        n = i % 1000
        return "".join(f"\r{p}/1000 [00:{p // 60:02d}<00:10, 42.{p % 10}it/s, loss={2 + rng.random():.3f}]"
                       for p in range(n, n + 3)) + "\n"
    return (f"/opt/venv/lib/python3.11/site-packages/torch/utils/checkpoint.py:{90 + i % 10}: UserWarning: "
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly.\n")


def nccl_line(i: int, rng: random.Random) -> str:
    rank = i % 8
    if rng.random() < 0.85:
        return (f"gpu-node-{rank // 4:02d}:{180000 + rank}:{180100 + rank} [{rank}] NCCL INFO Channel "
                f"{i % 32:02d}/0 : {rank}[{rank}] -> {(rank + 1) % 8}[{(rank + 1) % 8}] via P2P/IPC/read\n")
    return (f"[rank{rank}]:[W1123 10:00:{i % 60:02d}.{i % 1000:03d} ProcessGroupNCCL.cpp:{1000 + i % 50}] "
            "Warning: TORCH_NCCL_AVOID_RECORD_STREAMS=1 has no effect for point-to-point collectives.\n")


def write_log(path: pathlib.Path, size: int, line: Callable[[int, random.Random], str], tail: str) -> None:
    rng = random.Random(7)
    with open(path, "w") as f:
        written, i, block = 0, 0, []
        while written < size:
            text = line(i, rng)
            block.append(text)
            written += len(text)
            i += 1
            if len(block) >= 10000:
                f.write("".join(block))
                block = []
        f.write("".join(block) + tail)


STARTED = time.perf_counter()


def progress(message: str) -> None:
    """One line on stderr per step (the table goes to stdout): a 1 GB run
    takes many minutes, most of them the published rules' Python."""
    print(f"[{time.perf_counter() - STARTED:7.1f} s] {message}", file=sys.stderr, flush=True)


def paired(commands: Dict[str, List[str]], reps: int) -> Dict[str, float]:
    """Median wall time of each command, the commands alternated in each repetition."""
    times: Dict[str, List[float]] = {name: [] for name in commands}
    for _ in range(reps):
        for name, command in commands.items():
            times[name].append(timed(command, exit_codes=(0, 1)) / 1000)
    return {name: statistics.median(t) for name, t in times.items()}


def in_process(code: str, reps: int) -> float:
    """Median seconds of `code` (which sets `run`) timed inside one Python process."""
    script = code + f"""
import statistics, time
run()
ts = []
for _ in range({reps}):
    t = time.perf_counter(); run(); ts.append(time.perf_counter() - t)
print(statistics.median(ts))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def matcher_alone(log: pathlib.Path) -> float:
    """Seconds Hyperscan alone takes over `log` with the shipped rules (0 when
    the benchmark is not built)."""
    bench = pathlib.Path(os.environ.get("GPUDIAG_BENCH", ROOT / "build" / "gpudiag_bench"))
    if not bench.exists():
        return 0.0
    out = subprocess.run([str(bench), "--benchmark_filter=BM_MatcherAloneGivenLog", "--benchmark_format=json"],
                         capture_output=True, text=True, check=True, env=dict(os.environ, GPUDIAG_BENCH_LOG=str(log)))
    run = json.loads(out.stdout)["benchmarks"][0]
    return run["real_time"] / {"ms": 1e3, "us": 1e6, "ns": 1e9, "s": 1}[run["time_unit"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=256,
                        help="size of each generated log (default 256; the published rules' Python takes "
                             "about 100 s a pass over 1024)")
    parser.add_argument("--reps", type=int, default=3, help="paired repetitions (default 3)")
    args = parser.parse_args()
    cli = os.environ.get("GPUDIAG_CLI", str(ROOT / "build" / "gpudiag"))
    rg = shutil.which("rg")
    cat = shutil.which("cat") or "/bin/cat"  # spawned without a PATH search
    rg_args = ["-c", "-i"] + [a for _, p in PUBLISHED_RULES for a in ("-e", p)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        published = folder / "published.py"
        published.write_text(PUBLISHED_SCRIPT)
        for name, line, tail in (("realistic", realistic_line, OOM_TAIL), ("nccl", nccl_line, "")):
            log = folder / f"{name}.log"
            progress(f"{name}: writing {args.size_mb} MiB")
            write_log(log, args.size_mb << 20, line, tail)
            gb = log.stat().st_size / 1e9
            commands = {"cat": [cat, str(log)], "gpudiag": [cli, "diagnose", "-f", "jsonl", str(log)],
                        "published rules (Python)": [sys.executable, str(published), str(log)]}
            if rg:
                commands["rg -c, 15 patterns"] = [rg, *rg_args, str(log)]
            progress(f"{name}: {', '.join(commands)}, {args.reps} paired repetitions")
            medians = paired(commands, args.reps)
            progress(f"{name}: the matcher alone")
            if (alone := matcher_alone(log)) > 0:
                medians["matcher alone (Hyperscan, in memory)"] = alone
            for tool, seconds in medians.items():
                rows.append((f"{args.size_mb} MiB {name} log", tool, f"{gb / seconds:.2f} GB/s",
                             f"{medians['gpudiag'] / seconds:.3g}"))
            log.unlink()
        if PUBLISHED_CORPUS.is_dir():
            progress("the published corpus, in-process")
            corpus = sorted(str(p) for p in PUBLISHED_CORPUS.rglob("*.log"))
            load = f"import pathlib\nDATA = [pathlib.Path(p).read_bytes() for p in {corpus!r}]\n"
            ours = in_process(load + "import gpudiag\nR = gpudiag.RuleSet()\n"
                              "def run():\n    for d in DATA: gpudiag.diagnose(d, rules=R)\n", args.reps)
            theirs = in_process(load + "exec(open(%r).read().split('for path in')[0])\n" % str(published) +
                                "TEXT = [d.decode('utf-8', 'replace') for d in DATA]\n"
                                "def run():\n    for t in TEXT: classify(t)\n", args.reps)
            for tool, seconds in (("gpudiag", ours), ("published rules (Python)", theirs)):
                rows.append((f"the {len(corpus)} published logs, in-process", tool, f"{seconds * 1000:.1f} ms",
                             f"{ours / seconds:.3g}"))
        progress("one small log, 100 alternated runs a repetition")
        small = ROOT / "corpus" / "examples" / "segfault_srun.log"
        many = {"cat": [cat, str(small)], "gpudiag": [cli, "diagnose", str(small)]}
        times: Dict[str, List[float]] = {k: [] for k in many}
        for _ in range(args.reps * 100):
            for k, command in many.items():
                times[k].append(timed(command) / 1000)
        medians = {k: statistics.median(v) for k, v in times.items()}
        for tool, seconds in medians.items():
            rows.append(("one small log, command line", tool, f"{seconds * 1000:.2f} ms",
                         f"{medians['gpudiag'] / seconds:.3g}"))
    print(f"{subprocess.run([cli, '--version'], capture_output=True, text=True).stdout.strip()}; "
          f"{args.reps} paired repetitions, median; ratio = gpudiag's time / the tool's")
    print("| input | tool | speed or time | ratio |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
