import errno
import gzip
import importlib.resources
import os
import pathlib
import resource
import threading
import time

import json
import lzma
import math

import pytest

import gpudiag

OOM = (b"Traceback (most recent call last):\n"
       b"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB "
       b"(GPU 0; 31.74 GiB total capacity; 30.9 GiB already allocated; 1.44 GiB free; "
       b"30.9 GiB reserved in total by PyTorch)\n")


def test_bytes_str_path_and_buffers_agree(tmp_path):
    p = tmp_path / "run.log"
    p.write_bytes(OOM)
    results = [gpudiag.diagnose(OOM), gpudiag.diagnose_text(OOM.decode()), gpudiag.diagnose(p),
               gpudiag.diagnose(bytearray(OOM)), gpudiag.diagnose(memoryview(OOM)), gpudiag.diagnose(str(p))]
    for d in results:
        assert d.class_ == "cuda_oom"
        assert d.g15 == "cuda_oom"
        assert d.owner == "job"
        assert d.evidence[0].line == 2
        assert d.evidence[0].values["requested"] == "8.00 GiB"
    assert results[2].path == results[5].path == str(p)
    assert results[0].path is results[1].path is None


def test_compressed_and_container_inputs_read_as_their_text(tmp_path):
    log = b"step 1 loss 2.0\nRuntimeError: CUDA error: device-side assert triggered\n"
    plain = gpudiag.diagnose(log)
    assert (plain.input.compression, plain.input.container, plain.input.damage, plain.input.damage_at) == (
        None, None, None, None)
    packed = gzip.compress(log)
    (tmp_path / "a.log.gz").write_bytes(packed)
    for d in (gpudiag.diagnose(packed), gpudiag.diagnose(tmp_path / "a.log.gz")):
        assert (d.class_, d.lines, d.input.compression) == (plain.class_, plain.lines, "gzip")
    cri = b"".join(b"2026-11-23T10:00:00.123Z stderr F " + line + b"\n" for line in log.splitlines())
    d = gpudiag.diagnose(lzma.compress(cri))
    assert (d.class_, d.input.compression, d.input.container) == ("cuda_runtime", "xz", "cri")
    cut = gpudiag.diagnose(packed[:-6])  # the trailer lost
    assert cut.input.damage == "the data ends mid-stream: the file is truncated"
    assert cut.input.damage_at == len(packed) - 6
    assert cut.to_dict()["input"] == {"compression": "gzip", "container": None, "encoding": None,
                                      "damage": cut.input.damage, "damage_at": len(packed) - 6}



def test_a_utf16_log_reads_as_its_text(tmp_path):
    # Windows PowerShell 5 redirects a command's output as UTF-16LE with a mark.
    log = "step 10 loss 2.31\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    path = tmp_path / "train.log"
    path.write_bytes(log.encode("utf-16"))
    d = gpudiag.diagnose(path)
    assert (d.class_, d.input.encoding) == ("cuda_oom", "utf-16le" if log.encode("utf-16")[:2] == b"\xff\xfe"
                                             else "utf-16be")
    assert d.evidence[0].text.startswith("torch.OutOfMemoryError")
    assert gpudiag.Diagnosis.from_dict(d.to_dict()).input.encoding == d.input.encoding
    assert gpudiag.diagnose(log.encode()).input.encoding is None

def test_a_size_limit_stops_reading(tmp_path):
    log = b"".join(b"step %d loss %.4f\n" % (i, 5 / i) for i in range(1, 2001)) + b"Segmentation fault\n"
    (tmp_path / "train.log").write_bytes(log)
    for source in (log, tmp_path / "train.log"):
        d = gpudiag.diagnose(source, max_bytes=4096)
        assert (d.bytes, d.input.damage_at) == (4096, 4096) and d.class_ != "segfault"
        assert d.input.damage == "stopped at the size limit of 4096 bytes"
        assert gpudiag.diagnose(source).class_ == "segfault"
    # A device that never ends is read up to 1 GiB without a limit.
    assert gpudiag.diagnose(pathlib.Path("/dev/zero"), max_bytes=1000).bytes == 1000
    assert gpudiag.diagnose(pathlib.Path("/dev/zero")).bytes == 1 << 30
    with pytest.raises(ValueError, match="max_bytes must be a positive number"):
        gpudiag.diagnose(log, max_bytes=0)


