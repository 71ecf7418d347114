"""A progress line on stderr: redrawn in place on a terminal, a few plain lines in a pipe."""

from __future__ import annotations

import sys
import time
from typing import Optional, TextIO


class Progress:
    def __init__(self, total: int, what: str, stream: Optional[TextIO] = None,
                 enabled: bool = True) -> None:
        self.total, self.what = total, what
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and total > 0
        self.tty = self.enabled and self.stream.isatty()
        self.start = time.monotonic()
        self._next_plain = 0.25  # fraction at which a pipe gets its next line

    def update(self, done: int, item: str = "") -> None:
        if not self.enabled:
            return
        fraction = done / self.total
        if self.tty:
            width = 24
            bar = "#" * int(fraction * width)
            line = f"\r{self.what} [{bar:<{width}}] {done}/{self.total} {item}"
            self.stream.write(line[:120].ljust(120) if len(line) > 1 else line)
            self.stream.flush()
        elif fraction >= self._next_plain or done == self.total:
            self.stream.write(f"{self.what}: {done}/{self.total}\n")
            self._next_plain = (int(fraction * 4) + 1) / 4
            self.stream.flush()

    def close(self) -> None:
        if self.tty:
            elapsed = time.monotonic() - self.start
            self.stream.write(f"\r{self.what}: {self.total} in {elapsed:.1f} s".ljust(120) + "\n")
            self.stream.flush()
