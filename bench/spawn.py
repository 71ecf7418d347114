"""Timing a command from its spawn to its reaping, shared by the benchmarks
that measure what one call of the command costs (run_overhead.py,
startup.py). Started with posix_spawn and waited for here, so what a timing
holds beyond the command is the same small spawn for every command."""

from __future__ import annotations

import os
import pathlib
import shutil
import sys
import time
from typing import Sequence


def _script() -> str:
    return pathlib.Path(sys.argv[0]).name


def gpudiag_cli() -> str:
    """The gpudiag command: $GPUDIAG_CLI, else the one on PATH."""
    path = os.environ.get("GPUDIAG_CLI") or shutil.which("gpudiag")
    if not path:
        sys.exit(f"{_script()}: set GPUDIAG_CLI to the gpudiag command (make bench-run and "
                 "make bench-startup do)")
    return path


def timed(argv: Sequence[str], exit_codes: Sequence[int] = (0,)) -> float:
    """Milliseconds from spawning `argv` (its output to /dev/null) to reaping
    it; exits naming the command if it ends with a status not in
    `exit_codes` (`rg -c` ends with 1 where nothing matched)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        start = time.perf_counter()
        pid = os.posix_spawn(argv[0], list(argv), os.environ,
                             file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
        _, status = os.waitpid(pid, 0)
        took = (time.perf_counter() - start) * 1000
    finally:
        os.close(devnull)
    if os.waitstatus_to_exitcode(status) not in exit_codes:
        sys.exit(f"{_script()}: {' '.join(argv)} exited with {os.waitstatus_to_exitcode(status)}")
    return took
