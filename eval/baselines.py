"""The three baselines of the published protocol, as evaluation.md defines them.

Each takes the whole log as text (and the exit code) and returns one of the 15
classes of the published corpus or ``generic``.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, Optional

GENERIC = "generic"

# Case-sensitive substrings, tried in this order; the first hit wins.
KEYWORDS = (
    ("CUDA out of memory", "cuda_oom"),
    ("NCCL", "nccl"),
    ("Segmentation fault", "segfault"),
    ("MemoryError", "ram_oom"),
    ("FileNotFoundError", "file_not_found"),
    ("PermissionError", "permission"),
    ("ModuleNotFoundError", "missing_module"),
    ("ZeroDivisionError", "div_zero"),
    ("AssertionError", "assertion"),
    ("nan", "nan_loss"),
    ("Killed", "oom_killer"),
    ("RuntimeError", "runtime_error"),
    ("Traceback", "traceback"),
)


def keyword(text: str, exit_code: Optional[int] = None) -> str:
    for needle, cls in KEYWORDS:
        if needle in text:
            return cls
    return GENERIC


def exit_code_only(text: str, exit_code: Optional[int] = None) -> str:
    return {-11: "segfault", -9: "oom_killer"}.get(exit_code, GENERIC)


# A line-initial dotted identifier ending in "Error".
_EXCEPTION_NAME = re.compile(r"^((?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*Error)\b",
                             re.MULTILINE)
_EXCEPTION_CLASS = {
    "OutOfMemoryError": "cuda_oom",
    "MemoryError": "ram_oom",
    "FileNotFoundError": "file_not_found",
    "PermissionError": "permission",
    "ModuleNotFoundError": "missing_module",
    "ImportError": "missing_module",
    "ZeroDivisionError": "div_zero",
    "AssertionError": "assertion",
    "RuntimeError": "runtime_error",
}


def last_exception(text: str, exit_code: Optional[int] = None) -> str:
    names = _EXCEPTION_NAME.findall(text)
    if not names:
        return GENERIC
    return _EXCEPTION_CLASS.get(names[-1].rsplit(".", 1)[-1], "traceback")


Baseline = Callable[[str, Optional[int]], str]

#: Display name -> classifier, in the order of the published table.
BASELINES: Dict[str, Baseline] = {
    "keyword": keyword,
    "exit code": exit_code_only,
    "last exception": last_exception,
}
