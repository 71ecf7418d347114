"""Many logs at once: ``diagnose_many``, ``to_frame`` and the plots of a notebook.

The logs are diagnosed on a thread pool: the native scan releases the GIL, so
threads use every core without copying a log between processes.
"""

from __future__ import annotations

import csv
import json
import math
import os
import pathlib
import sys
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from . import _core
from ._diagnose import Source, _check_max_bytes, diagnose, exit_status
from ._rules import RuleSet, default_rules
from ._types import Diagnosis


@dataclass(frozen=True)
class InputFailure:
    """An input that could not be read: the batch went on without it."""

    path: str
    error: str
    exit_code: Optional[int] = None

    def to_dict(self) -> dict:
        """Its JSON object, where a diagnosis would stand: ``{path, error, exit_code}``."""
        return {"path": self.path, "error": self.error, "exit_code": self.exit_code}


Result = Union[Diagnosis, InputFailure]
# A source, its exit code and the file of its scheduler record.
Task = Tuple[Source, Optional[int], Optional[pathlib.Path]]

_MANIFEST_SUFFIXES = (".csv", ".jsonl")


def _manifest_rows(path: pathlib.Path) -> Iterator[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        if path.suffix == ".csv":
            yield from csv.DictReader(f)
            return
        for number, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}: line {number}: not JSON ({e.msg})") from None


def _read_manifest(path: pathlib.Path) -> List[Task]:
    """A manifest's rows: ``path`` (relative to the manifest), an optional
    ``exit_code`` and an optional ``sacct`` (a scheduler record's file, relative too)."""
    tasks: List[Task] = []
    for number, row in enumerate(_manifest_rows(path), 1):
        if not row.get("path"):
            raise ValueError(f"{path}: row {number} has no 'path'")
        code = row.get("exit_code")
        try:
            exit_code = None if code in (None, "") else int(code)
        except ValueError:
            raise ValueError(f"{path}: row {number}: exit_code {code!r} is not an integer") from None
        exit_code = exit_status(f"{path}: row {number}", exit_code)
        record = row.get("sacct")
        tasks.append((path.parent / row["path"], exit_code, path.parent / record if record else None))
    return tasks


def _tasks(sources: Any, exit_code: Optional[int], glob: Sequence[str], hidden: bool) -> List[Task]:
    exit_code = exit_status("gpudiag.diagnose_many()", exit_code)
    if isinstance(sources, (str, os.PathLike)):
        root = pathlib.Path(sources)
        if root.is_dir():
            files, _, problems = _core.list_logs(str(root), list(glob), hidden)
            if problems:
                raise OSError("; ".join(problems))
            return [(pathlib.Path(f), exit_code, None) for f in files]
        if root.suffix in _MANIFEST_SUFFIXES and root.is_file():
            return _read_manifest(root)
        raise ValueError(f"{root}: neither a directory nor a manifest (.csv, .jsonl); "
                         "pass a list to diagnose single files")
    tasks: List[Task] = []
    for item in sources:
        source, code = item if isinstance(item, tuple) else (item, exit_code)
        code = exit_status("gpudiag.diagnose_many()", code)
        tasks.append((pathlib.Path(source) if isinstance(source, str) else source, code, None))
    return tasks


def _label(source: Source) -> str:
    return os.fspath(source) if isinstance(source, os.PathLike) else f"<{type(source).__name__}>"


def _one(task: Task, rules: Optional[RuleSet], max_bytes: Optional[int] = None) -> Result:
    source, exit_code, record = task
    try:
        return diagnose(source, exit_code, rules, scheduler=record, max_bytes=max_bytes)
    except (OSError, TypeError, ValueError) as e:
        return InputFailure(_label(source), _message(e), exit_code)


def _message(e: Exception) -> str:
    """An error as the native batch words it ("PATH: No such file or
    directory"), whichever path raised it."""
    if isinstance(e, OSError) and e.filename is not None and e.strerror:
        return f"{e.filename}: {e.strerror}"
    return str(e)


def _progress(total: int, progress: Optional[bool]) -> Any:
    """A tqdm bar (the notebook widget in Jupyter), or None. Automatic: shown
    on a terminal or in a notebook, quiet when stderr is piped."""
    if progress is False or total < 2:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if progress:
            raise ImportError("progress=True needs tqdm: pip install 'gpudiag[notebook]'") from None
        return None
    in_notebook = "ipykernel" in sys.modules
    if progress is None and not (in_notebook or sys.stderr.isatty()):
        return None
    return tqdm(total=total, unit="log", desc="diagnose")


