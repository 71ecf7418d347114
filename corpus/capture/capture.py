"""Captures the corpus's real logs: runs the scenarios of scenarios.py and records each.

    python corpus/capture/capture.py [--only TEXT] [--jobs N] [--list]

Run it with the capture environment (``make corpus`` builds it from
requirements.txt and runs this). Every scenario runs a real workload in a
fresh working directory, with stdout and stderr going to one pipe as a job
wrapper collects them, and its exit status recorded as subprocess reports it.
Writes corpus/logs/captured/<id>.log, corpus/logs/captured/index.jsonl and
corpus/capture/versions.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from scenarios import SCENARIOS, Scenario
from setups import SETUPS

HERE = Path(__file__).resolve().parent
WORKLOADS = HERE / "workloads"
CORPUS = HERE.parent
OUT = CORPUS / "logs" / "captured"
SCRIPTS = {"plain": "plain_loop.py", "hf": "hf_trainer.py", "lightning": "lightning_fit.py",
           "ddp": "ddp_gloo.py"}
BIN = Path(sys.executable).parent
PACKAGES = ("torch", "transformers", "accelerate", "lightning", "numpy")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def expand(args, work: Path):
    return [str(a).replace("{work}", str(work)) for a in args]


def command(sc: Scenario, work: Path):
    script = str(WORKLOADS / SCRIPTS[sc.workload])
    args = expand(sc.args, work)
    python = str(BIN / "python")
    if sc.launch == "python":
        return [python, script, *args]
    if sc.launch == "nobody":
        return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", python, script, *args]
    if sc.launch == "torchrun":
        return [str(BIN / "torchrun"), "--standalone", f"--nproc-per-node={sc.nproc}",
                *(["--tee", "3"] if sc.tee else []), script, *args]
    if sc.launch == "job":
        # A batch script as a scheduler runs it: bash reports a signalled command itself.
        job = work / "job.sh"
        earlier = expand(sc.earlier, work)
        job.write_text("#!/bin/bash\n"
                       "echo \"job started on $(hostname) at $(date -Is)\"\n"
                       f"cd {work}\n"
                       + ("set -x\n" if sc.trace else "")
                       + "".join(f"export {k}={v}\n" for k, v in sc.exports.items())
                       + (f"{python} {script} {' '.join(earlier)}\n"
                          "echo \"second run started on $(hostname) at $(date -Is)\"\n" if earlier else "")
                       + f"{python} {script} {' '.join(args)}\n")
        return ["bash", str(job)]
    if sc.launch == "ranks":
        # One process per rank, each line labelled with its rank as `srun --label` does.
        port = free_port()
        lines = ["#!/bin/bash", "set -o pipefail",
                 f"export MASTER_ADDR=127.0.0.1 MASTER_PORT={port} WORLD_SIZE={sc.nproc}"]
        for r in range(sc.nproc):
            lines.append(f"RANK={r} LOCAL_RANK={r} {python} {script} {' '.join(args)} 2>&1 "
                         f"| sed -u 's/^/{r}: /' & pids[{r}]=$!")
        lines += ["status=0",
                  f"for r in $(seq 0 {sc.nproc - 1}); do",
                  "  wait ${pids[$r]}; s=$?",
                  "  if [ $s -ne 0 ]; then echo \"launcher: rank $r exited with status $s\";"
                  " [ $status -eq 0 ] && status=$s; fi",
                  "done", "exit $status"]
        (work / "launch.sh").write_text("\n".join(lines) + "\n")
        return ["bash", str(work / "launch.sh")]
    raise ValueError(f"{sc.id}: unknown launch {sc.launch!r}")


def environment(work: Path, extra) -> dict:
    env = {"PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin", "HOME": str(work), "LANG": "C.UTF-8",
           "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1", "HF_HUB_OFFLINE": "1",
           "HF_HOME": str(work / "hf"), "TERM": "dumb", "TOKENIZERS_PARALLELISM": "false"}
    env.update(extra)
    return env


def run(sc: Scenario, base: Path):
    work = Path(tempfile.mkdtemp(prefix=f"{sc.id}-", dir=base))
    os.chmod(work, 0o755)
    env = environment(work, sc.env)
    for step in sc.setup:
        SETUPS[step](work, BIN / "python", WORKLOADS, env)
    log = OUT / f"{sc.id}.log"
    start = time.monotonic()
    with open(log, "wb") as f:
        try:
            proc = subprocess.run(command(sc, work), stdout=f, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, cwd=work, env=env,
                                  timeout=sc.timeout, start_new_session=True)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            return sc, None, f"did not end within {sc.timeout:.0f} s"
    shutil.rmtree(work, ignore_errors=True)
    return sc, code, f"{time.monotonic() - start:.1f} s"


def versions():
    from importlib.metadata import PackageNotFoundError, version
    out = {}
    for p in PACKAGES:
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            pass
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", help="run only the scenarios whose id contains TEXT")
    p.add_argument("--jobs", type=int, default=2, help="scenarios run at once (default 2)")
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")
    args = p.parse_args(argv)
    chosen = [s for s in SCENARIOS if not args.only or args.only in s.id]
    if args.list:
        for s in chosen:
            print(f"{s.id:44} {s.cls:22} {s.workload:9} {s.launch}")
        return 0
    if os.geteuid() != 0:
        print("capture.py: run as root: the permission scenarios switch to the user 'nobody'",
              file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    index_path = OUT / "index.jsonl"
    index = {}
    if index_path.exists():
        for line in index_path.read_text().splitlines():
            row = json.loads(line)
            index[row["id"]] = row
    pinned = versions()
    base = Path(tempfile.mkdtemp(prefix="gpudiag-capture-"))
    os.chmod(base, 0o755)
    failed = []
    with ThreadPoolExecutor(args.jobs) as pool:
        for n, (sc, code, note) in enumerate(pool.map(lambda s: run(s, base), chosen), 1):
            status = "timeout" if code is None else f"exit {code}"
            print(f"[{n}/{len(chosen)}] {sc.id}: {status} ({note})", flush=True)
            if code is None:
                failed.append(sc.id)
                continue
            index[sc.id] = {"id": sc.id, "class": sc.cls, "source": "captured",
                            "framework": sc.workload, "launcher": sc.launch,
                            "log_path": f"corpus/logs/captured/{sc.id}.log",
                            "true_exit_code": code, "versions": pinned}
    shutil.rmtree(base, ignore_errors=True)
    known = {s.id for s in SCENARIOS}
    with open(index_path, "w") as f:
        for key in sorted(index):
            if key in known:
                f.write(json.dumps(index[key]) + "\n")
    freeze = subprocess.run([str(BIN / "python"), "-m", "pip", "freeze"], capture_output=True,
                            text=True).stdout
    (HERE / "versions.txt").write_text(
        f"# the capture environment of the last run\npython {platform.python_version()}\n"
        f"{platform.platform()}\n\n{freeze}")
    if failed:
        print(f"capture.py: {len(failed)} scenarios did not finish: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
