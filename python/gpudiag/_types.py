"""The diagnosis as Python values: frozen dataclasses with dict, JSON and HTML forms."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from . import _core


@dataclass(frozen=True)
class Evidence:
    """One log line a rule matched."""

    rule: str
    class_: str
    line: int  #: 1-based line number
    offset: int  #: byte offset of the line's first byte
    text: str  #: the line without its ending, cut to the text cap
    truncated: bool
    count: int  #: how many lines of the log this rule matched
    values: Dict[str, str] = field(default_factory=dict)
    rank: Optional[int] = None  #: the rank whose prefix tags the line
    host: Optional[str] = None  #: the host the prefix names

    @classmethod
    def _from_dict(cls, d: Dict[str, Any]) -> "Evidence":
        return cls(d["rule"], d["class"], d["line"], d["offset"], d["text"], d["truncated"],
                   d["count"], dict(d["values"]), d["rank"], d["host"])

    def to_dict(self) -> Dict[str, Any]:
        return {"rule": self.rule, "class": self.class_, "line": self.line, "offset": self.offset,
                "text": self.text, "truncated": self.truncated, "count": self.count,
                "values": dict(self.values), "rank": self.rank, "host": self.host}


def _json_loss(loss: float) -> Any:
    """JSON has no NaN or Infinity; like the command line, write them as strings."""
    if math.isfinite(loss):
        return loss
    return "nan" if math.isnan(loss) else ("inf" if loss > 0 else "-inf")


@dataclass(frozen=True)
class LossReading:
    step: float  #: the step the line reports, else the reading's ordinal
    loss: float  #: may be nan or inf
    line: int
    step_reported: bool

    @classmethod
    def _from_dict(cls, d: Optional[Dict[str, Any]]) -> Optional["LossReading"]:
        return cls(d["step"], d["loss"], d["line"], d["step_reported"]) if d else None

    def to_dict(self) -> Dict[str, Any]:
        return {"step": self.step, "loss": _json_loss(self.loss), "line": self.line,
                "step_reported": self.step_reported}


@dataclass(frozen=True)
class Trajectory:
    """The training loss of one rank, read from the log's progress lines."""

    shape: str  #: none, too_short, inconclusive, decreasing, non_finite, diverged, plateau, no_decrease
    readings: int
    rank: Optional[int]
    max_step: Optional[float]
    first: Optional[LossReading]
    last: Optional[LossReading]
    lowest: Optional[LossReading]
    peak: Optional[LossReading]
    first_non_finite: Optional[LossReading]
    series: Tuple[Tuple[float, float], ...]  #: (step, loss), evenly downsampled, at most 512

    @classmethod
    def _from_dict(cls, d: Dict[str, Any]) -> "Trajectory":
        r = LossReading._from_dict
        return cls(d["shape"], d["readings"], d["rank"], d["max_step"], r(d["first"]), r(d["last"]),
                   r(d["lowest"]), r(d["peak"]), r(d["first_non_finite"]),
                   tuple(tuple(p) for p in d["series"]))

    def to_dict(self) -> Dict[str, Any]:
        def r(x: Optional[LossReading]) -> Optional[Dict[str, Any]]:
            return x.to_dict() if x else None
        return {"shape": self.shape, "readings": self.readings, "rank": self.rank,
                "max_step": self.max_step, "first": r(self.first), "last": r(self.last),
                "lowest": r(self.lowest), "peak": r(self.peak),
                "first_non_finite": r(self.first_non_finite),
                "series": [[step, _json_loss(loss)] for step, loss in self.series]}


@dataclass(frozen=True)
class FailedWorker:
    """One failed worker, as the launcher's failure summary lists it."""

    rank: Optional[int]
    local_rank: Optional[int]
    host: Optional[str]
    time: Optional[str]  #: as printed, e.g. 2026-11-22_09:37:25
    exit_code: Optional[int]
    signal: Optional[int]  #: the signal that ended it, if one did
    signal_name: Optional[str]  #: e.g. SIGABRT
    line: int  #: the line of the entry's first field

    @classmethod
    def _from_dict(cls, d: Dict[str, Any]) -> "FailedWorker":
        return cls(d["rank"], d["local_rank"], d["host"], d["time"], d["exit_code"], d["signal"],
                   d["signal_name"], d["line"])

    def to_dict(self) -> Dict[str, Any]:
        return {"rank": self.rank, "local_rank": self.local_rank, "host": self.host,
                "time": self.time, "exit_code": self.exit_code, "signal": self.signal,
                "signal_name": self.signal_name, "line": self.line}


@dataclass(frozen=True)
class LauncherReport:
    """torchelastic's failure summary: the first observed failure and the others."""

    root_cause: Optional[FailedWorker]
    other_failures: Tuple[FailedWorker, ...]  #: at most 64
    other_failure_count: int  #: all of them

    @classmethod
    def _from_dict(cls, d: Optional[Dict[str, Any]]) -> Optional["LauncherReport"]:
        if d is None:
            return None
        root = FailedWorker._from_dict(d["root_cause"]) if d["root_cause"] else None
        return cls(root, tuple(FailedWorker._from_dict(w) for w in d["other_failures"]),
                   d["other_failure_count"])

    def to_dict(self) -> Dict[str, Any]:
        return {"root_cause": self.root_cause.to_dict() if self.root_cause else None,
                "other_failures": [w.to_dict() for w in self.other_failures],
                "other_failure_count": self.other_failure_count}