def diagnose_many(sources: Union[str, "os.PathLike[str]", Iterable[Any]], *, jobs: Optional[int] = None,
                  exit_code: Optional[int] = None, rules: Optional[RuleSet] = None,
                  glob: Sequence[str] = (), hidden: bool = False,
                  progress: Optional[bool] = None, max_bytes: Optional[int] = None) -> List[Result]:
    """Diagnose many logs on ``jobs`` threads (default: every core); results in input order.

    ``sources`` is a directory (every log below it, as ``gpudiag diagnose DIR``
    lists them: ``glob`` and ``hidden`` as its ``--glob`` and ``--hidden``), a
    manifest (``.csv`` or ``.jsonl`` with a ``path`` column, relative to the
    manifest, an optional ``exit_code`` and an optional ``sacct``: the file of
    the job's scheduler record, as ``diagnose`` takes it), or an iterable of paths, bytes
    or ``(source, exit_code)`` pairs. ``exit_code`` applies to every source that
    has none of its own. An input that cannot be read is an ``InputFailure`` in
    its place; the others are still diagnosed. ``progress``: a tqdm bar, shown
    by default on a terminal or in a notebook. ``max_bytes``: read no more
    than that many bytes of each input, as ``diagnose`` takes it.
    """
    _check_max_bytes(max_bytes)
    tasks = _tasks(sources, exit_code, glob, hidden)
    bar = _progress(len(tasks), progress)
    try:
        return list(in_order(tasks, jobs, rules, bar, max_bytes))
    finally:
        if bar is not None:
            bar.close()


def in_order(tasks: Sequence[Task], jobs: Optional[int], rules: Optional[RuleSet],
             bar: Any = None, max_bytes: Optional[int] = None) -> Iterator[Result]:
    """The results of ``tasks`` in their order, diagnosed on ``jobs`` threads.
    A bounded window of results is in flight or held for order (files: 128 a
    thread, 256 at least; bytes and other sources: 4 a thread), so memory
    stays bounded however many tasks there are."""
    workers = jobs or os.cpu_count() or 1
    if all(isinstance(t[0], os.PathLike) for t in tasks):
        yield from (result for result, _ in files_in_order(tasks, workers, rules, bar, max_bytes=max_bytes))
        return
    window = 4 * workers
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: "deque[Future[Result]]" = deque()
        for task in tasks:
            pending.append(pool.submit(_one, task, rules, max_bytes))
            if len(pending) >= window:
                yield _done(pending.popleft(), bar)
        while pending:
            yield _done(pending.popleft(), bar)


def _file_run(tasks: Sequence[Task], jobs: int, rules: Optional[RuleSet], json: bool,
              max_bytes: Optional[int], take: Callable[[Any], List[Any]]) -> Iterator[Tuple[Task, Any]]:
    """Each task with what ``take`` (a FileRun's take or take_jsonl) gives
    for it, in order: the files diagnosed on ``jobs`` native threads, which
    go on with the next files while the caller goes through these."""
    ruleset = (rules or default_rules())._native
    native = [(os.fspath(s), code, os.fspath(record) if record is not None else None) for s, code, record in tasks]
    run = _core.FileRun(ruleset, native, jobs, json, max_bytes=max_bytes or 0)
    try:
        done = 0
        while True:
            part = take(run)
            if not part:
                return
            for item in part:
                yield tasks[done], item
                done += 1
    finally:
        run.close()


def files_in_order(tasks: Sequence[Task], jobs: int, rules: Optional[RuleSet], bar: Any = None,
                   json: bool = False, max_bytes: Optional[int] = None) -> Iterator[Tuple[Result, Optional[str]]]:
    """Files diagnosed on ``jobs`` native threads, in order: each result with
    its JSON when ``json`` asks for it."""
    for (source, code, _), (diagnosis, text) in _file_run(tasks, jobs, rules, json, max_bytes,
                                                          lambda run: run.take(256)):
        if bar is not None:
            bar.update(1)
        if diagnosis is None:
            yield InputFailure(os.fspath(source), text, code), None
        else:
            yield diagnosis, text


def jsonl_in_order(tasks: Sequence[Task], jobs: int, fd: int, write_failure: Any, bar: Any = None,
                   max_bytes: Optional[int] = None) -> Iterator[Union[Tuple[str, str, bool], InputFailure]]:
    """As ``files_in_order`` with JSON, the JSON written by the native side
    straight to the file descriptor ``fd``, a line each in input order, never
    made a Python string. Yields (class, owner, read in part) for each
    diagnosis, and the ``InputFailure`` of an input that could not be read,
    after ``write_failure`` wrote it (its line lies between its neighbours')."""
    for (source, code, _), row in _file_run(tasks, jobs, None, True, max_bytes,
                                            lambda run: run.take_jsonl(256, fd)):
        if bar is not None:
            bar.update(1)
        if row[0] is None:
            failure = InputFailure(os.fspath(source), row[1], code)
            write_failure(failure)
            yield failure
        else:
            yield row


