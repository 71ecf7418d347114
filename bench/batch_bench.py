"""gpudiag batch over many small logs, as a cluster leaves them.

Builds N logs (default 20,000) from the project corpus's logs, cycled: one in
ten gzip-compressed, one in ten wrapped in Docker's json-file records, one in
a hundred a truncated archive; then runs `gpudiag batch` into JSONL, CSV and
Parquet and prints a table of the times. With MAX_KIB, only the corpus logs
of 1 KiB to MAX_KIB are cycled, plain. Run: make bench-batch
(or python bench/batch_bench.py [N] [JOBS] [MAX_KIB]).
"""

import gzip
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def build(n: int, into: pathlib.Path, max_kib: int = 0) -> None:
    sources = sorted((ROOT / "corpus" / "logs").rglob("*.log"))
    texts = [p.read_bytes() for p in sources]
    if max_kib:
        texts = [t for t in texts if 1024 <= len(t) <= max_kib * 1024]
    for i in range(n):
        text = texts[i % len(texts)]
        folder = into / f"node-{i % 50:02d}"
        folder.mkdir(exist_ok=True)
        if max_kib:
            (folder / f"{i}.out").write_bytes(text)
        elif i % 100 == 7:
            packed = gzip.compress(text + b"\n" * 4096)
            (folder / f"{i}.out.gz").write_bytes(packed[: len(packed) // 2])
        elif i % 10 == 3:
            (folder / f"{i}.out.gz").write_bytes(gzip.compress(text))
        elif i % 10 == 5:
            lines = text.decode("utf-8", "replace").splitlines(keepends=True)
            (folder / f"{i}-json.log").write_text("".join(
                json.dumps({"log": line, "stream": "stderr", "time": "2026-11-23T10:00:00Z"}) + "\n"
                for line in lines))
        else:
            (folder / f"{i}.out").write_bytes(text)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    jobs = sys.argv[2] if len(sys.argv) > 2 else str(os.cpu_count())
    max_kib = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    cli = os.environ.get("GPUDIAG_CLI", str(ROOT / "build" / "gpudiag"))
    env = dict(os.environ, GPUDIAG_PYTHON=os.environ.get("GPUDIAG_PYTHON", sys.executable))
    with tempfile.TemporaryDirectory() as tmp:
        logs = pathlib.Path(tmp) / "logs"
        logs.mkdir()
        start = time.perf_counter()
        build(n, logs, max_kib)
        size = sum(p.stat().st_size for p in logs.rglob("*") if p.is_file())
        print(f"{n} logs, {size / 2**20:.0f} MiB on disk, built in {time.perf_counter() - start:.1f} s; "
              f"gpudiag batch -j {jobs}")
        print("| output | seconds | logs/s | exit |")
        print("|---|---|---|---|")
        for fmt in ("jsonl", "csv", "parquet"):
            out = pathlib.Path(tmp) / f"results.{fmt}"
            start = time.perf_counter()
            r = subprocess.run([cli, "batch", "--no-progress", "-j", jobs, "-o", str(out), str(logs)],
                               capture_output=True, text=True, env=env)
            seconds = time.perf_counter() - start
            print(f"| {fmt} | {seconds:.1f} | {n / seconds:.0f} | {r.returncode} |")
        print()
        print(r.stderr)


if __name__ == "__main__":
    main()
