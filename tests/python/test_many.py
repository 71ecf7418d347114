"""Many logs at once: diagnose_many, to_frame, the plots and the notebook example."""

import gzip
import json
import os
import shutil
import subprocess
import sys

import matplotlib
import pytest

import gpudiag
from conftest import EXAMPLES, ROOT

matplotlib.use("Agg")


@pytest.fixture()
def logs(tmp_path):
    """The bundled examples, one of them gzip-compressed, and a checkpoint beside them."""
    root = tmp_path / "logs"
    shutil.copytree(EXAMPLES, root)
    oom = root / "cuda_oom_trainer.log"
    (root / "rank3").mkdir()
    (root / "rank3" / "cuda_oom_trainer.log.gz").write_bytes(gzip.compress(oom.read_bytes()))
    (root / "model.pt").write_bytes(b"PK\x03\x04\x00\x00weights")
    return root


def test_a_directory_is_diagnosed_in_path_order_as_one_by_one(logs):
    results = gpudiag.diagnose_many(logs, jobs=4, progress=False)
    files = sorted(p for p in logs.rglob("*") if p.is_file() and p.name != "model.pt")
    assert [r.path for r in results] == [str(p) for p in files]
    one_by_one = [gpudiag.diagnose(p) for p in files]
    assert [r.to_json() for r in results] == [d.to_json() for d in one_by_one]
    packed = str(logs / "rank3" / "cuda_oom_trainer.log.gz")
    assert [(r.class_, r.input.compression) for r in results if r.path == packed] == [("cuda_oom", "gzip")]
    assert [r.path for r in gpudiag.diagnose_many(logs, glob=["*.gz"], progress=False)] == [packed]


def test_a_manifest_gives_paths_and_exit_codes_and_bad_rows_are_named(logs, tmp_path):
    csv_manifest = tmp_path / "jobs.csv"
    csv_manifest.write_text("path,exit_code,job_id\n"
                            "logs/stopped_without_a_cause.log,137,17\n"
                            "logs/missing.log,,18\n"
                            "logs/segfault_srun.log,,19\n")
    results = gpudiag.diagnose_many(csv_manifest, progress=False)
    assert results[0].exit_code == 137 and results[0].class_ == "oom_killer"
    assert isinstance(results[1], gpudiag.InputFailure)
    assert results[1].path == str(tmp_path / "logs" / "missing.log") and "No such file" in results[1].error
    assert results[2].class_ == "segfault"
    jsonl = tmp_path / "jobs.jsonl"
    jsonl.write_text("".join(json.dumps({"path": f"logs/{n}", "exit_code": c}) + "\n"
                             for n, c in [("missing_module.log", 1), ("healthy_trainer.log", 0)]))
    assert [r.class_ for r in gpudiag.diagnose_many(jsonl, jobs=1, progress=False)] == ["missing_module", "healthy"]
    jsonl.write_text('{"path": "logs/segfault_srun.log"}\n{"exit_code": 1}\n')
    with pytest.raises(ValueError, match=r"jobs.jsonl: row 2 has no 'path'"):
        gpudiag.diagnose_many(jsonl)
    csv_manifest.write_text("path,exit_code\nlogs/segfault_srun.log,killed\n")
    with pytest.raises(ValueError, match=r"row 1: exit_code 'killed' is not an integer"):
        gpudiag.diagnose_many(csv_manifest)
    with pytest.raises(ValueError, match="neither a directory nor a manifest"):
        gpudiag.diagnose_many(tmp_path / "logs" / "segfault_srun.log")


def test_a_list_of_paths_bytes_and_pairs(logs):
    oom = (logs / "cuda_oom_trainer.log").read_bytes()
    results = gpudiag.diagnose_many([str(logs / "segfault_srun.log"), oom, (b"loading\n", -9), 42],
                                    exit_code=1, progress=False)
    assert [getattr(r, "class_", None) for r in results] == ["segfault", "cuda_oom", "oom_killer", None]
    assert results[1].exit_code == 1 and results[2].exit_code == -9
    assert isinstance(results[3], gpudiag.InputFailure) and "not int" in results[3].error
    # A str in a (source, exit_code) pair is a path, as it is alone.
    (paired,) = gpudiag.diagnose_many([(str(logs / "segfault_srun.log"), 139)], progress=False)
    assert (paired.path, paired.class_, paired.exit_code) == (str(logs / "segfault_srun.log"), "segfault", 139)


def test_many_more_logs_than_are_held_at_once_come_in_order(logs):
    # The native threads hold a few hundred results ahead of the reader; more
    # inputs than that, unreadable ones among them, still come in input order.
    files = sorted(p for p in logs.rglob("*.log") if p.is_file())
    sources = [str(files[i % len(files)]) if i % 97 else str(logs / f"missing-{i}.log") for i in range(1500)]
    results = gpudiag.diagnose_many(sources, jobs=3, progress=False)
    expected = {str(p): gpudiag.diagnose(p).to_json() for p in files}
    assert len(results) == len(sources)
    for source, result in zip(sources, results):
        if source in expected:
            assert not isinstance(result, gpudiag.InputFailure), result
            assert result.to_json() == expected[source]
        else:
            assert isinstance(result, gpudiag.InputFailure) and result.path == source
            assert "No such file" in result.error


