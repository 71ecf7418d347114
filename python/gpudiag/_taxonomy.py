"""The classes of the taxonomy (ids are stable API), read from the shipped rule files' cards."""

from __future__ import annotations

from typing import Tuple

from . import _core
from ._types import ClassInfo


def taxonomy() -> Tuple[ClassInfo, ...]:
    """Every class gpudiag can report with the shipped rules, in taxonomy order."""
    return _core.taxonomy()