def test_diagnosis_attributes_and_verdict_quote_the_evidence():
    d = gpudiag.diagnose(OOM, exit_code=1)
    ev = d.evidence[0]
    assert ev.rule == "cuda_oom.allocator" and ev.class_ == "cuda_oom"
    assert ev.offset == OOM.index(b"torch.cuda")
    assert ev.text.startswith("torch.cuda.OutOfMemoryError")
    assert d.verdict.shows[0].startswith(f"line 2: {ev.text}")
    assert "requested 8.00 GiB" in d.verdict.shows[0]
    assert any("Owner: job" in s for s in d.verdict.implies)
    assert d.verdict.cannot_decide
    assert d.exit_code == 1 and d.lines == 2 and d.bytes == len(OOM)
    assert 0.5 < d.confidence < 1.0


def test_exit_code_is_evidence():
    assert gpudiag.diagnose(b"loading\n", exit_code=-9).class_ == "oom_killer"
    assert gpudiag.diagnose(b"loading\n", exit_code=-11).class_ == "segfault"
    assert gpudiag.diagnose(b"loading\n").class_ == "unknown"


def test_a_windows_exit_status_is_read_as_windows_keeps_it():
    # Python prints 0xC0000005, an access violation, unsigned; cmd signed.
    for code in (3221225477, -1073741819):
        d = gpudiag.diagnose(b"loading\n", exit_code=code)
        assert (d.class_, d.exit_code) == ("segfault", -1073741819)
    assert gpudiag.diagnose(b"loading\n", exit_code=0xC000013A).class_ == "cancelled"  # Ctrl-C
    with pytest.raises(ValueError, match="no exit status"):
        gpudiag.diagnose(b"loading\n", exit_code=2**32)
    with pytest.raises(ValueError, match=r"diagnose_many\(\): exit_code 1099511627776"):
        gpudiag.diagnose_many([("x.log", 2**40)])


def test_to_dict_is_the_cli_json():
    d = gpudiag.diagnose(OOM)
    assert d.to_dict() == json.loads(d.to_json())
    assert d.to_dict()["evidence"][0]["class"] == d.evidence[0].class_ == "cuda_oom"


SUMMARY = b"""[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2026-11-22_09:37:26
  host      : node-7
  rank      : 0 (local_rank: 0)
  exitcode  : -15 (pid: 9305)
  error_file: <N/A>
  traceback : Signal 15 (SIGTERM) received by PID 9305
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-11-22_09:37:25
  host      : node-7
  rank      : 1 (local_rank: 1)
  exitcode  : 1 (pid: 9306)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
"""


def other_worker(d):
    return d.launcher.other_failures[0]


def test_launcher_summary_is_read_per_rank():
    d = gpudiag.diagnose(SUMMARY)
    assert d.class_ == "cuda_oom"
    r = d.launcher
    root = r.root_cause
    assert (root.rank, root.local_rank, root.host, root.time, root.exit_code, root.signal,
            root.signal_name, root.line) == (1, 1, "node-7", "2026-11-22_09:37:25", 1, None, None, 17)
    assert root == d.launcher.root_cause and root != other_worker(d)
    assert r.other_failure_count == 1
    (other,) = r.other_failures
    assert (other.rank, other.exit_code, other.signal, other.signal_name) == (0, -15, 15, "SIGTERM")
    assert any("launcher's summary names rank 1 on node-7" in s for s in d.verdict.shows)
    assert json.loads(d.to_json()) == d.to_dict()
    assert gpudiag.diagnose(b"no summary here\n").launcher is None


def test_trajectory_is_read_and_matches_the_cli_json():
    log = "".join(f"step {s} loss {8.0 / s:.4f}\n" for s in range(1, 201, 10)) + "step 201 loss nan\n"
    d = gpudiag.diagnose(log.encode())
    assert d.class_ == "nan_loss"
    t = d.trajectory
    assert t.shape == "non_finite" and t.readings == 21
    assert t.first.step == 1 and t.first.loss == 8.0 and t.first.step_reported
    assert t.first_non_finite.line == 21
    assert len(t.series) == 21 and math.isnan(t.series[-1][1])  # every reading, the NaN at its step
    on_the_wire = json.loads(d.to_json())
    assert on_the_wire == d.to_dict()
    assert on_the_wire["trajectory"]["first_non_finite"]["loss"] == "nan"


