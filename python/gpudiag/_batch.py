"""``gpudiag batch``: reclassify many finished jobs into JSONL, CSV or Parquet.

Inputs are directories, manifests and files, as ``diagnose_many`` takes them;
results are written in input order as they come, so memory stays bounded
however many logs there are, and a rerun with ``--resume`` skips the inputs
already in the output.
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
import os
import pathlib
import re
import sys
import time
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, TextIO

from . import _core
from ._many import _COLUMNS, InputFailure, Result, Task, _progress, _row, _tasks, files_in_order, jsonl_in_order
from ._taxonomy import taxonomy

FORMATS = ("jsonl", "csv", "parquet")

EPILOG = """\
inputs:
  DIR              every log below it, as 'gpudiag diagnose DIR' lists them
  MANIFEST         a .csv or .jsonl file with a 'path' column (relative to the
                   manifest), an optional 'exit_code' column and an optional
                   'sacct' column: a file with the job's scheduler record
                   (sacct --json, sacct -P, scontrol show job), whose state
                   counts as evidence
  FILE             one log (compressed, container records: as 'diagnose' reads them)

output:
  JSONL            the diagnose command's JSON, one object per line; an input
                   that could not be read is {"path", "error", "exit_code"}
  CSV, Parquet     one row per log: path, class, g15, owner, family, confidence,
                   evidence_line, evidence_rule, evidence, rank, steps,
                   last_loss, exit_code, compression, damage, error
  rows come in input order; a summary (count per class and owner, how many a
  plain rerun would fix) goes to stderr at the end.

examples:
  gpudiag batch -j 8 -o results.parquet /var/log/jobs/
  gpudiag batch -o results.csv --resume manifest.csv
  gpudiag batch -g '*.out' jobs/ | jq -r '[.path, .class] | @tsv'

exit status: 0 every input read; 1 an input could not be read, or only in
part (its row says so; the others are still written); 2 a usage error; 130
interrupted (Ctrl-C): the rows written so far stay, and --resume goes on;
141 the reader of standard output went away (| head).
"""


def _size(text: str) -> int:
    """'1048576', '500M', '2G' (K, M, G, T: powers of 1024), as diagnose's --max-bytes."""
    match = re.fullmatch(r"(\d+)(?:([KMGTkmgt])(?:iB|ib)?)?", text)
    if not match or int(match.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"takes a size such as 1048576, 500M or 2G, not {text!r}")
    power = " KMGT".index(match.group(2).upper()) if match.group(2) else 0
    return int(match.group(1)) << (10 * power)


def _exit_code(text: str) -> int:
    """An exit status: -9, 137, or a Windows status as Python prints it (3221225477)."""
    code = _core.parse_exit_status(text)
    if code is None:
        raise argparse.ArgumentTypeError(f"takes an exit status such as -9, 137 or 3221225477, not {text!r}")
    return code


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gpudiag batch", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
        description="Diagnose many logs on every core and write one row per log.")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="directories, manifests, log files")
    p.add_argument("-o", "--output", help="where to write (format from its suffix); default: JSONL on stdout")
    p.add_argument("-f", "--format", choices=FORMATS, help="jsonl, csv or parquet (default: the output's suffix)")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                   help="threads (default: every core, %(default)s here)")
    p.add_argument("-g", "--glob", action="append", default=[],
                   help="in a DIR, the files to read ('*.log'; '!GLOB' leaves them out), as diagnose's")
    p.add_argument("--hidden", action="store_true", help="in a DIR, read hidden files too")
    p.add_argument("--exit-code", type=_exit_code,
                   help="the exit status of every input a manifest gives none (-9, 137; a Windows status "
                        "as Python prints it, 3221225477)")
    p.add_argument("--max-bytes", type=_size, metavar="SIZE",
                   help="read no more than SIZE bytes of each input (500M, 2G), as diagnose's --max-bytes")
    p.add_argument("--resume", action="store_true",
                   help="skip the inputs already in OUTPUT and add the others to it")
    bar = p.add_mutually_exclusive_group()
    bar.add_argument("--progress", dest="progress", action="store_true", default=None,
                     help="show the progress bar even when stderr is not a terminal")
    bar.add_argument("--no-progress", dest="progress", action="store_false", help="never show it")
    return p


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return str(args.format)
    if args.output:
        suffix = pathlib.Path(args.output).suffix.lstrip(".")
        if suffix in FORMATS:
            return suffix
        raise ValueError(f"{args.output}: cannot tell the format from the suffix; give --format")
    return "jsonl"


