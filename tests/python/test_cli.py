import bz2
import gzip
import json
import lzma
import subprocess
import sys

from conftest import EXAMPLES


def run(cli, *args, input=None, env=None):
    return subprocess.run([cli, *args], input=input, capture_output=True, env=env, timeout=120)


def test_diagnose_text(cli, cache_env):
    r = run(cli, "diagnose", "--color", "never", str(EXAMPLES / "missing_module.log"), env=cache_env)
    out = r.stdout.decode()
    assert r.returncode == 0, r.stderr
    assert "missing_module" in out and "line 7: ModuleNotFoundError: No module named 'flash_attn'" in out
    assert "\x1b[" not in out


def test_diagnose_json_and_jsonl(cli, cache_env):
    files = [str(EXAMPLES / "cuda_oom_trainer.log"), str(EXAMPLES / "healthy_trainer.log")]
    docs = json.loads(run(cli, "diagnose", "--format", "json", *files, env=cache_env).stdout)
    assert [d["class"] for d in docs] == ["cuda_oom", "healthy"]
    assert docs[0]["path"] == files[0]
    assert docs[0]["evidence"][0]["values"]["requested"] == "3.91 GiB"
    lines = run(cli, "diagnose", "-f", "jsonl", *files, env=cache_env).stdout.decode().splitlines()
    assert [json.loads(x)["class"] for x in lines] == ["cuda_oom", "healthy"]


def test_stdin_and_negative_exit_code(cli, cache_env):
    r = run(cli, "diagnose", "--exit-code", "-9", "--format", "jsonl", "-", input=b"loading\n", env=cache_env)
    d = json.loads(r.stdout)
    assert (d["class"], d["exit_code"], d["path"]) == ("oom_killer", -9, "-")


def test_a_windows_exit_status_and_a_wrong_one(cli, cache_env):
    r = run(cli, "diagnose", "--exit-code", "3221225477", "-", input=b"loading\n", env=cache_env)
    assert r.returncode == 0
    assert "segfault" in r.stdout.decode()
    assert "exit code 3221225477 (0xC0000005, STATUS_ACCESS_VIOLATION: as SIGSEGV)" in r.stdout.decode()
    bad = run(cli, "diagnose", "--exit-code", "9x", "-", input=b"loading\n", env=cache_env)
    assert bad.returncode == 2
    assert "--exit-code takes an exit status such as -9, 137 or 3221225477, not '9x'" in bad.stderr.decode()


def test_unreadable_file_is_reported_and_the_rest_diagnosed(cli, cache_env, tmp_path):
    good = str(EXAMPLES / "segfault_srun.log")
    r = run(cli, "diagnose", "-f", "jsonl", str(tmp_path / "nope.log"), good, env=cache_env)
    assert r.returncode == 1
    assert "nope.log" in r.stderr.decode() and "No such file" in r.stderr.decode()
    docs = [json.loads(x) for x in r.stdout.decode().splitlines()]
    assert docs[0]["path"].endswith("nope.log") and "error" in docs[0]
    assert docs[1]["class"] == "segfault"


def test_inputs_as_they_are_found(cli, cache_env, tmp_path):
    """A directory, its globs, archives known by content and container records."""
    oom = (EXAMPLES / "cuda_oom_trainer.log").read_bytes()
    job = tmp_path / "job"
    (job / "rank0").mkdir(parents=True)
    (job / "rank1").mkdir()
    (job / "rank0" / "train.log.1").write_bytes(gzip.compress(oom))  # rotated: no .gz suffix
    (job / "rank1" / "train.log.bz2").write_bytes(bz2.compress(oom))
    (job / "rank1" / "train.log.xz").write_bytes(lzma.compress(oom))
    (job / "model.pt").write_bytes(b"PK\x03\x04\x00\x00weights")
    r = run(cli, "diagnose", "-f", "jsonl", str(job), env=cache_env)
    assert r.returncode == 0, r.stderr
    docs = [json.loads(x) for x in r.stdout.decode().splitlines()]
    assert [(d["path"][len(str(job)) + 1:], d["class"], d["input"]["compression"]) for d in docs] == [
        ("rank0/train.log.1", "cuda_oom", "gzip"), ("rank1/train.log.bz2", "cuda_oom", "bzip2"),
        ("rank1/train.log.xz", "cuda_oom", "xz")]
    assert "skipped 1 binary file" in r.stderr.decode()
    r = run(cli, "diagnose", "-f", "jsonl", "-g", "rank1/*", "-g", "!*.xz", str(job), env=cache_env)
    assert [json.loads(x)["path"] for x in r.stdout.decode().splitlines()] == [str(job / "rank1" / "train.log.bz2")]
    # Docker's json-file records, from standard input.
    records = b"".join(json.dumps({"log": line, "stream": "stderr", "time": "2026-11-23T10:00:00Z"}).encode() + b"\n"
                       for line in oom.decode().splitlines(keepends=True))
    d = json.loads(run(cli, "diagnose", "-f", "jsonl", "-", input=records, env=cache_env).stdout)
    plain = json.loads(run(cli, "diagnose", "-f", "jsonl", str(EXAMPLES / "cuda_oom_trainer.log"), env=cache_env).stdout)
    assert (d["class"], d["input"]["container"], d["evidence"][0]["line"]) == (
        "cuda_oom", "docker_json", plain["evidence"][0]["line"])


