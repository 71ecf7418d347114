"""Beyond one machine: the logs of many jobs diagnosed on a Dask cluster.

``diagnose_bag`` gives a ``dask.bag.Bag`` of the diagnoses as the command
line's JSON objects (plain dicts, which travel between processes);
``diagnose_frame`` a ``dask.dataframe.DataFrame`` with ``to_frame``'s columns.
The inputs are listed where this is called (a directory, a manifest or a list
of paths, as ``diagnose_many`` takes them) and read where the tasks run: the
workers must see the same paths (a shared file system). Each worker process
compiles the rules once and reuses them.

    from distributed import Client
    client = Client("tcp://scheduler:8786")      # or LocalCluster() on one machine
    frame = gpudiag.dask.diagnose_frame("/shared/jobs/").compute()
"""

from __future__ import annotations

import functools
import os
from typing import Any, Dict, Iterable, Optional, Sequence, Union

import dask.bag as db
import pandas as pd

from ._many import _COLUMNS, Task, _one, _row, _tasks, _typed
from ._rules import RuleSet

Sources = Union[str, "os.PathLike[str]", Iterable[Any]]


@functools.lru_cache(maxsize=None)
def _rules(directory: Optional[str]) -> Optional[RuleSet]:
    """The rules of a directory, compiled once per worker process (None: the shipped rules)."""
    return RuleSet(directory) if directory else None


def _as_dict(task: Task, rules_dir: Optional[str]) -> Dict[str, Any]:
    return _one(task, _rules(rules_dir)).to_dict()


def _as_row(task: Task, rules_dir: Optional[str]) -> Dict[str, Any]:
    return _row(_one(task, _rules(rules_dir)))


def _bag(sources: Sources, npartitions: Optional[int], exit_code: Optional[int], glob: Sequence[str],
         hidden: bool) -> db.Bag:
    tasks = _tasks(sources, exit_code, glob, hidden)
    return db.from_sequence(tasks, npartitions=npartitions or min(len(tasks), 256) or 1)


def diagnose_bag(sources: Sources, *, npartitions: Optional[int] = None, exit_code: Optional[int] = None,
                 rules: Optional[Union[str, "os.PathLike[str]"]] = None, glob: Sequence[str] = (),
                 hidden: bool = False) -> db.Bag:
    """A Bag of diagnoses, each the command line's JSON object (``Diagnosis.to_dict()``),
    in input order; an input that cannot be read is ``{"path", "error", "exit_code"}``.
    ``rules`` is a rules directory the workers can read (default: the shipped rules)."""
    rules_dir = os.fspath(rules) if rules is not None else None
    return _bag(sources, npartitions, exit_code, glob, hidden).map(_as_dict, rules_dir)


def diagnose_frame(sources: Sources, *, npartitions: Optional[int] = None, exit_code: Optional[int] = None,
                   rules: Optional[Union[str, "os.PathLike[str]"]] = None, glob: Sequence[str] = (),
                   hidden: bool = False) -> Any:
    """A Dask DataFrame, one row per log, with ``gpudiag.to_frame``'s columns, in input order."""
    rules_dir = os.fspath(rules) if rules is not None else None
    loose = pd.DataFrame({c: pd.Series(dtype="object") for c in _COLUMNS})
    rows = _bag(sources, npartitions, exit_code, glob, hidden).map(_as_row, rules_dir)
    return rows.to_dataframe(meta=loose).map_partitions(_typed, meta=_typed(loose.copy()))
