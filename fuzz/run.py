"""Runs the fuzz targets: `fuzz` mutates with libFuzzer for a time per target
(make fuzz), `replay` runs each target once over its seeds and every input
that ever crashed it (make test-sanitize, and after a fix).

  python fuzz/run.py fuzz --build build-fuzz --seconds 60 [--targets diagnose rules]
  python fuzz/run.py fuzz --build build-fuzz --runs 10000000 --targets diagnose
  python fuzz/run.py replay --build build-sanitize
  python fuzz/run.py replay --build build-fuzz --corpus build-fuzz-undefined/corpus --targets rules

Seeds: the project corpus's logs (diagnose), the shipped rule files (rules),
fuzz/seeds/<target>/ (container, scheduler), and fuzz/regressions/<target>/,
where every input that crashed a target is kept as a test once fixed.
A crash found while fuzzing is written to fuzz/crashes/ and fails the run.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import shutil
import subprocess
import sys
import time
from typing import Dict, List, Optional

FUZZ = pathlib.Path(__file__).resolve().parent
ROOT = FUZZ.parent
TARGETS = ("diagnose", "rules", "container", "scheduler", "diagnosis_json")
MAX_SEED = 64 << 10  # larger logs slow every mutation; their lines are in the small ones
# The longest input each target is given while fuzzing: a few pieces of a log
# and a few records are enough to cross every boundary, and short inputs run
# many times faster.
MAX_LEN = {"diagnose": 8192, "rules": 16384, "container": 4096, "scheduler": 4096, "diagnosis_json": 16384}


def seed_sources(target: str) -> List[pathlib.Path]:
    if target == "diagnose":
        logs = sorted(p for p in (ROOT / "corpus" / "logs").rglob("*") if p.is_file())
        return [p for p in logs if p.stat().st_size <= MAX_SEED]
    if target == "rules":
        return sorted((ROOT / "rules").glob("*.json"))  # whole files; split into rules by rule_seeds
    return sorted(p for p in (FUZZ / "seeds" / target).glob("*") if p.is_file())


def write_rule_seeds(folder: pathlib.Path) -> None:
    """Each shipped rule alone in a file, as a user's rule file would hold it:
    small inputs that compile in a millisecond, where a whole file takes 50."""
    for path in sorted((ROOT / "rules").glob("*.json")):
        for i, rule in enumerate(json.loads(path.read_text()).get("rules", [])):
            (folder / f"{path.stem}-{i:03d}.json").write_text(json.dumps({"rules": [rule]}, indent=1))


def regressions(target: str) -> List[pathlib.Path]:
    folder = FUZZ / "regressions" / target
    return sorted(p for p in folder.glob("*") if p.is_file()) if folder.is_dir() else []


def binary(build: pathlib.Path, target: str) -> pathlib.Path:
    path = build / "fuzz" / f"fuzz_{target}"
    if not path.exists():
        sys.exit(f"run.py: {path} is missing: build with -DGPUDIAG_BUILD_FUZZ=ON first")
    return path


def replay(build: pathlib.Path, targets: List[str], corpus: Optional[pathlib.Path] = None) -> int:
    """Runs each target once over its seeds and regressions, and over a
    campaign's corpus when given (one fuzzed without ASan, replayed with it)."""
    failed = 0
    for target in targets:
        inputs = [str(p) for p in seed_sources(target) + regressions(target)]
        if corpus is not None:
            inputs += sorted(str(p) for p in (corpus / target).glob("*") if p.is_file())
        if target == "rules":
            singles = build / "seeds" / "rules-single"
            shutil.rmtree(singles, ignore_errors=True)
            singles.mkdir(parents=True)
            write_rule_seeds(singles)
            inputs += sorted(str(p) for p in singles.iterdir())
        start = time.perf_counter()
        r = run_inputs(binary(build, target), inputs)
        took = time.perf_counter() - start
        status = "ok" if r.returncode == 0 else f"FAILED (exit {r.returncode})"
        print(f"fuzz_{target}: {len(inputs)} inputs replayed in {took:.1f} s: {status}")
        if r.returncode != 0:
            failed += 1
            sys.stdout.write(r.stdout[-4000:] + r.stderr[-8000:])
    return 1 if failed else 0