def test_a_damaged_archive_is_diagnosed_up_to_the_damage(cli, cache_env, tmp_path):
    lines = b"".join(b"step %d loss %.4f\n" % (i, 5 / i) for i in range(1, 40001))
    cut = tmp_path / "train.log.gz"
    stored = gzip.compress(lines)
    cut.write_bytes(stored[: len(stored) // 2])
    good = str(EXAMPLES / "segfault_srun.log")
    r = run(cli, "diagnose", "-f", "jsonl", str(cut), good, env=cache_env)
    assert r.returncode == 1
    assert f"{cut}: gzip data: the data ends mid-stream: the file is truncated" in r.stderr.decode()
    first, second = (json.loads(x) for x in r.stdout.decode().splitlines())
    assert first["input"]["damage_at"] == len(stored) // 2 and 0 < first["lines"] < 40000
    assert second["class"] == "segfault"
    text = run(cli, "diagnose", "--color", "never", str(cut), env=cache_env).stdout.decode()
    assert "  input\n    gzip data: the data ends mid-stream: the file is truncated (byte" in text


def test_a_size_limit_stops_reading_and_says_where(cli, cache_env, tmp_path):
    # /dev/zero never ends: it is read up to 1 GiB, or to --max-bytes.
    big = tmp_path / "train.log"
    big.write_bytes(b"".join(b"step %d loss %.4f\n" % (i, 5 / i) for i in range(1, 20001)) +
                    b"torch.OutOfMemoryError: CUDA out of memory.\n")
    good = str(EXAMPLES / "segfault_srun.log")
    r = run(cli, "diagnose", "--max-bytes", "64K", "-f", "jsonl", "/dev/zero", str(big), good, env=cache_env)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "/dev/zero: stopped at the size limit of 65536 bytes; diagnosed the 1 line before it" in err
    assert f"{big}: stopped at the size limit of 65536 bytes" in err
    zero, cut, whole = (json.loads(x) for x in r.stdout.decode().splitlines())
    assert zero["bytes"] == 65536 and zero["input"]["damage_at"] == 65536
    assert cut["bytes"] == 65536 and cut["class"] != "cuda_oom"  # the OOM lay past the limit
    assert whole["class"] == "segfault" and whole["input"]["damage"] is None
    unlimited = run(cli, "diagnose", "-f", "jsonl", "/dev/zero", env=cache_env)
    assert unlimited.returncode == 1 and json.loads(unlimited.stdout)["bytes"] == 1 << 30
    for bad in ("0", "x", "12Q", "99999999999T"):
        r = run(cli, "diagnose", "--max-bytes", bad, good, env=cache_env)
        assert r.returncode == 2 and f"--max-bytes takes a size such as" in r.stderr.decode(), bad


def test_usage_errors(cli, cache_env):
    assert run(cli, "diagnose", "--format", "xml", "x", env=cache_env).returncode == 2
    assert run(cli, "frobnicate", env=cache_env).returncode == 2
    r = run(cli, "diagnose", "--rules", "/nonexistent", "x", env=cache_env)
    assert r.returncode == 2 and b"/nonexistent" in r.stderr


def test_help_and_version(cli):
    h = run(cli, "--help").stdout.decode()
    assert "diagnose" in h and "rules" in h and "exit status" in h
    dh = run(cli, "diagnose", "--help").stdout.decode()
    assert "--exit-code" in dh and "--format" in dh and "JSON fields" in dh
    v = run(cli, "--version").stdout.decode()
    assert v.startswith("gpudiag ") and "Hyperscan" in v


def test_rules_list_and_check(cli, cache_env, tmp_path):
    listing = run(cli, "rules", "list", env=cache_env).stdout.decode()
    assert "cuda_oom.allocator" in listing and "earlier wins" in listing
    rules = json.loads(run(cli, "rules", "list", "--format", "json", env=cache_env).stdout)
    assert rules[0]["id"] == "cuda_oom.allocator" and rules[0]["role"] == "cause"

    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "a.json").write_text('{"rules": [{"id": "a", "class": "nccl", "patterns": ["x"]}]}')
    ok = run(cli, "rules", "check", str(tmp_path / "good"), env=cache_env)
    assert ok.returncode == 0 and b"ok: 1 rules" in ok.stdout
    assert b"one stream" not in ok.stdout
    # A pattern the layout lookup cannot hold to one line is named, with what in it.
    (tmp_path / "unicode").mkdir()
    (tmp_path / "unicode" / "u.json").write_text(
        '{"rules": [{"id": "u", "class": "nccl", "patterns": [{"regex": "caf\\u00e9", "flags": ["utf8"]}]}]}')
    one = run(cli, "rules", "check", str(tmp_path / "unicode"), env=cache_env)
    assert one.returncode == 0 and b"scanned as one stream" in one.stdout
    assert b"rule u, pattern 1" in one.stdout and b"utf8" in one.stdout, one.stdout
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "b.json").write_text('{"rules": [{"id": "b", "class": "nccl", "patterns": ["[z-a]"]}]}')
    bad = run(cli, "rules", "check", str(tmp_path / "bad"), env=cache_env)
    assert bad.returncode == 2
    assert b"b.json" in bad.stderr and b"rule b" in bad.stderr
    shipped = run(cli, "rules", "check", env=cache_env)
    assert shipped.returncode == 0 and b"examples in the shipped rules" in shipped.stdout
    assert b"no examples" not in shipped.stdout
    # Rules that $GPUDIAG_RULES puts in their place are named as what they are.
    instead = run(cli, "rules", "check", env={**cache_env, "GPUDIAG_RULES": str(tmp_path / "good")})
    assert instead.returncode == 0 and b"ok: 1 rules" in instead.stdout
    assert f"in {tmp_path / 'good'} ($GPUDIAG_RULES)".encode() in instead.stdout, instead.stdout


