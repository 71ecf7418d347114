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


def _same(a: Any, b: Any) -> bool:
    """Equal values, where a NaN reading equals a NaN reading: a diagnosis of
    a NaN run equals itself after a pickle."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (a != a and b != b)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _eq(self: Any, other: Any) -> Any:
    if type(other) is not type(self):
        return NotImplemented
    return all(_same(getattr(self, k), getattr(other, k)) for k in _fields(self))


def _to_dict(self: Diagnosis) -> Dict[str, Any]:
    """The same fields, names and values as the command line's JSON output."""
    return json.loads(self.to_json())


_from_json = _core.diagnosis_from_json


def _from_dict(cls: type, data: Dict[str, Any]) -> Diagnosis:
    """The diagnosis ``to_dict`` gave (or a JSON object of the command line's
    output, parsed): ``Diagnosis.from_dict(d.to_dict()) == d``. A field that
    is missing or of the wrong type raises ValueError naming it."""
    if not isinstance(data, dict):
        raise TypeError(f"Diagnosis.from_dict() takes a dict, not {type(data).__name__}")
    return _from_json(json.dumps(data, allow_nan=False))


def _diagnosis_repr(self: Diagnosis) -> str:
    """Short, as pandas and scikit-learn objects are: the verdict is str(d)."""
    line = self.evidence[0].line if self.evidence else None
    return (f"Diagnosis(path={self.path!r}, class_={self.class_!r}, owner={self.owner!r}, "
            f"confidence={self.confidence:.2f}, line={line!r})")


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
Diagnosis.from_dict = classmethod(_from_dict)  # type: ignore[attr-defined]
Diagnosis.__repr__ = _diagnosis_repr  # type: ignore[method-assign]
Diagnosis.__str__ = _str  # type: ignore[method-assign]
Diagnosis._repr_html_ = _repr_html_  # type: ignore[attr-defined]

__all__ = ["ClassInfo", "Diagnosis", "Evidence", "FailedWorker", "Finding", "InputFormat",
           "LauncherReport",
           "LossReading", "Reading", "Rule", "Series", "Trajectory", "Verdict"]
del _core