@dataclass(frozen=True)
class Finding:
    """Something worth knowing beside the primary class."""

    kind: str
    class_: str
    message: str
    evidence: Optional[Evidence]

    def to_dict(self) -> Dict[str, Any]:
        return {"kind": self.kind, "class": self.class_, "message": self.message,
                "evidence": self.evidence.to_dict() if self.evidence else None}


@dataclass(frozen=True)
class Verdict:
    shows: Tuple[str, ...]  #: what the log shows, quoting lines and values
    implies: Tuple[str, ...]  #: cause, owner, next action, whether a rerun helps
    cannot_decide: Tuple[str, ...]  #: what this log cannot tell

    def to_dict(self) -> Dict[str, Any]:
        return {"shows": list(self.shows), "implies": list(self.implies),
                "cannot_decide": list(self.cannot_decide)}


@dataclass(frozen=True)
class Diagnosis:
    """Why a job ended, with the evidence. ``class_`` is the fine class id."""

    class_: str
    g15: str
    family: str
    owner: str
    confidence: float
    verdict: Verdict
    evidence: Tuple[Evidence, ...]
    findings: Tuple[Finding, ...]
    trajectory: Trajectory
    launcher: Optional[LauncherReport]  #: the launcher's failure summary, if the log has one
    exit_code: Optional[int]
    bytes: int
    lines: int
    path: Optional[str] = None
    _native: Any = field(default=None, repr=False, compare=False)

    @classmethod
    def _from_native(cls, result: "_core.Result", path: Optional[str]) -> "Diagnosis":
        d = result.to_dict()
        v = d["verdict"]
        findings = tuple(
            Finding(f["kind"], f["class"], f["message"],
                    Evidence._from_dict(f["evidence"]) if f["evidence"] else None)
            for f in d["findings"])
        return cls(
            class_=d["class"], g15=d["g15"], family=d["family"], owner=d["owner"],
            confidence=d["confidence"],
            verdict=Verdict(tuple(v["shows"]), tuple(v["implies"]), tuple(v["cannot_decide"])),
            evidence=tuple(Evidence._from_dict(e) for e in d["evidence"]),
            findings=findings, trajectory=Trajectory._from_dict(d["trajectory"]),
            launcher=LauncherReport._from_dict(d["launcher"]),
            exit_code=d["exit_code"], bytes=d["bytes"], lines=d["lines"],
            path=path, _native=result)

    def to_dict(self) -> Dict[str, Any]:
        """The same fields and names as the command line's JSON output."""
        out: Dict[str, Any] = {}
        if self.path is not None:
            out["path"] = self.path
        out.update({
            "class": self.class_, "g15": self.g15, "family": self.family, "owner": self.owner,
            "confidence": self.confidence, "verdict": self.verdict.to_dict(),
            "evidence": [e.to_dict() for e in self.evidence],
            "findings": [f.to_dict() for f in self.findings],
            "trajectory": self.trajectory.to_dict(),
            "launcher": self.launcher.to_dict() if self.launcher else None,
            "exit_code": self.exit_code, "bytes": self.bytes, "lines": self.lines,
        })
        return out

    def to_json(self, indent: int = 0) -> str:
        return self._native.to_json(self.path or "", indent)

    def __str__(self) -> str:
        return self._native.to_text(self.path or "", False)

    def _repr_html_(self) -> str:
        e = html.escape
        rows = "".join(
            f"<tr><td style='text-align:right'>{ev.line}</td><td><code>{e(ev.rule)}</code></td>"
            f"<td><code>{e(ev.text)}</code></td></tr>" for ev in self.evidence)

        def items(xs: Tuple[str, ...]) -> str:
            return "".join(f"<li>{e(x)}</li>" for x in xs)

        findings = items(tuple(f.message for f in self.findings))
        title = e(self.path) + " — " if self.path else ""
        return (
            f"<div class='gpudiag'><p><b>{title}{e(self.class_)}</b> "
            f"(owner {e(self.owner)}, family {e(self.family)}, g15 {e(self.g15)}, "
            f"confidence {self.confidence:.2f})</p>"
            f"<p><b>shows</b></p><ul>{items(self.verdict.shows)}</ul>"
            f"<p><b>implies</b></p><ul>{items(self.verdict.implies)}</ul>"
            f"<p><b>cannot decide</b></p><ul>{items(self.verdict.cannot_decide)}</ul>"
            + (f"<table><tr><th>line</th><th>rule</th><th>text</th></tr>{rows}</table>" if rows else "")
            + (f"<p><b>findings</b></p><ul>{findings}</ul>" if findings else "")
            + "</div>")
