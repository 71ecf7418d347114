"""Inputs a batch over a cluster's logs meets sooner or later, from the command
line and from Python: each gets a message naming the input and the problem,
the right exit status, bounded time and memory, and the rest of the batch
goes on."""

import json
import os
import pathlib
import resource
import signal
import subprocess
import threading
import time

import gpudiag

from conftest import EXAMPLES

SEGFAULT = str(EXAMPLES / "segfault_srun.log")


def run(cli, *args, env=None, **kwargs):
    return subprocess.run([cli, *args], capture_output=True, env=env, timeout=120, **kwargs)


def jsonl(stdout: bytes):
    return [json.loads(line) for line in stdout.decode().splitlines()]


def test_a_line_of_two_gigabytes_costs_bounded_memory(cli, cache_env):
    # /dev/zero is one line without a newline: 2 GiB of it, read to the end
    # with the process's data capped at 64 MiB (an allocation past it fails).
    def capped():
        resource.setrlimit(resource.RLIMIT_DATA, (64 << 20, 64 << 20))

    start = time.monotonic()
    r = run(cli, "diagnose", "--max-bytes", "2G", "-f", "jsonl", "/dev/zero", env=cache_env, preexec_fn=capped)
    took = time.monotonic() - start
    d = json.loads(r.stdout)
    assert r.returncode == 1 and d["bytes"] == 2 << 30 and d["lines"] == 1, r.stderr
    assert b"/dev/zero: stopped at the size limit of 2147483648 bytes" in r.stderr
    assert took < 60
    # The cap holds: the same command fails when given far less.
    tight = run(cli, "diagnose", "-f", "jsonl", "/dev/zero", env=cache_env,
                preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_DATA, (1 << 20, 1 << 20)))
    assert tight.returncode != 0


def test_a_long_line_in_a_job_costs_bounded_memory(cli, cache_env, tmp_path):
    # Merging a job's files reads them line by line: a 96 MiB line is taken a
    # piece at a time, under the same 64 MiB data limit.
    job = tmp_path / "4714782"
    job.mkdir()
    with open(job / "rank0.log", "wb") as f:
        f.write(b"x" * (96 << 20) + b"\nSegmentation fault\n")
    (job / "rank1.log").write_bytes(b"step 1 loss 2.0\n")

    def capped():
        resource.setrlimit(resource.RLIMIT_DATA, (64 << 20, 64 << 20))

    r = run(cli, "diagnose", "-f", "jsonl", "--job", str(job), env=cache_env, preexec_fn=capped)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["class"] == "segfault"


def test_peak_memory_of_a_long_line_from_python():
    # The same bound in-process: the line is cut into pieces, never held whole.
    d = gpudiag.diagnose(pathlib.Path("/dev/zero"), max_bytes=256 << 20)
    assert d.bytes == 256 << 20 and d.lines == 1


def test_binary_nul_and_invalid_utf8_inputs_are_diagnosed_as_text(cli, cache_env, tmp_path):
    blob = tmp_path / "model.bin"
    blob.write_bytes(bytes(range(256)) * 64)
    mixed = tmp_path / "mixed.log"
    mixed.write_bytes(b"\x00\x00step 1 loss 2.0\n\xff\xfe\xc3(Segmentation fault\x00\n")
    r = run(cli, "diagnose", "-f", "jsonl", str(blob), str(mixed), env=cache_env)
    assert r.returncode == 0, r.stderr
    first, second = jsonl(r.stdout)
    assert first["path"] == str(blob) and second["class"] == "segfault"
    assert "\ufffd" in second["verdict"]["shows"][0]  # invalid bytes shown, JSON still valid
    assert gpudiag.diagnose(mixed.read_bytes()).class_ == "segfault"


def test_line_endings_crlf_and_lone_carriage_returns(cli, cache_env, tmp_path):
    crlf = tmp_path / "crlf.log"
    crlf.write_bytes(b"step 1 loss 2.0\r\nSegmentation fault\r\n")
    bars = tmp_path / "bars.log"
    bars.write_bytes(b"1/10 [00:01, loss=2.5]\r2/10 [00:02, loss=2.4]\rSegmentation fault\n")
    r = run(cli, "diagnose", "-f", "jsonl", str(crlf), str(bars), env=cache_env)
    a, b = jsonl(r.stdout)
    assert a["class"] == b["class"] == "segfault"
    assert a["evidence"][0]["text"] == "Segmentation fault"  # no \r kept


