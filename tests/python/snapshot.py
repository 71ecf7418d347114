"""The JSON of every diagnosis of the published and the project corpus, kept as
a SHA-256 per log in tests/snapshots/: work meant to change no verdict (speed,
refactoring) must leave every one as it was, and a change that does alter
some shows, in the diff of these files, which logs it altered.

  python tests/python/snapshot.py            # which logs' diagnoses differ from the snapshot
  python tests/python/snapshot.py --update   # record the current ones (make snapshot)

The command is $GPUDIAG_CLI or build/gpudiag; each corpus is diagnosed from
its own folder, so the paths in the JSON are the same on every machine. Only
hashes are kept: the logs' lines stay in the corpora.
"""

import argparse
import hashlib
import os
import pathlib
import subprocess
import sys
from typing import Dict, List

ROOT = pathlib.Path(__file__).resolve().parents[2]
SNAPSHOTS = ROOT / "tests" / "snapshots"
SHARED = ROOT.parent / "shared"
CORPORA = {
    "published": pathlib.Path(os.environ.get("GPUDIAG_CORPUS", SHARED / "corpora" / "gpualert-eval")) / "corpus",
    "project": ROOT / "corpus" / "logs",
}


def logs(folder: pathlib.Path) -> List[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*.log") if p.is_file())


def current(cli: str, folder: pathlib.Path) -> Dict[str, str]:
    """Each log's path (below `folder`) and the SHA-256 of its JSON line."""
    names = logs(folder)
    out: Dict[str, str] = {}
    for start in range(0, len(names), 500):
        part = names[start:start + 500]
        r = subprocess.run([cli, "diagnose", "-f", "jsonl", "--no-cache", *part], cwd=folder,
                           capture_output=True, timeout=600)
        if r.returncode not in (0, 1):
            raise RuntimeError(f"{cli} failed on {folder}: {r.stderr.decode(errors='replace')[-2000:]}")
        lines = r.stdout.splitlines()
        if len(lines) != len(part):
            raise RuntimeError(f"{cli} wrote {len(lines)} lines for {len(part)} logs of {folder}")
        out.update((name, hashlib.sha256(line).hexdigest()) for name, line in zip(part, lines))
    return out


def stored(corpus: str) -> Dict[str, str]:
    path = SNAPSHOTS / f"{corpus}.sha256"
    return dict(reversed(line.split("  ", 1)) for line in path.read_text().splitlines() if line.strip())


def write(corpus: str, hashes: Dict[str, str]) -> None:
    SNAPSHOTS.mkdir(exist_ok=True)
    (SNAPSHOTS / f"{corpus}.sha256").write_text("".join(f"{h}  {name}\n" for name, h in sorted(hashes.items())))


def differences(before: Dict[str, str], now: Dict[str, str]) -> List[str]:
    """The logs whose diagnosis changed, appeared or went, each with what happened."""
    changed = [f"changed: {n}" for n in sorted(before.keys() & now.keys()) if before[n] != now[n]]
    return (changed + [f"new: {n}" for n in sorted(now.keys() - before.keys())]
            + [f"gone: {n}" for n in sorted(before.keys() - now.keys())])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="record the current diagnoses")
    args = parser.parse_args()
    cli = os.environ.get("GPUDIAG_CLI", str(ROOT / "build" / "gpudiag"))
    status = 0
    for corpus, folder in CORPORA.items():
        if not folder.is_dir():
            print(f"{corpus}: {folder} not found, skipped", file=sys.stderr)
            continue
        now = current(cli, folder)
        if args.update:
            write(corpus, now)
            print(f"{corpus}: {len(now)} diagnoses recorded in {SNAPSHOTS / (corpus + '.sha256')}")
            continue
        diff = differences(stored(corpus), now)
        print(f"{corpus}: {len(now)} logs, {len(diff)} differ from the snapshot")
        for line in diff:
            print("  " + line)
        status = status or (1 if diff else 0)
    return status


if __name__ == "__main__":
    sys.exit(main())
