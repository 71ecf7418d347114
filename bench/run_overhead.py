"""What `gpudiag run` adds to a command: `true` bare beside `gpudiag run --
true`, started alternately, many times; the median of each and of the paired
differences. The goal is at most 3 ms a job.

Run: make bench-run (or python bench/run_overhead.py [--reps N]).

Each run is started with posix_spawn and waited for here, so what the
timing holds beyond the command is the wrapper's own work: its start, the
rules, the log and its header, the fork, the relay and the diagnosis.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from typing import List

from spawn import gpudiag_cli, timed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300, help="runs of each (default 300)")
    args = parser.parse_args()
    true = shutil.which("true") or "/bin/true"
    with tempfile.TemporaryDirectory() as tmp:
        wrapped = [gpudiag_cli(), "run", "--log", os.path.join(tmp, "run.log"), "--", true]
        for _ in range(20):  # warm the page cache and the rules cache
            timed([true])
            timed(wrapped)
        bare: List[float] = []
        under: List[float] = []
        for _ in range(args.reps):
            bare.append(timed([true]))
            under.append(timed(wrapped))
    differences = [w - b for w, b in zip(under, bare)]
    print(f"| command ({args.reps} runs each, alternated) | median ms | p90 ms |")
    print("|---|---|---|")
    for name, values in ((f"`true`", bare), (f"`gpudiag run -- true`", under)):
        print(f"| {name} | {statistics.median(values):.2f} | {sorted(values)[int(0.9 * len(values))]:.2f} |")
    print(f"\noverhead of gpudiag run: {statistics.median(differences):.2f} ms a job (median of the paired "
          f"differences; goal <= 3 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
