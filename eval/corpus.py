"""Loading a labelled corpus in the published layout.

A corpus root holds ``corpus/labels.jsonl``: one JSON object per log with
``id``, ``mode`` (the 15-class label), ``log_path`` (relative to the root) and
optionally ``source``, ``true_exit_code``, ``class`` (the fine label) and
``split``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

MANIFEST = Path("corpus") / "labels.jsonl"
DEFAULT_CORPUS = Path("..") / "shared" / "corpora" / "gpualert-eval"


class CorpusError(ValueError):
    """The corpus or its manifest cannot be used; the message says which and why."""


@dataclass(frozen=True)
class Sample:
    id: str
    mode: str  #: label in the 15-class space of the published corpus
    fine: Optional[str]  #: label in the fine taxonomy, when the manifest has one
    source: str
    split: Optional[str]
    log_path: Path  #: absolute
    exit_code: Optional[int]


@dataclass(frozen=True)
class Corpus:
    root: Path
    name: str
    samples: Tuple[Sample, ...]

    @property
    def has_fine_labels(self) -> bool:
        return all(s.fine is not None for s in self.samples)

    @property
    def has_splits(self) -> bool:
        return any(s.split is not None for s in self.samples)


def project_roots() -> List[Path]:
    """Where the project checkout may be, most likely first: the one the
    package was built from (recorded by the build), the folder above this
    module when it runs from a checkout, then the working directory and each
    folder above it."""
    roots: List[Path] = []
    try:
        from gpudiag import _project  # type: ignore[attr-defined]
        roots.append(Path(_project.SOURCE_DIR))
    except ImportError:
        pass
    roots.append(Path(__file__).resolve().parents[1])
    cwd = Path.cwd()
    roots += [cwd, *cwd.parents]
    return list(dict.fromkeys(roots))


def default_corpus_path() -> Path:
    """$GPUDIAG_EVAL_CORPUS, else the published corpus beside the project
    checkout, wherever the command is run from."""
    env = os.environ.get("GPUDIAG_EVAL_CORPUS")
    if env:
        return Path(env)
    candidates = [root / DEFAULT_CORPUS for root in project_roots()]
    for candidate in candidates:
        if (candidate / MANIFEST).is_file():
            return candidate.resolve()
    return candidates[0]


def resolve_root(path: Path) -> Path:
    """Accepts the corpus root, its corpus/ folder or the labels.jsonl file itself."""
    path = Path(path)
    if path.is_file() and path.name == MANIFEST.name:
        return path.parent.parent
    if path.is_dir() and path.name == "corpus" and (path / MANIFEST.name).is_file():
        return path.parent
    return path


def load_corpus(path: Path, name: Optional[str] = None) -> Corpus:
    """Reads and validates the manifest; ``name`` defaults to the root folder's name."""
    root = resolve_root(Path(path))
    manifest = root / MANIFEST
    if not root.exists():
        raise CorpusError(
            f"corpus not found: {root} does not exist. Pass the folder that holds "
            f"{MANIFEST} (python -m gpudiag.eval PATH) or set GPUDIAG_EVAL_CORPUS; the "
            f"published corpus lives at {DEFAULT_CORPUS} beside a project checkout.")
    if not manifest.is_file():
        raise CorpusError(f"{root} is not a corpus: it has no {MANIFEST} manifest")
    samples: List[Sample] = []
    seen = set()
    try:
        lines = manifest.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise CorpusError(f"{manifest}: cannot be read: {e}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{manifest}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise CorpusError(f"{where}: not valid JSON: {e.msg}") from None
        if not isinstance(row, dict):
            raise CorpusError(f"{where}: expected a JSON object")
        for key in ("id", "mode", "log_path"):
            if not isinstance(row.get(key), str) or not row[key]:
                raise CorpusError(f"{where}: field '{key}' is missing or not a string")
        if row["id"] in seen:
            raise CorpusError(f"{where}: id '{row['id']}' appears twice")
        seen.add(row["id"])
        exit_code = row.get("true_exit_code")
        if exit_code is not None and (not isinstance(exit_code, int) or isinstance(exit_code, bool)):
            raise CorpusError(f"{where}: 'true_exit_code' must be an integer or null")
        fine = row.get("class")
        if fine is not None and not isinstance(fine, str):
            raise CorpusError(f"{where}: 'class' must be a string")
        samples.append(Sample(
            id=row["id"], mode=row["mode"], fine=fine, source=str(row.get("source", "unknown")),
            split=row.get("split"), log_path=(root / row["log_path"]).resolve(),
            exit_code=exit_code))
    if not samples:
        raise CorpusError(f"{manifest}: no samples")
    return Corpus(root=root.resolve(), name=name or root.resolve().name, samples=tuple(samples))


def read_log(sample: Sample) -> bytes:
    """The log's bytes; OSError names the file."""
    with open(sample.log_path, "rb") as f:
        return f.read()
