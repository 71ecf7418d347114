"""Writes corpus/labels.jsonl from the index of each part of the corpus.

    python corpus/build_manifest.py

Parts: logs/captured (capture/capture.py), logs/composed (compose/compose.py)
and examples/. Each row gets ``mode``, the class's projection onto the
published corpus's 15 classes (taken from gpudiag's taxonomy unless the part
names another), and ``split``: ``held_out`` for the ids whose SHA-256 falls in
the lowest 30% (a fixed hash of the id, so a log never changes split and rules
are not tuned on them), ``dev`` for the rest.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import gpudiag

CORPUS = Path(__file__).resolve().parent
ROOT = CORPUS.parent
PARTS = ("logs/captured/index.jsonl", "logs/composed/index.jsonl", "examples/index.jsonl")
FIELDS = ("id", "mode", "class", "source", "split", "log_path", "true_exit_code")
HELD_OUT_PERCENT = 30


def split_of(sample_id: str) -> str:
    bucket = int(hashlib.sha256(sample_id.encode()).hexdigest(), 16) % 100
    return "held_out" if bucket < HELD_OUT_PERCENT else "dev"


def main() -> int:
    g15 = {c.id: c.g15 for c in gpudiag.taxonomy()}
    rows, problems = [], []
    for part in PARTS:
        path = CORPUS / part
        if not path.exists():
            problems.append(f"{path} is missing: run the step that writes it")
            continue
        for line in path.read_text().splitlines():
            row = json.loads(line)
            if row["class"] not in g15:
                problems.append(f"{part}: {row['id']}: class {row['class']!r} is not in the taxonomy")
                continue
            if not (ROOT / row["log_path"]).is_file():
                problems.append(f"{part}: {row['id']}: {row['log_path']} is missing")
                continue
            row.setdefault("mode", g15[row["class"]])
            row["split"] = split_of(row["id"])
            rows.append({k: row[k] for k in FIELDS} | {k: v for k, v in row.items() if k not in FIELDS})
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    rows.sort(key=lambda r: r["id"])
    with open(CORPUS / "labels.jsonl", "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    print(f"{len(rows)} logs in {CORPUS / 'labels.jsonl'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