def test_failing_examples_exit_1_and_name_the_rule(cli, cache_env, tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({"rules": [{
        "id": "site.quota", "class": "permission", "patterns": ["Disk quota exceeded"],
        "examples": {"match": ["OSError: [Errno 122] Disk quota exceeded"],
                     "no_match": ["quota: Disk quota exceeded soon, 91% used"]}}]}))
    r = run(cli, "rules", "check", str(tmp_path), env=cache_env)
    assert r.returncode == 1 and b"failed: 1 rules" in r.stdout
    assert b"rule site.quota: a \"no_match\" example matches: quota: Disk" in r.stderr


def test_rules_that_do_not_load_are_status_2_in_every_command(cli, cache_env, tmp_path):
    (tmp_path / "b.json").write_text('{"rules": [{"id": "b", "class": "no_such_class", "patterns": ["x"]}]}')
    log = EXAMPLES / "missing_module.log"
    for args in (["diagnose", "--rules", str(tmp_path), str(log)], ["rules", "check", str(tmp_path)],
                 ["rules", "list", "--rules", str(tmp_path)], ["taxonomy", "--rules", str(tmp_path)]):
        r = run(cli, *args, env=cache_env)
        assert r.returncode == 2, args
        assert b"b.json: rule b: unknown class \"no_such_class\"" in r.stderr, args