def test_a_run_left_early_stops_its_threads(logs):
    from gpudiag._many import files_in_order
    tasks = [(p, None, None) for p in sorted(logs.rglob("*.log"))] * 400
    threads_before = len(os.listdir("/proc/self/task"))
    results = files_in_order(tasks, 3, None)
    first, _ = next(results)
    assert first.path == str(tasks[0][0])
    assert len(os.listdir("/proc/self/task")) > threads_before
    results.close()  # as a loop left with break, or an exception in it
    assert len(os.listdir("/proc/self/task")) == threads_before


def test_to_frame_has_one_row_per_log(logs):
    results = gpudiag.diagnose_many([logs / "nccl_timeout_rank3.log", logs / "nope.log"], progress=False)
    frame = gpudiag.to_frame(results)
    assert list(frame.columns[:6]) == ["path", "class", "g15", "owner", "family", "confidence"]
    first = frame.iloc[0]
    d = results[0]
    assert (first["class"], first["owner"], first["evidence_line"], first["steps"], first["last_loss"]) == (
        d.class_, d.owner, d.evidence[0].line, d.trajectory.max_step, d.trajectory.last.loss)
    assert first["rank"] == d.evidence[0].rank
    assert frame["class"].isna().tolist() == [False, True] and "No such file" in frame.iloc[1]["error"]
    assert str(frame["steps"].dtype) == "Int64"


def test_plots_draw_the_trajectory_and_the_class_counts(logs):
    d = gpudiag.diagnose(logs / "nccl_timeout_rank3.log")
    ax = d.plot()
    lines = ax.get_lines()
    assert len(lines[0].get_xdata()) == len(d.trajectory.series)
    marker = [line for line in lines if line.get_label().startswith("line ")]
    assert marker and marker[0].get_label() == f"line {d.evidence[0].line}: nccl_timeout"
    assert marker[0].get_xdata()[0] == d.trajectory.last.step
    ax = gpudiag.plot_classes(gpudiag.diagnose_many(logs, progress=False))
    assert sorted(t.get_text() for t in ax.get_yticklabels()) == sorted(
        {"cuda_oom", "healthy", "missing_module", "nccl_timeout", "oom_killer", "segfault", "unknown"})


def test_progress_bar_on_request(logs, capsys):
    gpudiag.diagnose_many(logs, progress=True)
    err = capsys.readouterr().err
    total = len([p for p in logs.rglob("*") if p.is_file()]) - 1  # not the checkpoint
    assert "diagnose" in err and f"{total}/{total}" in err


def test_the_notebook_example_runs(tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg")
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "notebook.py")], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "nccl_timeout" in r.stdout and "infra" in r.stdout
    assert (tmp_path / "classes.png").stat().st_size > 0
    assert (tmp_path / "trajectory.png").stat().st_size > 0


def _job(root):
    """Four ranks' logs, timed, untagged: rank 2 runs out of memory first; in
    file order, rank 0's collective timeout comes first."""
    root.mkdir()
    for rank in range(4):
        lines = [f"2026-11-23 10:0{m}:00,000 - INFO - step {m * 100} loss {5 - m / 2}" for m in range(5)]
        if rank == 2:
            lines.append("2026-11-23 10:05:00,000 - ERROR - torch.OutOfMemoryError: CUDA out of memory. "
                         "Tried to allocate 2.00 GiB. GPU 2 has a total capacity of 79.15 GiB of which 1.20 GiB is free.")
        else:
            lines.append(f"2026-11-23 10:15:00,000 - ERROR - [Rank {rank}] Watchdog caught collective operation "
                         "timeout: WorkNCCL(SeqNum=512, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                         "Timeout(ms)=600000) ran for 600009 milliseconds before timing out.")
        (root / f"4714782-{rank}.out").write_text("\n".join(lines) + "\n")
    return root


def test_a_job_is_one_diagnosis_over_one_timeline(tmp_path):
    root = _job(tmp_path / "job")
    d = gpudiag.diagnose_job(root)
    assert (d.path, d.class_, d.evidence[0].rank) == (str(root), "cuda_oom", 2)
    assert d.evidence[0].text.startswith("[rank2]: 2026-11-23 10:05:00")
    assert gpudiag.diagnose_job(sorted(root.iterdir())).class_ == "cuda_oom"
    joined = b"".join(p.read_bytes() for p in sorted(root.iterdir()))
    assert gpudiag.diagnose(joined).class_ != "cuda_oom"  # the files one after another
    with pytest.raises(gpudiag.InputError, match="no log files"):
        gpudiag.diagnose_job(root, glob=["*.nothing"])


def test_a_manifest_names_each_jobs_scheduler_record(tmp_path):
    (tmp_path / "a.log").write_text("step 100 loss 2.3\nstep 200 loss 2.1\n")
    (tmp_path / "a.sacct").write_text(json.dumps({"jobs": [{"job_id": 7, "state": {"current": ["TIMEOUT"]},
                                                            "exit_code": {"return_code": 0, "signal": {"id": 15}}}]}))
    (tmp_path / "b.log").write_text("step 100 loss 2.3\n")
    manifest = tmp_path / "jobs.jsonl"
    manifest.write_text('{"path": "a.log", "sacct": "a.sacct"}\n{"path": "b.log"}\n')
    a, b = gpudiag.diagnose_many(manifest, progress=False)
    assert (a.class_, a.exit_code, b.class_) == ("timeout", -15, "unknown")
    assert gpudiag.diagnose(tmp_path / "a.log", scheduler=tmp_path / "a.sacct").class_ == "timeout"
    with pytest.raises(gpudiag.InputError, match="not a scheduler record"):
        gpudiag.diagnose(tmp_path / "a.log", scheduler=tmp_path / "b.log")
