"""Where one small log's time goes from the command line: each step of a
`gpudiag diagnose` call beside the one before it, started alternately, many
times, the median of each and of the increments.

  `true`                           a process and nothing else
  `gpudiag --version`              + the command's start: the dynamic loader,
                                     the C++ runtime and simdjson, the options
  `gpudiag diagnose EMPTY`         + the shipped rules loaded in a new process
                                     and an empty log's diagnosis printed
  `gpudiag diagnose SMALL`         + a small log read, matched and resolved

Run: make bench-startup (or python bench/startup.py [--reps N] [--log FILE]).
Each run is started with posix_spawn and waited for here (bench/spawn.py);
the spawn's own cost is in every row alike, so the increments are the
command's.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
from typing import Dict, List

from spawn import gpudiag_cli, timed

ROOT = pathlib.Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300, help="runs of each (default 300)")
    parser.add_argument("--log", type=pathlib.Path, default=ROOT / "corpus" / "examples" / "segfault_srun.log",
                        help="the small log (default corpus/examples/segfault_srun.log)")
    args = parser.parse_args()
    if not args.log.is_file():
        sys.exit(f"startup.py: {args.log}: no such file")
    cli = gpudiag_cli()
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "empty.log")
        open(empty, "wb").close()
        steps: Dict[str, List[str]] = {
            "`true`": [shutil.which("true") or "/bin/true"],
            "`gpudiag --version`": [cli, "--version"],
            "`gpudiag diagnose EMPTY`": [cli, "diagnose", empty],
            f"`gpudiag diagnose {args.log.name}`": [cli, "diagnose", str(args.log)],
        }
        times: Dict[str, List[float]] = {name: [] for name in steps}
        for _ in range(20):  # the page cache and the rules cache warm
            for argv in steps.values():
                timed(argv)
        for _ in range(args.reps):
            for name, argv in steps.items():
                times[name].append(timed(argv))
    names = list(steps)
    print(f"{args.reps} runs of each, alternated; median ms; the increment is the median of "
          "the paired differences with the row above")
    print("| command | median ms | increment ms |")
    print("|---|---|---|")
    for i, name in enumerate(names):
        increment = ""
        if i:
            increment = f"{statistics.median(a - b for a, b in zip(times[name], times[names[i - 1]])):.2f}"
        print(f"| {name} | {statistics.median(times[name]):.2f} | {increment} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