def run_inputs(program: pathlib.Path, inputs: List[str]) -> "subprocess.CompletedProcess[str]":
    """Runs the target over the inputs a few thousand at a time (a campaign's
    corpus can pass the command-line length limit); stops at the first failure."""
    r = subprocess.CompletedProcess([str(program)], 0, "", "")
    for i in range(0, max(len(inputs), 1), 2000):
        r = subprocess.run([str(program), *inputs[i:i + 2000]], capture_output=True, text=True)
        if r.returncode != 0:
            break
    return r


def last_int(pattern: str, text: str) -> int:
    found = re.findall(pattern, text)
    return int(found[-1]) if found else 0


def fuzz(build: pathlib.Path, targets: List[str], seconds: int, jobs: int, runs: int) -> int:
    crashes = FUZZ / "crashes"
    crashes.mkdir(exist_ok=True)
    rows: List[Dict[str, object]] = []
    failed = 0
    for target in targets:
        corpus = build / "corpus" / target
        seeds = build / "seeds" / target
        corpus.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(seeds, ignore_errors=True)
        seeds.mkdir(parents=True)
        for p in seed_sources(target) + regressions(target):
            shutil.copyfile(p, seeds / p.name)
        if target == "rules":
            write_rule_seeds(seeds)
        # With a number of runs the campaign ends there, however long it takes.
        limit = [f"-runs={runs}"] if runs else [f"-max_total_time={seconds}"]
        command = [str(binary(build, target)), *limit, f"-dict={FUZZ / (target + '.dict')}",
                   f"-artifact_prefix={crashes}/{target}-", f"-max_len={MAX_LEN[target]}", "-timeout=20",
                   "-rss_limit_mb=4096", "-print_final_stats=1", str(corpus), str(seeds)]
        if jobs > 1:
            command[1:1] = [f"-fork={jobs}", "-ignore_crashes=0"]
        print(f"fuzz_{target}: {f'{runs:,} runs' if runs else f'{seconds} s'} ...", flush=True)
        start = time.perf_counter()
        r = subprocess.run(command, capture_output=True, text=True)
        took = round(time.perf_counter() - start)
        log = r.stdout + r.stderr
        (build / f"fuzz_{target}.log").write_text(log)
        executed = last_int(r"stat::number_of_executed_units:\s+(\d+)", log) or last_int(r"#(\d+)\s+DONE", log)
        rows.append({"target": target, "runs": executed, "seconds": took,
                     "cov": last_int(r"cov: (\d+)", log), "ft": last_int(r"ft: (\d+)", log),
                     "corpus": len(list(corpus.iterdir())), "result": "ok" if r.returncode == 0 else "CRASH"})
        if r.returncode != 0:
            failed += 1
            print(log[-6000:])
    print("\n| target | executions | seconds | coverage (edges) | features | corpus | result |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| fuzz_{row['target']} | {row['runs']:,} | {row['seconds']} | {row['cov']} | {row['ft']} | "
              f"{row['corpus']} | {row['result']} |")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("fuzz", "replay"))
    parser.add_argument("--build", type=pathlib.Path, required=True, help="the build folder holding fuzz/")
    parser.add_argument("--seconds", type=int, default=60, help="fuzzing time per target (default 60)")
    parser.add_argument("--runs", type=int, default=0,
                        help="executions per target; when given, the campaign ends there instead of after --seconds")
    parser.add_argument("--jobs", type=int, default=1, help="libFuzzer processes per target (default 1)")
    parser.add_argument("--targets", nargs="+", choices=TARGETS, default=list(TARGETS))
    parser.add_argument("--corpus", type=pathlib.Path,
                        help="replay: also run each target over CORPUS/<target>/ (a campaign's corpus, "
                             "e.g. one fuzzed without ASan)")
    args = parser.parse_args()
    if args.mode == "replay":
        return replay(args.build, args.targets, args.corpus)
    return fuzz(args.build, args.targets, args.seconds, args.jobs, args.runs)


if __name__ == "__main__":
    sys.exit(main())