def test_custom_rules_directory(cli, cache_env, tmp_path):
    (tmp_path / "r.json").write_text(
        '{"rules": [{"id": "site.quota", "class": "permission", "patterns": ["Disk quota exceeded"]}]}')
    r = run(cli, "diagnose", "-f", "jsonl", "--rules", str(tmp_path), "-", input=b"OSError: Disk quota exceeded\n",
            env=cache_env)
    assert json.loads(r.stdout)["evidence"][0]["rule"] == "site.quota"


def test_memory_stays_flat_on_a_large_file(cli, cache_env, tmp_path):
    big = tmp_path / "big.log"
    line = b"[rank0]: step 1 | loss 2.0 | lr 3e-4 | padding padding padding padding\n"
    with open(big, "wb") as f:
        for _ in range(40):
            f.write(line * 40_000)  # ~ 120 MB in all
        f.write(b"Segmentation fault (core dumped)\n")
    # Measured from a fresh interpreter: a child forked from this large test
    # process would inherit its resident pages until exec.
    probe = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], capture_output=True); "
             "sys.stdout.buffer.write(p.stdout); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    r = subprocess.run([sys.executable, "-c", probe, cli, "diagnose", "-f", "jsonl", str(big)],
                       capture_output=True, env=cache_env, timeout=120)
    out, peak_kib = r.stdout.decode().rsplit("\n", 2)[:2]
    assert json.loads(out)["class"] == "segfault"
    peak_mib = int(peak_kib) / 1024
    assert peak_mib < 64, f"gpudiag peaked at {peak_mib:.0f} MiB on a {big.stat().st_size >> 20} MiB log"


def test_every_bundled_example_reads_as_its_index_says(cli, cache_env):
    """The examples the README shows, healthy runs full of look-alikes among
    them, are diagnosed as corpus/examples/index.jsonl labels them."""
    root = EXAMPLES.parent.parent
    rows = [json.loads(x) for x in (EXAMPLES / "index.jsonl").read_text().splitlines() if x.strip()]
    assert any(r["id"] == "examples-healthy_lookalikes" for r in rows)
    for row in rows:
        args = ["diagnose", "--format", "json", str(root / row["log_path"])]
        if row["true_exit_code"] is not None:
            args[1:1] = ["--exit-code", str(row["true_exit_code"])]
        doc = json.loads(run(cli, *args, env=cache_env).stdout)[0]
        assert doc["class"] == row["class"], row["id"]
    lookalikes = json.loads(run(cli, "diagnose", "--format", "json", "--exit-code", "0",
                                str(EXAMPLES / "healthy_lookalikes.log"), env=cache_env).stdout)[0]
    logged = [f for f in lookalikes["findings"] if f["reason"] == "below_severity"]
    assert {f["class"] for f in logged} >= {"env_error", "file_not_found"}
    assert all(f["evidence"]["severity"] == "warning" for f in logged)