def test_series_by_kind_and_throughput_findings():
    log = ("CUDA_LAUNCH_BLOCKING=1\n"
           + "".join(f"step {s} loss {8.0 / s:.4f} | lr {1e-3 / s:.3e} | grad_norm {s / 10:.2f} | dt: 250ms"
                     f" | tok/sec: {4000 + s}\n"
                     + (f"step {s} eval_loss {9.0 / s:.4f}\n" if s % 50 == 1 else "")
                     for s in range(1, 201, 10))
           + "training complete\n")
    d = gpudiag.diagnose(log.encode(), exit_code=0)
    assert d.class_ == "healthy"
    t = d.trajectory
    e = t.evaluation
    assert e.readings == 4 and e.first.value == 9.0 and e.last.step == 151
    assert [s for s, _ in e.series] == [1, 51, 101, 151]
    assert t.readings == 20  # no evaluation among the training readings
    assert t.learning_rate.readings == 20 and t.learning_rate.peak.value == 1e-3 and t.learning_rate.peak.step == 1
    assert t.grad_norm.lowest.value == 0.1 and t.grad_norm.last.value == 19.1
    assert t.step_time.readings == 20 and t.step_time.first.value == 0.25
    assert t.loss_scale.readings == 0 and t.loss_scale.first is None
    assert t.throughput.readings == 20 and t.throughput.peak.value == 4191
    again = gpudiag.diagnose(log.encode(), exit_code=0).trajectory
    assert again == t and again.grad_norm == t.grad_norm and repr(t.step_time.first).startswith("Reading(step=1")
    (f,) = [f for f in d.findings if f.kind == "throughput"]
    assert (f.reason, f.class_, f.line) == ("launch_blocking", None, 1)
    wire = d.to_dict()
    assert wire["trajectory"]["evaluation"]["readings"] == 4
    assert [x["class"] for x in wire["findings"] if x["kind"] == "throughput"] == [None]


