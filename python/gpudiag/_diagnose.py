"""gpudiag.diagnose: one entry point for paths, bytes and text."""

from __future__ import annotations

import os
import warnings
from typing import Iterable, Optional, Union

from . import _core
from ._rules import RuleSet, default_rules
from ._types import Diagnosis

Source = Union["os.PathLike[str]", bytes, bytearray, memoryview, str]


def diagnose(source: Source, exit_code: Optional[int] = None,
             rules: Optional[RuleSet] = None, *, scheduler: Optional["os.PathLike[str] | str"] = None,
             text_cap: int = 1024, max_bytes: Optional[int] = None) -> Diagnosis:
    """Diagnose one training log.

    ``source`` is a path (``pathlib.Path`` or any ``os.PathLike``), the log's
    bytes (anything with a contiguous buffer: bytes, bytearray, memoryview,
    mmap; read in place, not copied) or its text as ``str``. ``exit_code`` is
    the job's exit status (negative for a signal, as subprocess reports it, or
    128 + signal as a shell does) and counts as evidence. ``rules`` defaults to
    the shipped rules. ``scheduler`` is a file holding the scheduler's record
    of the job (Slurm's ``sacct --json``, ``sacct -P`` or ``scontrol show job``
    output): its state counts as evidence and its exit status stands in for
    ``exit_code``. ``max_bytes`` stops reading after that many bytes of the
    input as stored (the diagnosis's ``input.damage`` says so); a device that
    never ends (``/dev/zero``) is read up to 1 GiB when it is not given. The
    GIL is released while the log is scanned.
    """
    _check_max_bytes(max_bytes)
    ruleset = (rules or default_rules())._native
    record = os.fspath(scheduler) if scheduler is not None else None
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        return _core.diagnose_path(ruleset, path, exit_code, text_cap=text_cap, scheduler=record,
                                   max_bytes=max_bytes or 0)
    if isinstance(source, str):
        if "\n" not in source and len(source) < 4096 and os.path.isfile(source):
            warnings.warn(
                f"gpudiag.diagnose() read {source!r} as log text; pass pathlib.Path({source!r}) "
                "to diagnose the file it names", stacklevel=2)
        source = source.encode("utf-8", "surrogateescape")
    try:
        return _core.diagnose_buffer(ruleset, source, exit_code, text_cap=text_cap, scheduler=record,
                                     max_bytes=max_bytes or 0)
    except TypeError:
        raise TypeError(
            "gpudiag.diagnose() takes a path (os.PathLike), bytes-like object or str, "
            f"not {type(source).__name__}") from None


def diagnose_job(files: Union["os.PathLike[str]", str, Iterable[Union["os.PathLike[str]", str]]],
                 exit_code: Optional[int] = None, rules: Optional[RuleSet] = None, *,
                 glob: Iterable[str] = (), hidden: bool = False,
                 scheduler: Optional["os.PathLike[str] | str"] = None, text_cap: int = 1024) -> Diagnosis:
    """Diagnose one job from its many files (per-rank or per-node logs).

    ``files`` is a directory (its logs, listed as ``gpudiag diagnose DIR``
    lists them; ``glob`` and ``hidden`` as there) or the paths themselves.
    Their lines are merged into one timeline by the times they state, each
    line without a rank tagged with the rank its file's name gives
    (``rank3.log``, Slurm's ``%j-%t.out``, torchrun's ``attempt_0/3/stderr.log``),
    and diagnosed as one log; ``path`` is the directory, when one was given.
    ``scheduler`` as for ``diagnose``.
    """
    ruleset = (rules or default_rules())._native
    directory = os.fspath(files) if isinstance(files, (str, os.PathLike)) else None
    if directory is not None:
        paths, _, problems = _core.list_logs(directory, list(glob), hidden)
        if problems:
            raise OSError("; ".join(problems))
        if not paths:
            raise _core.InputError(f"{directory}: no log files in it")
    else:
        paths = tuple(os.fspath(p) for p in files)
    return _core.diagnose_job(ruleset, list(paths), exit_code, text_cap=text_cap, name=directory or "",
                              scheduler=os.fspath(scheduler) if scheduler is not None else None)


def _check_max_bytes(max_bytes: Optional[int]) -> None:
    """The one check of a size limit, for every entry point that takes one."""
    if max_bytes is not None and (not isinstance(max_bytes, int) or max_bytes <= 0):
        raise ValueError(f"max_bytes must be a positive number of bytes, not {max_bytes!r}")
