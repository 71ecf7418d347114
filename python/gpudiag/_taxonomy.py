"""The class ids of the taxonomy (stable API)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

from . import _core


@dataclass(frozen=True)
class ClassInfo:
    id: str
    family: str
    owner: str  #: job, infra, scheduler or none
    g15: str  #: projection onto the published corpus's 15 classes
    title: str


def taxonomy() -> Tuple[ClassInfo, ...]:
    """Every class gpudiag can report, in taxonomy order."""
    return tuple(ClassInfo(**d) for d in _core.taxonomy())