def _done_paths(output: pathlib.Path, fmt: str) -> List[str]:
    """The paths already in an earlier output, in its order."""
    if not output.exists():
        return []
    if fmt == "parquet":
        import pyarrow.parquet as pq
        return [str(p) for p in pq.read_table(output, columns=["path"]).column("path").to_pylist()]
    with open(output, newline="", encoding="utf-8") as f:
        if fmt == "csv":
            return [row["path"] for row in csv.DictReader(f)]
        return [json.loads(line)["path"] for line in f if line.strip()]


class _Writer:
    """Writes rows as they come, in one of the formats."""

    def __init__(self, output: Optional[str], fmt: str, append: bool) -> None:
        self.fmt = fmt
        self.path = pathlib.Path(output) if output else None
        self._parquet: Any = None
        self._rows: List[Dict[str, Any]] = []
        self._out: Optional[TextIO] = None
        if fmt == "parquet":
            if self.path is None:
                raise ValueError("parquet needs an output file (-o results.parquet)")
            self._open_parquet(append)
            return
        fresh = not (append and self.path is not None and self.path.exists() and self.path.stat().st_size)
        self._out = (open(self.path, "a" if append else "w", newline="", encoding="utf-8")
                     if self.path else sys.stdout)
        self._csv = csv.DictWriter(self._out, fieldnames=_COLUMNS) if fmt == "csv" else None
        if self._csv is not None and fresh:
            self._csv.writeheader()

    def _open_parquet(self, append: bool) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq
        self._pa = pa
        self._schema = pa.schema([
            (c, pa.float64() if c in ("confidence", "last_loss")
             else pa.int64() if c in ("evidence_line", "rank", "steps", "exit_code") else pa.string())
            for c in _COLUMNS])
        assert self.path is not None
        earlier = pq.read_table(self.path).cast(self._schema) if append and self.path.exists() else None
        self._target = self.path
        self.path = self.path.with_name(self.path.name + ".partial")
        self._parquet = pq.ParquetWriter(self.path, self._schema)
        if earlier is not None:
            self._parquet.write_table(earlier)

    def write(self, result: Result, text: Optional[str] = None) -> None:
        """Writes one result; ``text`` is its JSON where it was made already."""
        if self.fmt == "jsonl":
            assert self._out is not None
            if isinstance(result, InputFailure):
                self._out.write(json.dumps(result.to_dict()) + "\n")
            else:
                self._out.write((text or result.to_json()) + "\n")
        elif self.fmt == "csv":
            self._csv.writerow(_row(result))
        else:
            self._rows.append(_row(result))
            if len(self._rows) >= 1000:
                self._flush_parquet()

    def native_fd(self) -> Optional[int]:
        """The file descriptor JSON Lines can be written to directly, this
        writer's buffer flushed first; None where the output is no file (a
        stream in memory)."""
        if self.fmt != "jsonl" or self._out is None:
            return None
        try:
            fd = self._out.fileno()
        except (AttributeError, OSError, ValueError):
            return None
        self._out.flush()
        return fd

    def write_failure(self, failure: InputFailure) -> None:
        """An input that could not be read, written at once (native writes
        to the same file come after it)."""
        self.write(failure)
        assert self._out is not None
        self._out.flush()

    def _flush_parquet(self) -> None:
        if self._rows:
            self._parquet.write_table(self._pa.Table.from_pylist(self._rows, schema=self._schema))
            self._rows = []

    def close(self) -> None:
        if self._parquet is not None:
            self._flush_parquet()
            self._parquet.close()
            # Written beside the output and moved over it when closed: a run
            # killed midway leaves the earlier output whole.
            os.replace(self.path, self._target)
        elif self._out is not None and self._out is not sys.stdout:
            self._out.close()
        else:
            sys.stdout.flush()


