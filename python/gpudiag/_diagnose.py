"""gpudiag.diagnose: one entry point for paths, bytes and text."""

from __future__ import annotations

import errno
import os
from typing import Any, Iterable, Optional, Tuple, Union

from . import _core
from ._rules import RuleSet, default_rules
from ._types import Diagnosis

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]


def diagnose(source: Source, exit_code: Optional[int] = None,
             rules: Optional[RuleSet] = None, *, scheduler: Optional["os.PathLike[str] | str"] = None,
             text_cap: int = 1024, max_bytes: Optional[int] = None) -> Diagnosis:
    """Diagnose one training log.

    ``source`` is a path, as ``str`` or any ``os.PathLike`` (a missing file
    raises ``FileNotFoundError``, as ``open`` does), or the log's bytes
    (anything with a contiguous buffer: bytes, bytearray, memoryview, mmap;
    read in place, not copied). Log text held in a ``str`` goes through
    ``diagnose_text``. ``exit_code`` is the job's exit status (negative for a
    signal, as subprocess reports it, or 128 + signal as a shell does; a
    Windows status as Python prints it, 3221225477, is kept as the signed
    32-bit value Windows keeps, -1073741819) and counts as evidence. ``rules`` defaults to the shipped rules.
    ``scheduler`` is a file holding the scheduler's record of the job
    (Slurm's ``sacct --json``, ``sacct -P`` or ``scontrol show job`` output):
    its state counts as evidence and its exit status stands in for
    ``exit_code``. ``max_bytes`` stops reading after that many bytes of the
    input as stored (the diagnosis's ``input.damage`` says so); a device that
    never ends (``/dev/zero``) is read up to 1 GiB when it is not given. The
    GIL is released while the log is scanned.
    """
    ruleset, record, exit_code = _checked("diagnose", exit_code, rules, scheduler, text_cap, max_bytes)
    if isinstance(source, (str, os.PathLike)):
        path = os.fsdecode(os.fspath(source))
        try:
            return _core.diagnose_path(ruleset, path, exit_code, text_cap=text_cap, scheduler=record,
                                       max_bytes=max_bytes or 0)
        except _core.InputError:
            _raise_if_missing(path)
            raise
    try:
        return _core.diagnose_buffer(ruleset, source, exit_code, text_cap=text_cap, scheduler=record,
                                     max_bytes=max_bytes or 0)
    except TypeError:
        raise TypeError(
            "gpudiag.diagnose() takes a path (str or os.PathLike) or the log's bytes, "
            f"not {type(source).__name__}") from None


def diagnose_text(text: str, exit_code: Optional[int] = None, rules: Optional[RuleSet] = None, *,
                  scheduler: Optional["os.PathLike[str] | str"] = None, text_cap: int = 1024) -> Diagnosis:
    """Diagnose a log held as text (``diagnose`` reads a ``str`` as a path).
    The other arguments are ``diagnose``'s."""
    if not isinstance(text, str):
        raise TypeError(f"gpudiag.diagnose_text() takes the log as str, not {type(text).__name__} "
                        "(bytes and paths go to gpudiag.diagnose())")
    ruleset, record, exit_code = _checked("diagnose_text", exit_code, rules, scheduler, text_cap, None)
    return _core.diagnose_buffer(ruleset, text.encode("utf-8", "surrogateescape"), exit_code,
                                 text_cap=text_cap, scheduler=record)


def _raise_if_missing(path: str) -> None:
    """FileNotFoundError, as open() raises it, for a path that is not there;
    one that reads like log text says where text goes."""
    if os.path.lexists(path):
        return
    if "\n" in path or len(path) > 4096:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory (a str is a path: log text goes to "
                                "gpudiag.diagnose_text())", path[:60] + "\u2026")
    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)


def exit_status(caller: str, exit_code: Any) -> Optional[int]:
    """``exit_code`` as the native layer keeps it: an int, a Windows status as
    Python prints it (3221225477, 0xC0000005) taken as the signed 32-bit value
    Windows keeps (-1073741819); a wrong type is a TypeError, a number no exit
    status can be a ValueError, each naming ``caller``."""
    if exit_code is None:
        return None
    if not isinstance(exit_code, int) or isinstance(exit_code, bool):
        raise TypeError(f"{caller}: exit_code must be an int such as -9 or 137, "
                        f"not {type(exit_code).__name__} {exit_code!r}")
    code = _core.parse_exit_status(str(exit_code))
    if code is None:
        raise ValueError(f"{caller}: exit_code {exit_code} is no exit status (one is a 32-bit number, "
                         f"such as -9, 137 or 3221225477)")
    return code


def _checked(caller: str, exit_code: Any, rules: Any, scheduler: Any, text_cap: Any,
             max_bytes: Any) -> Tuple[Any, Optional[str], Optional[int]]:
    """The one check of the arguments every entry point shares: a wrong type
    is a one-line TypeError naming the argument, not the native signature.
    Returns the rules, the scheduler record's path and the exit status."""
    code = exit_status(f"gpudiag.{caller}()", exit_code)
    if rules is not None and not isinstance(rules, RuleSet):
        raise TypeError(f"gpudiag.{caller}(): rules must be a gpudiag.RuleSet (gpudiag.RuleSet.load(dir)), "
                        f"not {type(rules).__name__}")
    if scheduler is not None and not isinstance(scheduler, (str, os.PathLike)):
        raise TypeError(f"gpudiag.{caller}(): scheduler must be the path of a scheduler record, "
                        f"not {type(scheduler).__name__}")
    if not isinstance(text_cap, int) or isinstance(text_cap, bool) or text_cap <= 0:
        raise TypeError(f"gpudiag.{caller}(): text_cap must be a positive int, not {text_cap!r}")
    _check_max_bytes(max_bytes)
    return (rules or default_rules())._native, (os.fspath(scheduler) if scheduler is not None else None), code


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
    ruleset, record, exit_code = _checked("diagnose_job", exit_code, rules, scheduler, text_cap, None)
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
                              scheduler=record)


def _check_max_bytes(max_bytes: Optional[int]) -> None:
    """The one check of a size limit, for every entry point that takes one."""
    if max_bytes is not None and (not isinstance(max_bytes, int) or max_bytes <= 0):
        raise ValueError(f"max_bytes must be a positive number of bytes, not {max_bytes!r}")
