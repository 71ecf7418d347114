"""The diagnosis as Python values: frozen dataclasses with dict, JSON and HTML forms."""

from __future__ import annotations

import html
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

    @classmethod
    def _from_dict(cls, d: Dict[str, Any]) -> "Evidence":
        return cls(d["rule"], d["class"], d["line"], d["offset"], d["text"], d["truncated"],
                   d["count"], dict(d["values"]))

    def to_dict(self) -> Dict[str, Any]:
        return {"rule": self.rule, "class": self.class_, "line": self.line, "offset": self.offset,
                "text": self.text, "truncated": self.truncated, "count": self.count,
                "values": dict(self.values)}


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
            findings=findings, exit_code=d["exit_code"], bytes=d["bytes"], lines=d["lines"],
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
