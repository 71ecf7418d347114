"""gpudiag batch: inputs in, one row per log out, in order, resumable."""

import csv
import gzip
import json
import os
import shutil
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from conftest import EXAMPLES


def batch(cli, *args, env):
    env = dict(env, GPUDIAG_PYTHON=sys.executable)
    return subprocess.run([cli, "batch", "--no-progress", *args], capture_output=True, text=True, env=env,
                          timeout=300)


@pytest.fixture()
def jobs(tmp_path):
    """Example logs as a cluster leaves them: plain, gzip-compressed, Docker
    records, a truncated archive; and a manifest naming some of them."""
    root = tmp_path / "jobs"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("*.jsonl"))
    oom = (EXAMPLES / "cuda_oom_trainer.log").read_bytes()
    (root / "1001.out.gz").write_bytes(gzip.compress(oom))
    (root / "1002-json.log").write_text("".join(
        json.dumps({"log": line, "stream": "stderr", "time": "2026-11-23T10:00:00Z"}) + "\n"
        for line in oom.decode().splitlines(keepends=True)))
    packed = gzip.compress(b"".join(b"step %d loss %.3f\n" % (i, 4 / i) for i in range(1, 50001)))
    (root / "1003.out.gz").write_bytes(packed[: len(packed) // 2])
    manifest = tmp_path / "manifest.csv"
    manifest.write_text("path,exit_code\njobs/segfault_srun.log,139\njobs/gone.log,1\njobs/1001.out.gz,\n")
    return root, manifest


def test_every_format_holds_the_same_rows_in_input_order(cli, cache_env, jobs, tmp_path):
    root, manifest = jobs
    runs = {}
    for fmt in ("jsonl", "csv", "parquet"):
        out = tmp_path / f"results.{fmt}"
        r = batch(cli, "-j", "2", "-o", str(out), str(manifest), str(root), env=cache_env)
        assert r.returncode == 1, r.stderr  # gone.log is unreadable, 1003.out.gz truncated
        runs[fmt] = out
    docs = [json.loads(line) for line in runs["jsonl"].read_text().splitlines()]
    with open(runs["csv"], newline="") as f:
        rows = list(csv.DictReader(f))
    table = pq.read_table(runs["parquet"]).to_pylist()
    expected_paths = [str(tmp_path / "jobs" / n) for n in ("segfault_srun.log", "gone.log", "1001.out.gz")] + \
        sorted(str(p) for p in root.iterdir())
    assert [d["path"] for d in docs] == [r["path"] for r in rows] == [t["path"] for t in table] == expected_paths
    assert [d.get("class") for d in docs] == [r["class"] or None for r in rows] == [t["class"] for t in table]
    assert docs[0]["exit_code"] == 139 and table[0]["exit_code"] == 139
    assert "No such file" in docs[1]["error"] and "No such file" in table[1]["error"]
    by_name = {os.path.basename(t["path"]): t for t in table}
    assert by_name["1002-json.log"]["class"] == "cuda_oom" and by_name["1001.out.gz"]["compression"] == "gzip"
    assert by_name["1003.out.gz"]["damage"] == "the data ends mid-stream: the file is truncated"


def test_summary_counts_classes_owners_and_reruns(cli, cache_env, jobs):
    root, _ = jobs
    r = batch(cli, str(root), env=cache_env)
    lines = r.stdout.splitlines()
    summary = r.stderr
    assert f"gpudiag batch: {len(lines)} logs in" in summary
    assert f"{len(lines)} diagnosed, 0 unreadable, 1 read in part" in summary
    classes = [json.loads(line)["class"] for line in lines]
    rows = {row.split()[0]: row.split()[1:] for row in summary.splitlines()[2:] if row.startswith("  ") and
            not row.startswith("  by owner") and not row.startswith("  a plain")}
    assert rows["cuda_oom"] == [str(classes.count("cuda_oom")), "job", "no"]
    assert rows["nccl_timeout"] == ["1", "infra", "maybe"]
    assert "by owner: job" in summary and "a plain rerun would fix" in summary


def test_resume_skips_what_the_output_has(cli, cache_env, jobs, tmp_path):
    root, _ = jobs
    for fmt in ("jsonl", "csv", "parquet"):
        out = tmp_path / f"resumed.{fmt}"
        first = batch(cli, "-o", str(out), "-g", "*.log", str(root), env=cache_env)
        assert first.returncode == 0, first.stderr
        again = batch(cli, "-o", str(out), "--resume", str(root), env=cache_env)
        assert "already in the output, skipped" in again.stderr
        if fmt == "parquet":
            paths = [t["path"] for t in pq.read_table(out).to_pylist()]
        elif fmt == "csv":
            with open(out, newline="") as f:
                paths = [row["path"] for row in csv.DictReader(f)]
        else:
            paths = [json.loads(line)["path"] for line in out.read_text().splitlines()]
        logs = sorted(str(p) for p in root.glob("*.log"))
        assert paths[: len(logs)] == logs, fmt
        assert sorted(paths) == sorted(str(p) for p in root.iterdir()), fmt  # each input once


def test_progress_bar_on_request(cli, cache_env, jobs):
    root, _ = jobs
    total = len(list(root.iterdir()))
    r = subprocess.run([cli, "batch", "--progress", str(root)], capture_output=True, text=True,
                       env=dict(cache_env, GPUDIAG_PYTHON=sys.executable), timeout=300)
    assert f"{total}/{total}" in r.stderr and "log/s" in r.stderr


def test_usage_errors_are_status_2(cli, cache_env, jobs, tmp_path):
    root, _ = jobs
    r = batch(cli, "--resume", str(root), env=cache_env)
    assert r.returncode == 2 and "--resume needs the output" in r.stderr
    r = batch(cli, "-o", str(tmp_path / "out.txt"), str(root), env=cache_env)
    assert r.returncode == 2 and "cannot tell the format" in r.stderr
    r = batch(cli, "-f", "parquet", str(root), env=cache_env)
    assert r.returncode == 2 and "parquet needs an output file" in r.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{\"path\": \"a.log\"}\nnot json\n")
    r = batch(cli, str(bad), env=cache_env)
    assert r.returncode == 2 and "bad.jsonl: line 2: not JSON" in r.stderr


def test_without_the_package_it_says_how_to_get_it(cli, cache_env, tmp_path):
    env = dict(cache_env, GPUDIAG_PYTHON=shutil.which("python3") or "python3", PYTHONPATH="", PYTHONNOUSERSITE="1")
    probe = subprocess.run([env["GPUDIAG_PYTHON"], "-c", "import gpudiag"], capture_output=True, env=env)
    if probe.returncode == 0:
        pytest.skip("the system interpreter has gpudiag installed")
    r = subprocess.run([cli, "batch", str(tmp_path)], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 1 and "cannot import the gpudiag package" in r.stderr


def test_a_size_limit_applies_to_every_input(cli, cache_env, jobs, tmp_path):
    root, _ = jobs
    r = batch(cli, "--max-bytes", "2K", "-j", "2", str(root), env=cache_env)
    assert r.returncode == 1 and "read in part" in r.stderr, r.stderr  # as for a damaged archive
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    limited = [row for row in rows if row["input"]["damage"] == "stopped at the size limit of 2048 bytes"]
    assert limited and all(row["input"]["damage_at"] == 2048 for row in limited)
    assert all(row["input"]["damage"] is None for row in rows if os.path.getsize(row["path"]) < 2048)
    # The same through the Python API, and a size that is none is refused.
    many = gpudiag_many(root)
    assert sorted(d.path for d in many if d.input.damage == "stopped at the size limit of 2048 bytes") == sorted(
        row["path"] for row in limited)
    bad = batch(cli, "--max-bytes", "2Q", str(root), env=cache_env)
    assert bad.returncode == 2 and "--max-bytes: takes a size such as" in bad.stderr


def gpudiag_many(root):
    import gpudiag
    return gpudiag.diagnose_many(root, max_bytes=2048, progress=False)


def test_json_lines_written_natively_hold_each_input_in_order(cli, cache_env, jobs, tmp_path):
    # More inputs than the native threads hold at once, unreadable ones among
    # them: a file and a pipe get the same lines, each diagnosis's the JSON of
    # diagnosing it alone, each unreadable input's {"path", "error", "exit_code"}
    # in its place, and the summary counts them all.
    import gpudiag
    root, _ = jobs
    logs = sorted(str(p) for p in root.glob("*.log"))
    rows = [(logs[i % len(logs)], "") if i % 83 else (str(root / f"gone-{i}.log"), "3") for i in range(700)]
    manifest = tmp_path / "many.csv"
    manifest.write_text("path,exit_code\n" + "".join(f"{p},{code}\n" for p, code in rows))
    out = tmp_path / "many.jsonl"
    to_file = batch(cli, "-j", "3", "-o", str(out), str(manifest), env=cache_env)
    to_pipe = batch(cli, "-j", "3", str(manifest), env=cache_env)
    assert to_file.returncode == to_pipe.returncode == 1, to_file.stderr
    assert out.read_text() == to_pipe.stdout
    lines = to_pipe.stdout.splitlines()
    alone = {p: gpudiag.diagnose(p).to_json() for p in logs}
    assert len(lines) == len(rows)
    for (path, code), line in zip(rows, lines):
        if code:
            assert json.loads(line) == {"path": path, "error": f"{path}: No such file or directory", "exit_code": 3}
        else:
            assert line == alone[path]
    failures = sum(1 for _, code in rows if code)
    assert f"{len(rows) - failures} diagnosed, {failures} unreadable" in to_file.stderr


def test_json_lines_to_a_stream_in_memory_are_the_same(cli, cache_env, jobs, capsys):
    # Where standard output is no file (a notebook's, a test's), the lines are
    # written from Python, the same ones.
    from gpudiag._batch import main
    root, _ = jobs
    native = batch(cli, "-j", "2", str(root), env=cache_env).stdout
    assert main(["--no-progress", "-j", "2", str(root)]) == 1  # 1003.out.gz is truncated
    assert capsys.readouterr().out == native


def test_ctrl_c_keeps_the_rows_written_and_resume_finishes_the_rest(cli, cache_env, tmp_path):
    # The batch is held at a named pipe halfway (a log still being written):
    # the rows before it are out, Ctrl-C comes, then the pipe ends.
    import signal
    import time
    logs = tmp_path / "many"
    logs.mkdir()
    examples = sorted(EXAMPLES.glob("*.log"))
    names = [f"{i:05d}.log" for i in range(2000)]
    for i, name in enumerate(names):
        (logs / name).write_bytes(examples[i % len(examples)].read_bytes())
    held = logs / "01000.log"
    held.unlink()
    os.mkfifo(held)
    manifest = logs / "jobs.csv"
    manifest.write_text("path\n" + "".join(f"{name}\n" for name in names))
    out = tmp_path / "rows.jsonl"
    command = [cli, "batch", "--no-progress", "-j", "2", "-o", str(out), str(manifest)]
    env = dict(cache_env, GPUDIAG_PYTHON=sys.executable)
    # Ctrl-C's default action, whatever this process inherited (a job started
    # in the background of a script ignores SIGINT, and so would the batch).
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while (not out.exists() or out.read_text().count("\n") < 1000) and time.monotonic() < deadline:
        assert run.poll() is None, run.communicate()
        time.sleep(0.01)
    run.send_signal(signal.SIGINT)
    time.sleep(0.3)
    with open(held, "w"):
        pass  # the pipe ends: the thread reading it finishes
    _, stderr = run.communicate(timeout=60)
    assert run.returncode == 130, stderr
    assert "interrupted; the rows written so far are in" in stderr and "Traceback" not in stderr
    expected = [str(logs / name) for name in names]
    assert [json.loads(line)["path"] for line in out.read_text().splitlines()] == expected[:1000]
    held.unlink()
    held.write_bytes(examples[0].read_bytes())
    again = subprocess.run(command + ["--resume"], capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0, again.stderr
    assert [json.loads(line)["path"] for line in out.read_text().splitlines()] == expected


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_a_reader_that_goes_away_ends_the_batch_quietly(cli, cache_env, tmp_path, fmt):
    # `gpudiag batch DIR | head -1`: status 141, as a command that SIGPIPE
    # ends, and nothing on stderr.
    logs = tmp_path / "many"
    logs.mkdir()
    examples = sorted(EXAMPLES.glob("*.log"))
    for i in range(3000):
        (logs / f"{i:05d}.log").write_bytes(examples[i % len(examples)].read_bytes())
    run = subprocess.Popen([cli, "batch", "--no-progress", "-f", fmt, str(logs)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=dict(cache_env, GPUDIAG_PYTHON=sys.executable))
    assert run.stdout.readline()
    run.stdout.close()
    stderr = run.stderr.read().decode()
    assert run.wait(timeout=120) == 141, stderr
    assert stderr == ""
