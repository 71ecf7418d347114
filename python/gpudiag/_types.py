"""The diagnosis types: the native structs, read-only, with Pythonic helpers.

The fields are bound in ``_core`` straight from the C++ structs; this module
adds what Python users expect (``to_dict``, ``repr``, equality, the notebook
rendering) without listing any field again: ``to_dict`` is the command line's
JSON, parsed.
"""

from __future__ import annotations

import html
import json
from typing import Any, Dict, Tuple

from . import _core
from ._core import (ClassInfo, Diagnosis, Evidence, FailedWorker, Finding, InputFormat,
                    LauncherReport, LossReading, Reading, Rule, Series, Trajectory, Verdict)

_TYPES = (ClassInfo, Diagnosis, Evidence, FailedWorker, Finding, InputFormat, LauncherReport,
          LossReading, Reading, Rule, Series, Trajectory, Verdict)


def _fields(obj: Any) -> Tuple[str, ...]:
    """The names of a bound type's fields, in binding order."""
    return tuple(k for k, v in vars(type(obj)).items() if isinstance(v, property))


def _repr(self: Any) -> str:
    inner = ", ".join(f"{k}={getattr(self, k)!r}" for k in _fields(self))
    return f"{type(self).__name__}({inner})"


def _eq(self: Any, other: Any) -> Any:
    if type(other) is not type(self):
        return NotImplemented
    return all(getattr(self, k) == getattr(other, k) for k in _fields(self))


def _to_dict(self: Diagnosis) -> Dict[str, Any]:
    """The same fields, names and values as the command line's JSON output."""
    return json.loads(self.to_json())


def _str(self: Diagnosis) -> str:
    return self.to_text()


def _repr_html_(self: Diagnosis) -> str:
    e = html.escape
    rows = "".join(
        f"<tr><td style='text-align:right'>{ev.line}</td><td><code>{e(ev.rule)}</code></td>"
        f"<td><code>{e(ev.text)}</code></td></tr>" for ev in self.evidence)

    def items(xs: Tuple[str, ...]) -> str:
        return "".join(f"<li>{e(x)}</li>" for x in xs)

    findings = items(tuple(f.message for f in self.findings))
    title = e(self.path) + " — " if self.path else ""
    return (
        f"<div class='gpudiag'><p><b>{title}{e(self.class_)}</b> · {e(self.title)} "
        f"(owner {e(self.owner)}, family {e(self.family)}, g15 {e(self.g15)}, "
        f"confidence {self.confidence:.2f})</p>"
        f"<p><b>shows</b></p><ul>{items(self.verdict.shows)}</ul>"
        f"<p><b>implies</b></p><ul>{items(self.verdict.implies)}</ul>"
        f"<p><b>cannot decide</b></p><ul>{items(self.verdict.cannot_decide)}</ul>"
        + (f"<table><tr><th>line</th><th>rule</th><th>text</th></tr>{rows}</table>" if rows else "")
        + (f"<p><b>findings</b></p><ul>{findings}</ul>" if findings else "")
        + "</div>")


for _t in _TYPES:
    _t.__repr__ = _repr  # type: ignore[method-assign]
    _t.__eq__ = _eq  # type: ignore[method-assign]
    _t.__hash__ = None  # type: ignore[assignment]
Diagnosis.to_dict = _to_dict  # type: ignore[attr-defined]
Diagnosis.__str__ = _str  # type: ignore[method-assign]
Diagnosis._repr_html_ = _repr_html_  # type: ignore[attr-defined]

__all__ = ["ClassInfo", "Diagnosis", "Evidence", "FailedWorker", "Finding", "InputFormat",
           "LauncherReport",
           "LossReading", "Reading", "Rule", "Series", "Trajectory", "Verdict"]
del _core