def _done(future: "Future[Result]", bar: Any) -> Result:
    result = future.result()
    if bar is not None:
        bar.update(1)
    return result


def _row(r: Result) -> dict:
    if isinstance(r, InputFailure):
        return {"path": r.path, "class": None, "exit_code": r.exit_code, "error": r.error}
    first = r.evidence[0] if r.evidence else None
    t = r.trajectory
    return {
        "path": r.path, "class": r.class_, "g15": r.g15, "owner": r.owner, "family": r.family,
        "confidence": r.confidence, "evidence_line": first.line if first else None,
        "evidence_rule": first.rule if first else None, "evidence": first.text if first else None,
        "rank": first.rank if first else None, "steps": t.max_step,
        "last_loss": t.last.loss if t.last else None, "exit_code": r.exit_code,
        "compression": r.input.compression, "damage": r.input.damage, "error": None,
    }


_COLUMNS = ["path", "class", "g15", "owner", "family", "confidence", "evidence_line", "evidence_rule",
            "evidence", "rank", "steps", "last_loss", "exit_code", "compression", "damage", "error"]


def to_frame(results: Iterable[Result]) -> Any:
    """A pandas DataFrame, one row per log: its path, class, g15, owner, family,
    confidence, first evidence (line, rule, text, rank), steps reached, last
    loss, exit code, compression and damage; ``error`` for an input that could
    not be read (its class is missing)."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("to_frame() needs pandas: pip install 'gpudiag[notebook]'") from None
    return _typed(pd.DataFrame([_row(r) for r in results], columns=_COLUMNS))


def _typed(frame: Any) -> Any:
    """The column types of ``to_frame``, the same however the rows were
    gathered: whole numbers that may be missing as Int64, text as pandas'
    string type (missing: <NA>)."""
    for column in _COLUMNS:
        frame[column] = frame[column].astype(
            "Int64" if column in ("evidence_line", "rank", "steps", "exit_code")
            else "float64" if column in ("confidence", "last_loss") else "string")
    return frame


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install 'gpudiag[notebook]'") from None
    return plt


def _step_before(t: Any, line: int) -> Optional[int]:
    """The step of the last reading at or before ``line`` that the trajectory
    keeps with its line (first, last, lowest, peak, first non-finite)."""
    readings = [r for r in (t.first, t.last, t.lowest, t.peak, t.first_non_finite) if r and r.line <= line]
    return max(readings, key=lambda r: r.line).step if readings else None


def _mark_non_finite(ax: Any, series: Any) -> None:
    """NaN and Inf readings drawn as crosses along the top of the axes: a line
    plot leaves them out, and a run that went NaN would look healthy."""
    bad = [step for step, loss in series if not math.isfinite(loss)]
    if bad:
        ax.plot(bad, [1.0] * len(bad), "x", color="crimson", transform=ax.get_xaxis_transform(),
                clip_on=False, label=f"non-finite loss ({len(bad)} shown)")


def plot(self: Diagnosis, ax: Any = None) -> Any:
    """Draw the training loss (and the evaluation loss) by step (by reading
    where the log prints no step), the line that decided the verdict marked at
    the reading it came after. Returns the axes."""
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.5))
    t = self.trajectory
    if t.series:
        steps, losses = zip(*t.series)
        ax.plot(steps, losses, label="training loss", linewidth=1.2)
        _mark_non_finite(ax, t.series)
    by_step = bool(t.last and t.last.step_reported)
    # Evaluations drawn against the same steps only: without steps, their
    # ordinals would not line up with the training readings.
    if t.evaluation.series and by_step and t.evaluation.last.step_reported:
        steps, losses = zip(*t.evaluation.series)
        ax.plot(steps, losses, "o--", label="evaluation loss", markersize=3)
    at = _step_before(t, self.evidence[0].line) if self.evidence else None
    if at is not None:
        ax.axvline(at, color="crimson", linestyle=":", label=f"line {self.evidence[0].line}: {self.class_}")
    ax.set_xlabel("step" if by_step else "reading")
    ax.set_ylabel("loss")
    ax.set_title(f"{self.path or 'log'}: {self.class_} ({t.shape})", fontsize=9)
    ax.legend(fontsize=8)
    return ax


def plot_classes(results: Any, ax: Any = None) -> Any:
    """A bar chart of the classes of many diagnoses (a list or ``to_frame``'s
    DataFrame), most frequent first. Returns the axes."""
    plt = _pyplot()
    frame = results if hasattr(results, "columns") else to_frame(results)
    counts = frame["class"].fillna("(unreadable)").value_counts()
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.3 * len(counts) + 1))
    ax.barh(list(counts.index)[::-1], list(counts.values)[::-1])
    ax.set_xlabel("logs")
    return ax


Diagnosis.plot = plot  # type: ignore[attr-defined]