class _Summary:
    """Counts per class and owner, and how many a plain rerun would fix."""

    def __init__(self) -> None:
        self.classes: "collections.Counter[str]" = collections.Counter()
        self.owners: "collections.Counter[str]" = collections.Counter()
        self.unreadable = 0
        self.damaged = 0
        self._rerun = {c.id: c.rerun for c in taxonomy()}
        self._owner = {c.id: c.owner for c in taxonomy()}

    def add(self, result: Result) -> None:
        if isinstance(result, InputFailure):
            self.unreadable += 1
            return
        self.add_row(result.class_, result.owner, result.input.damage is not None)

    def add_row(self, class_: str, owner: str, damaged: bool) -> None:
        self.classes[class_] += 1
        self.owners[owner] += 1
        self.damaged += damaged

    def render(self, seconds: float, skipped: int) -> str:
        total = sum(self.classes.values()) + self.unreadable
        rate = total / seconds if seconds > 0 else 0.0
        out = [f"gpudiag batch: {total} logs in {seconds:.1f} s ({rate:.0f} logs/s): "
               f"{sum(self.classes.values())} diagnosed, {self.unreadable} unreadable, "
               f"{self.damaged} read in part" + (f"; {skipped} already in the output, skipped" if skipped else "")]
        if self.classes:
            width = max(len(c) for c in self.classes)
            out.append(f"  {'class':<{width}}  {'logs':>6}  owner   plain rerun fixes it")
            for cls, n in self.classes.most_common():
                out.append(f"  {cls:<{width}}  {n:>6}  {self._owner.get(cls, ''):<7} {self._rerun.get(cls, '')}")
            out.append("  by owner: " + ", ".join(f"{o} {n}" for o, n in self.owners.most_common()))
            def rerun(value: str) -> int:
                return sum(n for cls, n in self.classes.items() if self._rerun.get(cls) == value)
            out.append(f"  a plain rerun would fix {rerun('yes')} of {sum(self.classes.values())}, "
                       f"might fix {rerun('maybe')} more")
        return "\n".join(out) + "\n"


def _all_tasks(inputs: Sequence[str], exit_code: Optional[int], glob: Sequence[str],
               hidden: bool) -> List[Task]:
    tasks: List[Task] = []
    for item in inputs:
        path = pathlib.Path(item)
        if path.is_dir() or (path.suffix in (".csv", ".jsonl") and path.is_file()):
            tasks.extend(_tasks(path, exit_code, glob, hidden))
        else:
            tasks.append((path, exit_code, None))
    return tasks


def _label(task: Task) -> str:
    source = task[0]
    return os.fspath(source) if isinstance(source, os.PathLike) else str(source)


def run(argv: Sequence[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        fmt = _format(args)
        if args.resume and not args.output:
            raise ValueError("--resume needs the output to add to (-o FILE)")
        if args.jobs < 1:
            raise ValueError(f"--jobs must be 1 or more, not {args.jobs}")
        tasks = _all_tasks(args.inputs, args.exit_code, args.glob, args.hidden)
        done: Set[str] = set(_done_paths(pathlib.Path(args.output), fmt)) if args.resume and args.output else set()
        todo = [t for t in tasks if _label(t) not in done]
        writer = _Writer(args.output, fmt, append=args.resume)
    except (OSError, ValueError) as e:
        print(f"gpudiag batch: {e}", file=sys.stderr)
        return 2
    summary = _Summary()
    bar = _progress(len(todo), args.progress)
    start = time.perf_counter()
    fd = writer.native_fd()
    interrupted = broken = False
    try:
        if fd is not None:
            # JSON Lines into a file or a pipe: written by the native side.
            for row in jsonl_in_order(todo, args.jobs, fd, writer.write_failure, bar, max_bytes=args.max_bytes):
                if isinstance(row, InputFailure):
                    summary.add(row)
                else:
                    summary.add_row(*row)
        else:
            for result, text in files_in_order(todo, args.jobs, None, bar, json=fmt == "jsonl",
                                               max_bytes=args.max_bytes):
                writer.write(result, text)
                summary.add(result)
    except KeyboardInterrupt:
        interrupted = True  # Ctrl-C: the rows so far stay written, the summary says what they hold
    except BrokenPipeError:
        broken = True  # the reader went away (`| head`)
    finally:
        if bar is not None:
            bar.close()
        try:
            writer.close()
        except BrokenPipeError:
            broken = True
    if broken:
        # Quietly, as a command that SIGPIPE ends; what Python still holds for
        # standard output goes nowhere at exit, instead of to a closed pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    sys.stderr.write(summary.render(time.perf_counter() - start, len(tasks) - len(todo)))
    if interrupted:
        print("gpudiag batch: interrupted" + (f"; the rows written so far are in {args.output}, and --resume "
                                             "goes on from there" if args.output else ""), file=sys.stderr)
        return 130
    return 1 if summary.unreadable or summary.damaged else 0


def main(argv: Optional[Iterable[str]] = None) -> int:
    return run(list(sys.argv[1:] if argv is None else argv))