def test_rank_of_evidence():
    d = gpudiag.diagnose(b"[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert d.evidence[0].rank == 3 and d.evidence[0].host is None


def test_str_and_html():
    d = gpudiag.diagnose(b"PermissionError: [Errno 13] Permission denied: '<b>/x</b>'\n")
    assert "permission" in str(d) and "line 1:" in str(d)
    html = d._repr_html_()
    assert "&lt;b&gt;/x&lt;/b&gt;" in html and "<b>/x</b>" not in html
    assert "permission" in html


def test_a_str_is_a_path_and_text_has_its_own_entry_point(tmp_path):
    """Issue 18, point 2: a str or os.PathLike is a path, as open() takes it; a
    missing one raises FileNotFoundError; text goes through diagnose_text."""
    p = tmp_path / "run.log"
    p.write_bytes(OOM)
    for source in (str(p), p, os.fsencode(str(p)).decode()):
        d = gpudiag.diagnose(source)
        assert (d.class_, d.path) == ("cuda_oom", str(p))
    with pytest.raises(FileNotFoundError) as missing:
        gpudiag.diagnose(str(tmp_path / "nope.log"))
    assert missing.value.filename == str(tmp_path / "nope.log") and missing.value.errno == errno.ENOENT
    with pytest.raises(FileNotFoundError, match=r"diagnose_text\(\)"):
        gpudiag.diagnose(OOM.decode())  # text passed where a path goes: told where text goes
    assert gpudiag.diagnose_text(OOM.decode()).class_ == "cuda_oom"
    with pytest.raises(TypeError, match="takes the log as str"):
        gpudiag.diagnose_text(OOM)  # type: ignore[arg-type]


def test_wrong_argument_types_get_one_line():
    """Issue 18, point 2: a wrong type names the argument in one line, not
    pybind11's overload dump with the native signature."""
    cases = [(dict(exit_code="137"), "exit_code must be an int such as -9 or 137, not str '137'"),
             (dict(exit_code=1.5), "exit_code must be an int"),
             (dict(rules="rules/"), "rules must be a gpudiag.RuleSet"),
             (dict(scheduler=7), "scheduler must be the path"),
             (dict(text_cap="big"), "text_cap must be a positive int")]
    for kwargs, message in cases:
        with pytest.raises(TypeError) as e:
            gpudiag.diagnose(OOM, **kwargs)
        text = str(e.value)
        assert message in text and "\n" not in text and "_core" not in text and "0x" not in text, text
    with pytest.raises(TypeError, match="takes a path .str or os.PathLike. or the log's bytes, not int"):
        gpudiag.diagnose(12)  # type: ignore[arg-type]


def test_bad_inputs():
    with pytest.raises(FileNotFoundError, match="missing.log"):
        gpudiag.diagnose(pathlib.Path("/nonexistent/missing.log"))
    with pytest.raises(gpudiag.InputError, match="is a directory"):
        gpudiag.diagnose(pathlib.Path("/"))


def test_ruleset_inspection_and_custom_rules(tmp_path):
    rules = gpudiag.RuleSet()
    assert len(rules) > 15 and rules.origin == "builtin"
    assert rules["cuda_oom.allocator"].class_ == "cuda_oom"
    assert [r.id for r in rules][0] == rules.rules[0].id
    (tmp_path / "r.json").write_text(
        '{"rules": [{"id": "mine", "class": "data_error", "patterns": ["bad record \\\\d+"]}]}')
    mine = gpudiag.RuleSet(tmp_path, cache=False)
    assert mine.origin == str(tmp_path) and mine.cache_outcome == "disabled"
    d = gpudiag.diagnose(b"ok\nbad record 17\n", rules=mine)
    assert d.class_ == "data_error" and d.evidence[0].rule == "mine"


def test_rule_errors_name_file_rule_and_problem(tmp_path):
    (tmp_path / "r.json").write_text(
        '{"rules": [{"id": "broken", "class": "nccl", "patterns": ["(open"]}]}')
    with pytest.raises(gpudiag.RuleError) as e:
        gpudiag.RuleSet(tmp_path)
    msg = str(e.value)
    assert "r.json" in msg and "broken" in msg and "Missing close parenthesis" in msg


def test_cache_dir_is_used(tmp_path):
    rules_dir, cache_dir = tmp_path / "rules", tmp_path / "cache"
    rules_dir.mkdir()
    (rules_dir / "r.json").write_text(
        '{"rules": [{"id": "mine", "class": "data_error", "patterns": ["bad record \\\\d+"]}]}')
    first = gpudiag.RuleSet(rules_dir, cache_dir=cache_dir)
    second = gpudiag.RuleSet(rules_dir, cache_dir=cache_dir)
    assert first.cache_outcome == "compiled and stored"
    assert second.cache_outcome == "hit"
    cache_file = pathlib.Path(first.cache_file)
    assert cache_file.parent == cache_dir and cache_file.exists()
    # Named by the rules and by what this CPU's databases are built for.
    assert cache_file.name.startswith(first.digest + "-") and cache_file.suffix == ".hsdb"


def test_shipped_rules_come_compiled_with_the_library(tmp_path):
    # The first run on a machine compiles nothing and writes no cache.
    shipped = gpudiag.RuleSet(cache_dir=tmp_path / "cache")
    assert shipped.cache_outcome == "built in" and shipped.cache_file == ""
    assert not (tmp_path / "cache").exists()
    assert gpudiag.diagnose(b"torch.OutOfMemoryError: CUDA out of memory.\n", rules=shipped).class_ == "cuda_oom"


def test_taxonomy_lists_every_class_once():
    classes = gpudiag.taxonomy()
    ids = [c.id for c in classes]
    assert len(ids) == len(set(ids)) and {"healthy", "unknown", "cuda_oom"} <= set(ids)
    assert all(c.owner in {"job", "infra", "scheduler", "none"} for c in classes)
    assert sum(c.outcome == "undetermined" for c in classes) == 1
    assert gpudiag.RuleSet().classes == classes


def test_gil_is_released_while_scanning():
    big = b"step 1 | loss 2.0 | lr 3e-4 | some padding to make lines realistic\n" * 4_000_000
    done = threading.Event()
    ticks = 0

    def scan():
        gpudiag.diagnose(big)
        done.set()

    t = threading.Thread(target=scan)
    start = time.perf_counter()
    t.start()
    time.sleep(0.01)
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    elapsed = time.perf_counter() - start
    assert elapsed > 0.1, "scan too short to tell"
    # With the GIL held for the whole scan this thread could not run at all.
    assert ticks >= 10


def test_large_buffer_is_not_copied():
    big = bytearray(b"x" * 79 + b"\n") * 4_000_000  # 320 MB
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    d = gpudiag.diagnose(big)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert d.lines == 4_000_000
    assert grown_mib < 64, f"peak memory grew by {grown_mib:.0f} MiB for a 320 MB buffer"


def test_type_stubs_ship_with_the_package():
    files = importlib.resources.files("gpudiag")
    assert files.joinpath("py.typed").is_file()
    assert files.joinpath("_core.pyi").is_file()