def test_empty_files_directories_and_unreadable_files(cli, cache_env, tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    locked = tmp_path / "locked.log"
    locked.write_bytes(b"Killed\n")
    locked.chmod(0)
    readable = os.access(locked, os.R_OK)  # root reads it anyway
    r = run(cli, "diagnose", "-f", "jsonl", str(empty), str(locked), SEGFAULT, env=cache_env)
    rows = jsonl(r.stdout)
    assert rows[0]["class"] == "unknown" and rows[0]["lines"] == 0
    assert rows[-1]["class"] == "segfault"
    if not readable:
        assert r.returncode == 1 and rows[1] == {"path": str(locked), "error": f"{locked}: Permission denied"}
        assert f"gpudiag: {locked}: Permission denied" in r.stderr.decode()
    d = run(cli, "diagnose", "-f", "jsonl", "--job", str(empty), env=cache_env)
    assert d.returncode == 2 and b"--job takes directories" in d.stderr


def test_a_fifo_is_read_as_it_is_written(cli, cache_env, tmp_path):
    fifo = tmp_path / "live.log"
    os.mkfifo(fifo)

    def writer():
        with open(fifo, "wb") as f:
            for i in range(1, 50):
                f.write(b"step %d loss %.3f\n" % (i, 3 / i))
                f.flush()
            f.write(b"torch.OutOfMemoryError: CUDA out of memory.\n")

    t = threading.Thread(target=writer)
    t.start()
    r = run(cli, "diagnose", "-f", "jsonl", str(fifo), env=cache_env)
    t.join()
    assert r.returncode == 0 and jsonl(r.stdout)[0]["class"] == "cuda_oom"


def test_a_file_growing_while_read_is_read_to_where_it_ended(cli, cache_env, tmp_path):
    log = tmp_path / "growing.log"
    log.write_bytes(b"".join(b"step %d loss %.3f\n" % (i, 3 / i) for i in range(1, 200001)))
    stop = threading.Event()

    def append():
        with open(log, "ab") as f:
            while not stop.is_set():
                f.write(b"step 0 loss 1.0\n" * 100)
                f.flush()

    t = threading.Thread(target=append)
    t.start()
    try:
        r = run(cli, "diagnose", "-f", "jsonl", str(log), env=cache_env)
    finally:
        stop.set()
        t.join()
    assert r.returncode == 0 and jsonl(r.stdout)[0]["lines"] >= 200000


def test_a_file_truncated_while_read_ends_cleanly(cli, cache_env, tmp_path):
    log = tmp_path / "rotated.log"
    lines = 400_000
    log.write_bytes(b"".join(b"step %d loss %.3f\n" % (i, 3 / i) for i in range(1, lines + 1)))
    child = subprocess.Popen([cli, "diagnose", "-f", "jsonl", str(log)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=cache_env)
    os.truncate(log, 1000)  # rotated away under the reader, wherever it was
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert 0 < jsonl(out)[0]["lines"] <= lines


def test_paths_with_spaces_and_newlines(cli, cache_env, tmp_path):
    folder = tmp_path / "job 7"
    folder.mkdir()
    odd = folder / "rank 0\nretry.log"
    odd.write_bytes(b"Segmentation fault\n")
    r = run(cli, "diagnose", "-f", "jsonl", str(odd), str(folder), env=cache_env)
    assert r.returncode == 0
    assert [row["path"] for row in jsonl(r.stdout)] == [str(odd), str(odd)]
    text = run(cli, "diagnose", "--color", "never", str(odd), env=cache_env).stdout.decode()
    assert text.splitlines()[0] == str(odd).replace("\n", "\ufffd")  # one line per path on a terminal
    assert gpudiag.diagnose(odd).path == str(odd)


def test_a_hundred_thousand_logs_in_one_call(cli, cache_env, tmp_path):
    folder = tmp_path / "jobs"
    folder.mkdir()
    for i in range(100_000):
        (folder / f"{i:06d}.log").write_bytes(b"Segmentation fault\n" if i % 2 else b"Killed\n")
    r = run(cli, "diagnose", "-f", "jsonl", str(folder), env=cache_env)
    rows = jsonl(r.stdout)
    assert r.returncode == 0 and len(rows) == 100_000
    assert rows[1]["class"] == "segfault" and rows[1]["path"].endswith("000001.log")


def test_closed_stdout_exits_quietly(cli, cache_env, tmp_path):
    log = tmp_path / "long.log"
    log.write_bytes(b"Segmentation fault\n")
    many = [str(log)] * 2000
    child = subprocess.Popen([cli, "diagnose", "-f", "jsonl", *many], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=cache_env)
    child.stdout.read(100)
    child.stdout.close()  # the reader went away, as `| head -1` does
    err = child.stderr.read()
    child.wait(timeout=60)
    assert child.returncode in (0, -signal.SIGPIPE) and err == b""


def test_closed_stdin_is_named(cli, cache_env):
    r = subprocess.run([cli, "diagnose", "-f", "jsonl", "-", SEGFAULT], stdin=subprocess.DEVNULL,
                       capture_output=True, env=cache_env, timeout=60, pass_fds=())
    assert r.returncode == 0  # an empty stdin is an empty log
    closed = subprocess.run(f"exec {cli} diagnose -f jsonl - {SEGFAULT} <&-", shell=True,
                            capture_output=True, env=cache_env, timeout=60)
    assert closed.returncode == 1
    assert b"gpudiag: <stdin>: Bad file descriptor" in closed.stderr
    assert jsonl(closed.stdout)[-1]["class"] == "segfault"
