"""The same inputs give byte-identical JSON: run after run, on one thread or
many, from the command line or from Python. (Whatever the pieces the input
arrives in: tests/cpp, Determinism.)"""

import pathlib
import subprocess

import gpudiag

from conftest import ROOT

LOGS = sorted(str(p) for p in (ROOT / "corpus" / "logs").rglob("*.log"))


def cli_jsonl(cli, env):
    r = subprocess.run([cli, "diagnose", "-f", "jsonl", *LOGS], capture_output=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout.decode().splitlines()


def test_json_is_the_same_every_way_it_is_made(cli, cache_env):
    assert len(LOGS) > 400
    first = cli_jsonl(cli, cache_env)
    assert len(first) == len(LOGS)
    assert cli_jsonl(cli, cache_env) == first  # run after run
    python = [gpudiag.diagnose(pathlib.Path(p)).to_json() for p in LOGS]
    assert python == first  # the command and the bindings share one serializer
    for jobs in (1, 2, 8):
        many = gpudiag.diagnose_many(LOGS, jobs=jobs, progress=False)
        assert [d.to_json() for d in many] == first, jobs
