"""Loading and inspecting rule sets."""

from __future__ import annotations

import os
from typing import Iterator, List, Optional, Tuple, Union

from . import _core
from ._types import ClassInfo, Rule

PathLike = Union[str, "os.PathLike[str]"]


class RuleSet:
    """An ordered, compiled set of rules: earlier rules win.

    ``RuleSet()`` is the shipped rules; ``RuleSet("my-rules/")`` loads every
    ``*.json`` file of a directory in file-name order. Compiled databases are
    cached on disk (``cache=False`` to skip, ``cache_dir`` to move it). Raises
    :class:`gpudiag.RuleError` naming the file, rule and problem.
    """

    def __init__(self, path: Optional[PathLike] = None, *, cache: bool = True,
                 cache_dir: Optional[PathLike] = None) -> None:
        self._native = _core.load_rules(
            os.fspath(path) if path is not None else None, cache,
            os.fspath(cache_dir) if cache_dir is not None else None)
        self._rules: Tuple[Rule, ...] = self._native.rules()

    @property
    def origin(self) -> str:
        """The directory the rules came from, or ``"builtin"``."""
        return self._native.origin

    @property
    def digest(self) -> str:
        """Key of the rules' content and the library version (names the cache file)."""
        return self._native.digest

    @property
    def cache_outcome(self) -> str:
        """``built in`` (the shipped rules, compiled with the library), ``hit``,
        ``compiled and stored``, ``compiled, not stored`` or ``disabled``."""
        return self._native.cache_outcome

    @property
    def cache_file(self) -> str:
        """The cache file the compiled rules were read from or stored in; empty when none."""
        return self._native.cache_file

    @property
    def rules(self) -> Tuple[Rule, ...]:
        return self._rules

    @property
    def classes(self) -> Tuple[ClassInfo, ...]:
        """The classes these rules can report: the shipped ones and those the files declare."""
        return self._native.classes()

    def check_examples(self) -> List[Tuple[str, str, str]]:
        """Runs every rule's examples; returns ``(file, rule id, problem)`` for each failure."""
        return self._native.check_examples()

    def __len__(self) -> int:
        return len(self._rules)

    def __iter__(self) -> Iterator[Rule]:
        return iter(self._rules)

    def __getitem__(self, rule_id: str) -> Rule:
        for r in self._rules:
            if r.id == rule_id:
                return r
        raise KeyError(rule_id)

    def __repr__(self) -> str:
        return f"<RuleSet {len(self)} rules from {self.origin}>"


_default: Optional[RuleSet] = None


def default_rules() -> RuleSet:
    """The shipped rules, loaded once per process."""
    global _default
    if _default is None:
        _default = RuleSet()
    return _default