def test_a_job_directory_is_one_diagnosis(cli, cache_env, tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    (job / "rank0.log").write_text("2026-11-23 10:15:00,000 - ERROR - [Rank 0] Watchdog caught collective operation "
                                   "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                                   "Timeout(ms)=600000) ran for 600009 milliseconds before timing out.\n")
    (job / "rank1.log").write_text("2026-11-23 10:05:00,000 - ERROR - RuntimeError: CUDA error: an illegal memory "
                                   "access was encountered\n")
    r = run(cli, "diagnose", "--job", "-f", "jsonl", str(job), env=cache_env)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert (d["path"], d["class"], d["evidence"][0]["rank"], d["lines"]) == (str(job), "cuda_runtime", 1, 2)
    r = run(cli, "diagnose", "--job", str(job / "rank0.log"), env=cache_env)
    assert r.returncode == 2 and "--job takes directories" in r.stderr.decode()


def test_a_scheduler_record_decides_what_the_log_cannot(cli, cache_env, tmp_path):
    log = tmp_path / "train.log"
    log.write_text("step 100 loss 2.3\nstep 200 loss 2.1\n")
    record = tmp_path / "job.txt"
    record.write_text("JobId=4714782 JobName=train\n   JobState=NODE_FAIL Reason=None\n   ExitCode=0:9 "
                      "RunTime=00:42:10 TimeLimit=04:00:00\n   NodeList=gpu-[03-04]\n")
    r = run(cli, "diagnose", "-f", "jsonl", "--sacct", str(record), str(log), env=cache_env)
    d = json.loads(r.stdout)
    assert (d["class"], d["exit_code"], d["evidence"][0]["line"]) == ("node_failure", -9, 3)
    assert "JobState=NODE_FAIL" in d["evidence"][0]["text"]
    record.write_text("not a record\n")
    r = run(cli, "diagnose", "--sacct", str(record), str(log), env=cache_env)
    assert r.returncode == 2 and f"--sacct {record}: not a scheduler record" in r.stderr.decode()


def test_brief_format_is_one_grep_like_line_per_log(cli, cache_env, tmp_path):
    """Issue 18, point 7: PATH:LINE: CLASS (OWNER, CONFIDENCE): TEXT, a line a log."""
    oom, empty = EXAMPLES / "cuda_oom_trainer.log", tmp_path / "empty.log"
    empty.write_bytes(b"")
    r = run(cli, "diagnose", "--format", "brief", "--color", "never", str(oom), str(empty), env=cache_env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert len(lines) == 2
    d = json.loads(run(cli, "diagnose", "-f", "jsonl", str(oom), env=cache_env).stdout)
    deciding = d["evidence"][0]
    assert lines[0].startswith(f"{oom}:{deciding['line']}: cuda_oom (job, {d['confidence']:.2f}): ")
    assert lines[0].endswith("\u2026") and deciding["text"].startswith(lines[0].split("): ", 1)[1][:-1])
    assert lines[1] == f"{empty}: unknown (none, 0.00)"  # no line decided: no LINE, no TEXT


def test_stats_count_classes_and_owners_on_stderr(cli, cache_env, tmp_path):
    """Issue 18, point 7: --stats, like rg --stats, after the inputs, on stderr."""
    missing = tmp_path / "missing.log"
    r = run(cli, "diagnose", "-f", "brief", "--stats", str(EXAMPLES), str(missing), env=cache_env)
    assert r.returncode == 1
    err = r.stderr.decode()
    brief = r.stdout.decode().splitlines()
    classes = [line.split(": ", 2)[1].split(" (")[0] for line in brief]
    assert f"{len(brief) + 1} inputs: {len(brief)} diagnosed, 1 could not be read;" in err
    rows = dict(line.rsplit(None, 1) for line in err.splitlines()[1:] if line.split()[-1].isdigit())
    for cls in set(classes):
        assert int(rows[cls]) == classes.count(cls), (cls, err)
    owners = [line.split(" (")[1].split(",")[0] for line in brief]
    for owner in set(owners):
        assert int(rows[owner]) == owners.count(owner)
    assert "inputs:" not in r.stdout.decode()


def test_no_file_reads_a_pipe_but_not_a_terminal(cli, cache_env):
    """Issue 18, point 8: with no FILE, stdin is read when it is not a terminal."""
    log = (EXAMPLES / "segfault_srun.log").read_bytes()
    r = run(cli, "diagnose", "-f", "jsonl", input=log, env=cache_env)
    assert r.returncode == 0, r.stderr
    assert (json.loads(r.stdout)["class"], json.loads(r.stdout)["path"]) == ("segfault", "-")
    import os
    import pty
    leader, follower = pty.openpty()
    try:
        t = subprocess.run([cli, "diagnose"], stdin=follower, capture_output=True, env=cache_env, timeout=60)
    finally:
        os.close(leader)
        os.close(follower)
    assert t.returncode == 2 and b"no FILE given" in t.stderr


def test_diagnose_help_lists_every_json_field(cli):
    """Issue 18, point 9: the help lists each top-level field of the schema and
    names the nested ones users look for; options laid out as the top-level help."""
    schema = json.loads((EXAMPLES.parents[1] / "docs" / "diagnosis.schema.json").read_text())
    out = run(cli, "diagnose", "--help").stdout.decode()
    fields = out.split("JSON fields", 1)[1]
    for name in schema["properties"]:
        assert f"\n  {name} " in fields, name
    for nested in ("rank", "host", "severity", "series"):
        assert nested in fields
    assert "  -f, --format FORMAT" in out and "[ --" not in out
    assert all(len(line) <= 80 for line in out.splitlines())


def test_rules_check_status_and_rules_list_jsonl(cli, cache_env, tmp_path):
    """Issue 18, point 9: rules check exits 0 / 1 (an example fails) / 2 (rules
    do not load), as the README says; rules list --format jsonl."""
    assert run(cli, "rules", "check", env=cache_env).returncode == 0
    failing = tmp_path / "failing"
    failing.mkdir()
    (failing / "10-site.json").write_text(json.dumps({"rules": [{
        "id": "site.quota", "class": "env_error", "patterns": ["Disk quota exceeded"],
        "examples": {"match": ["nothing like it"]}}]}))
    r = run(cli, "rules", "check", str(failing), env=cache_env)
    assert r.returncode == 1, r.stderr
    assert b"site.quota" in r.stderr
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "10-site.json").write_text('{"rules": [')
    assert run(cli, "rules", "check", str(broken), env=cache_env).returncode == 2
    lines = run(cli, "rules", "list", "--format", "jsonl", env=cache_env).stdout.decode().splitlines()
    listed = json.loads(run(cli, "rules", "list", "--format", "json", env=cache_env).stdout)
    assert [json.loads(line) for line in lines] == listed and len(listed) > 50


def test_fail_on_gives_status_3_when_a_diagnosis_matches(cli, cache_env, tmp_path):
    """Issue 18, point 10: --fail-on owner:infra,class:cuda_oom exits 3 on a match,
    0 without one; an unknown field or value is a usage error (2)."""
    nccl, healthy = str(EXAMPLES / "nccl_timeout_rank3.log"), str(EXAMPLES / "healthy_trainer.log")
    assert run(cli, "diagnose", "--fail-on", "owner:infra,class:cuda_oom", healthy, nccl, env=cache_env).returncode == 3
    assert run(cli, "diagnose", "--fail-on", "owner:infra", "--fail-on", "class:cuda_oom", healthy,
               env=cache_env).returncode == 0
    assert run(cli, "diagnose", "--fail-on", "class:nccl_timeout", nccl, str(tmp_path / "gone.log"),
               env=cache_env).returncode == 3  # a match wins over an unreadable input
    typo = run(cli, "diagnose", "--fail-on", "class:cuda_om", healthy, env=cache_env)
    assert typo.returncode == 2 and b"no such class" in typo.stderr
    assert run(cli, "diagnose", "--fail-on", "infra", healthy, env=cache_env).returncode == 2


def test_the_exit_status_and_the_log_both_stay_when_they_disagree(cli, cache_env):
    """Issue 18, point 6: when the status and the log disagree, both stay in
    the verdict, the disagreement is a finding, and the verdict says which
    one decided and why."""
    healthy = str(EXAMPLES / "healthy_trainer.log")
    done = json.loads(run(cli, "diagnose", "-f", "jsonl", healthy, env=cache_env).stdout)
    completion = done["evidence"][0]
    killed = json.loads(run(cli, "diagnose", "-f", "jsonl", "--exit-code", "-9", healthy, env=cache_env).stdout)
    assert killed["class"] == "oom_killer"  # the status decided ...
    assert any(s.startswith(f"line {completion['line']}: ") for s in killed["verdict"]["shows"])  # ... the log stays
    assert any("the exit status decided" in s for s in killed["verdict"]["shows"])
    [f] = [f for f in killed["findings"] if f["kind"] == "exit_code"]
    assert (f["reason"], f["class"], f["line"]) == ("completed_before_exit", "healthy", completion["line"])
    assert "came after its last one" in f["message"]

    oom = str(EXAMPLES / "cuda_oom_trainer.log")
    clean = json.loads(run(cli, "diagnose", "-f", "jsonl", "--exit-code", "0", oom, env=cache_env).stdout)
    assert clean["class"] == "cuda_oom"  # the log decided ...
    assert "exit code 0" not in clean["verdict"]["shows"]  # ... not as support
    assert "exit code 0, which the log's evidence outweighs" in clean["verdict"]["shows"]
    [f] = [f for f in clean["findings"] if f["kind"] == "exit_code"]
    assert (f["reason"], f["class"]) == ("exit_code_disagrees", None)
    assert "the log's evidence was preferred" in f["message"]
    agreeing = json.loads(run(cli, "diagnose", "-f", "jsonl", "--exit-code", "0", healthy, env=cache_env).stdout)
    assert not [f for f in agreeing["findings"] if f["kind"] == "exit_code"]
