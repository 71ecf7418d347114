"""gpudiag run: the wrapper's exit status is the command's, whatever the
notifications do; the log exists before the command can crash; signals reach
the command; restarts happen only when a rerun helps. Real servers: an SMTP
server (aiosmtpd) and an HTTP server on localhost."""

import email
import email.policy
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

aiosmtpd = pytest.importorskip("aiosmtpd.controller")

NCCL_ERROR = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
              "ProcessGroupNCCL.cpp:1970, unhandled system error, NCCL version 2.19.3")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Inbox:
    """An SMTP server that keeps what it is sent, or refuses every recipient."""

    def __init__(self, refuse=False):
        self.messages = []
        self.refuse = refuse

    async def handle_RCPT(self, server, session, envelope, address, options):
        if self.refuse:
            return "550 5.1.1 no such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(email.message_from_bytes(envelope.content, policy=email.policy.default))
        return "250 Message accepted for delivery"


@pytest.fixture()
def smtp():
    """An accepting SMTP server; yields (url, inbox)."""
    inbox = Inbox()
    controller = aiosmtpd.Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    yield f"smtp://127.0.0.1:{controller.port}", inbox
    controller.stop()


@pytest.fixture()
def webhook():
    """An HTTP server on localhost; yields (url, the JSON bodies it received)."""
    bodies = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/hook", bodies
    server.shutdown()


@pytest.fixture()
def run_env(cache_env):
    return dict(cache_env, GPUDIAG_PYTHON=sys.executable)


def gpudiag_run(cli, env, *args, timeout=120, **kwargs):
    return subprocess.run([cli, "run", *args], capture_output=True, env=env, timeout=timeout, **kwargs)


# The SMTP server each notification meets: nothing listening, one that refuses
# the recipient, and one that accepts the connection and never answers.
@pytest.fixture(params=["unreachable", "refusing", "hanging"])
def bad_smtp(request):
    if request.param == "unreachable":
        yield f"smtp://127.0.0.1:{free_port()}", "failed"
    elif request.param == "refusing":
        controller = aiosmtpd.Controller(Inbox(refuse=True), hostname="127.0.0.1", port=free_port())
        controller.start()
        yield f"smtp://127.0.0.1:{controller.port}", "failed"
        controller.stop()
    else:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield f"smtp://127.0.0.1:{listener.getsockname()[1]}", "failed"
        listener.close()


STATUSES = [("exit 0", 0), ("exit 1", 1), ("exit 2", 2), ("exit 137", 137),
            ("kill -KILL $$", 128 + signal.SIGKILL), ("kill -SEGV $$", 128 + signal.SIGSEGV),
            ("kill -ABRT $$", 128 + signal.SIGABRT)]


@pytest.mark.parametrize("script,status", STATUSES)
def test_exit_status_is_the_commands_whatever_the_notification_does(cli, run_env, tmp_path, bad_smtp,
                                                                     script, status):
    url, outcome = bad_smtp
    env = dict(run_env, GPUDIAG_SMTP_URL=url)
    r = gpudiag_run(cli, env, "--log", str(tmp_path / "run.log"), "--notify-email", "me@example.org",
                    "--notify-on", "always", "--notify-timeout", "2", "--", "sh", "-c", f"echo started; {script}")
    assert r.returncode == status, r.stderr
    assert f"notify e-mail to me@example.org {outcome}".encode() in r.stderr
    log = (tmp_path / "run.log").read_text()
    assert log.startswith("# gpudiag run: sh -c") and "\nstarted\n" in log
    assert f"# gpudiag run: status {status}" in log and "notify e-mail to me@example.org failed" in log


def test_the_log_exists_when_the_command_crashes_at_once_or_cannot_start(cli, run_env, tmp_path):
    crash = gpudiag_run(cli, run_env, "--log", str(tmp_path / "crash.log"), "--", "sh", "-c", "kill -SEGV $$")
    assert crash.returncode == 139
    lines = (tmp_path / "crash.log").read_text().splitlines()
    assert lines[0] == "# gpudiag run: sh -c 'kill -SEGV $$'"
    assert lines[1].startswith("# gpudiag run: host ") and "gpudiag " in lines[1] and "attempt 1" in lines[1]
    assert lines[-1].startswith("# gpudiag run: status 139 (SIGSEGV)") and "diagnosis segfault" in lines[-1]
    missing = gpudiag_run(cli, run_env, "--log", str(tmp_path / "missing.log"), "--", str(tmp_path / "no-such-cmd"))
    assert missing.returncode == 127
    text = (tmp_path / "missing.log").read_text()
    assert f"gpudiag run: cannot run '{tmp_path / 'no-such-cmd'}': No such file or directory" in text
    (tmp_path / "plain.txt").write_text("not a program")
    denied = gpudiag_run(cli, run_env, "--log", str(tmp_path / "denied.log"), "--", str(tmp_path / "plain.txt"))
    assert denied.returncode == 126 and b"Permission denied" in denied.stderr


def test_a_log_directory_that_cannot_be_created_refuses_to_start(cli, run_env, tmp_path):
    (tmp_path / "file").write_text("")
    marker = tmp_path / "ran"
    r = gpudiag_run(cli, run_env, "--log-dir", str(tmp_path / "file" / "logs"), "--", "touch", str(marker))
    assert r.returncode == 125
    assert f"cannot create the log directory '{tmp_path / 'file' / 'logs'}'".encode() in r.stderr
    assert not marker.exists()  # the command never ran without its log
    assert gpudiag_run(cli, run_env).returncode == 125  # no command
    assert gpudiag_run(cli, run_env, "--restart-on", "always", "--", "true").returncode == 125
    unseparated = gpudiag_run(cli, run_env, "--log", str(tmp_path / "x.log"), "sh", "-c", "true")
    assert unseparated.returncode == 125 and b"put '--' before the command" in unseparated.stderr


def test_output_is_passed_through_and_logged_and_diagnosed_as_it_streams(cli, run_env, tmp_path):
    script = ("read x; echo \"got $x\"; echo 'step 1 loss 2.5'; "
              "echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB' >&2; "
              "echo \"log $GPUDIAG_RUN_LOG count $GPUDIAG_RESTART_COUNT unbuffered $PYTHONUNBUFFERED\"; exit 1")
    r = gpudiag_run(cli, run_env, "--log", str(tmp_path / "t.log"), "--report", "json", "--", "sh", "-c", script,
                    input=b"hello\n")
    assert r.returncode == 1
    out = r.stdout.decode()
    assert out.startswith("got hello\nstep 1 loss 2.5\n")
    assert f"log {tmp_path / 't.log'} count 0 unbuffered 1" in out
    assert b"CUDA out of memory" in r.stderr
    reported = json.loads(r.stderr.decode().split("\n", 1)[1])
    assert reported["class"] == "cuda_oom" and reported["exit_code"] == 1
    log = (tmp_path / "t.log").read_text()
    assert "got hello\n" in log and "Tried to allocate 2.00 GiB\n" in log
    # Its line numbers are the log's, and the log read again says the same.
    line = log.splitlines()[reported["evidence"][0]["line"] - 1]
    assert line.startswith("torch.OutOfMemoryError")
    again = json.loads(subprocess.run([cli, "diagnose", "-f", "jsonl", "--exit-code", "1", str(tmp_path / "t.log")],
                                      capture_output=True, env=run_env).stdout)
    assert (again["class"], again["evidence"][0]["line"]) == ("cuda_oom", reported["evidence"][0]["line"])


def test_signals_reach_the_command_and_a_second_interrupt_kills_it(cli, run_env, tmp_path):
    ready, got = tmp_path / "ready", tmp_path / "got"
    script = f"trap 'echo TERM > {got}; exit 143' TERM; touch {ready}; while :; do sleep 0.05; done"
    p = subprocess.Popen([cli, "run", "--log", str(tmp_path / "s.log"), "--", "sh", "-c", script],
                         env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    wait_for(ready)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == 143
    assert got.read_text() == "TERM\n"
    ready.unlink()
    stubborn = f"trap '' INT; touch {ready}; while :; do sleep 0.05; done"
    p = subprocess.Popen([cli, "run", "--log", str(tmp_path / "i.log"), "--", "sh", "-c", stubborn],
                         env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    wait_for(ready)
    p.send_signal(signal.SIGINT)
    time.sleep(0.3)
    assert p.poll() is None  # the command ignores the first
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=30) == 128 + signal.SIGKILL


def wait_for(path, seconds=30):
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def test_restarts_only_when_a_rerun_helps_and_stop_at_the_limit(cli, run_env, tmp_path):
    infra = (f"echo \"attempt $GPUDIAG_RESTART_COUNT from ${{GPUDIAG_LAST_CHECKPOINT:-none}}\"; "
             f"echo \"saved checkpoint {tmp_path}/ckpt-$GPUDIAG_RESTART_COUNT.pt at step 10\"; "
             f"echo '{NCCL_ERROR}' >&2; exit 1")
    r = gpudiag_run(cli, run_env, "--log", str(tmp_path / "nccl.log"), "--restart-on", "infra",
                    "--max-restarts", "2", "--restart-delay", "0", "--", "sh", "-c", infra)
    assert r.returncode == 1
    logs = sorted(p.name for p in tmp_path.glob("nccl*.log"))
    assert logs == ["nccl.attempt2.log", "nccl.attempt3.log", "nccl.log"]
    assert "attempt 0 from none" in (tmp_path / "nccl.log").read_text()
    assert f"attempt 1 from {tmp_path}/ckpt-0.pt" in (tmp_path / "nccl.attempt2.log").read_text()
    assert f"attempt 2 from {tmp_path}/ckpt-1.pt" in (tmp_path / "nccl.attempt3.log").read_text()
    assert r.stderr.count(b"a rerun may help; restart") == 2
    bug = gpudiag_run(cli, run_env, "--log", str(tmp_path / "bug.log"), "--restart-on", "retryable",
                      "--restart-delay", "0", "--", "sh", "-c",
                      "echo \"ModuleNotFoundError: No module named 'flash_attn'\" >&2; exit 1")
    assert bug.returncode == 1 and b"a rerun may help" not in bug.stderr
    assert sorted(p.name for p in tmp_path.glob("bug*.log")) == ["bug.log"]
    never = gpudiag_run(cli, run_env, "--log", str(tmp_path / "never.log"), "--", "sh", "-c", infra)
    assert never.returncode == 1 and sorted(p.name for p in tmp_path.glob("never*.log")) == ["never.log"]


def test_notifications_carry_the_diagnosis_and_the_budget_lists_what_it_left_out(cli, run_env, tmp_path, smtp,
                                                                                 webhook):
    url, inbox = smtp
    hook_url, bodies = webhook
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "metrics.json").write_text('{"loss": 2.5}\n')
    (tmp_path / "out" / "weights.bin").write_bytes(b"\0" * 200_000)
    hook_out = tmp_path / "hook.json"
    env = dict(run_env, GPUDIAG_SMTP_URL=url, GPUDIAG_SMTP_FROM="gpudiag@cluster.example")
    r = gpudiag_run(cli, env, "--log", str(tmp_path / "n.log"), "--notify-email", "me@example.org",
                    "--notify-webhook", hook_url, "--notify-command", f"cat > {hook_out}; echo $GPUDIAG_CLASS >> {hook_out}",
                    "--attach", str(tmp_path / "out" / "*"), "--attach-budget", "100K", "--", "sh", "-c",
                    "echo 'step 1 loss 2.5'; echo 'torch.OutOfMemoryError: CUDA out of memory. "
                    "Tried to allocate 2.00 GiB' >&2; exit 1", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert r.stderr.count(b"gpudiag run: notified: ") == 3, r.stderr
    [message] = inbox.messages
    assert message["To"] == "me@example.org" and message["From"] == "gpudiag@cluster.example"
    assert message["Subject"].startswith("gpudiag: cuda_oom (job): sh -c")
    body = message.get_body(("plain",)).get_content().replace("\r\n", "\n")
    assert "cuda_oom · CUDA out of memory · owner job" in body and "\nshows\n" in body
    assert "\nimplies\n" in body and "\ncannot decide\n" in body and "(cuda_oom.allocator)" in body
    assert f"{tmp_path / 'out' / 'weights.bin'} (195.3 KiB): over the attachment budget of 100.0 KiB" in body
    names = [part.get_filename() for part in message.iter_attachments()]
    assert names == ["n.log", "metrics.json"]
    [sent] = bodies
    assert sent["diagnosis"]["class"] == "cuda_oom" and sent["log"] == str(tmp_path / "n.log")
    assert sent["status"] == 1 and sent["attempts"][0]["diagnosis"]["owner"] == "job"
    assert "Tried to allocate 2.00 GiB" in sent["log_head"]
    assert sent["left_out"] == [{"path": str(tmp_path / "out" / "weights.bin"), "bytes": 200_000,
                                 "why": "over the attachment budget of 100.0 KiB"}]
    hooked = hook_out.read_text().splitlines()
    assert json.loads(hooked[0])["attempts"][0]["diagnosis"]["class"] == "cuda_oom" and hooked[1] == "cuda_oom"
    # A success is told only when asked.
    quiet = gpudiag_run(cli, env, "--log", str(tmp_path / "ok.log"), "--notify-webhook", hook_url, "--", "true")
    assert quiet.returncode == 0 and len(bodies) == 1 and quiet.stderr == b""


def test_a_hanging_webhook_is_cut_off_and_the_status_stays(cli, run_env, tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    try:
        start = time.monotonic()
        r = gpudiag_run(cli, run_env, "--log", str(tmp_path / "h.log"), "--notify-webhook",
                        f"http://127.0.0.1:{listener.getsockname()[1]}/", "--notify-timeout", "1", "--",
                        "sh", "-c", "exit 3")
        assert r.returncode == 3 and time.monotonic() - start < 30
        assert b"notify webhook" in r.stderr and b"failed" in r.stderr
    finally:
        listener.close()


def write_slowly(path, lines, pause=0.2, start=0.3):
    def go():
        time.sleep(start)
        for line in lines:
            with open(path, "a") as f:
                f.write(line + "\n")
            time.sleep(pause)
    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t


def test_watch_reports_when_the_log_shows_the_end(cli, run_env, tmp_path):
    log = tmp_path / "job.out"  # not there yet: the job is queued
    write_slowly(log, ["step 1 loss 2.5", "step 2 loss 2.4",
                       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"])
    start = time.monotonic()
    r = subprocess.run([cli, "watch", "--settle", "0.5s", "-f", "jsonl", str(log)], capture_output=True,
                       env=run_env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert b"does not exist yet" in r.stderr
    d = json.loads(r.stdout)
    assert (d["class"], d["evidence"][0]["line"]) == ("cuda_oom", 3)
    assert time.monotonic() - start < 20


def test_watch_follows_a_rotated_log(cli, run_env, tmp_path):
    log = tmp_path / "train.log"
    log.write_text("step 1 loss 2.5\n")
    p = subprocess.Popen([cli, "watch", "--settle", "0.5s", "-f", "jsonl", str(log)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=run_env)
    time.sleep(1.0)
    log.rename(tmp_path / "train.log.1")  # logrotate: the old file moves away, a new one starts
    log.write_text("step 2 loss 2.4\nModuleNotFoundError: No module named 'flash_attn'\n")
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert json.loads(out)["class"] == "missing_module"
    truncated = tmp_path / "copytruncate.log"
    truncated.write_text("step 1 loss 2.5\n" * 50)
    p = subprocess.Popen([cli, "watch", "--settle", "0.5s", "-f", "brief", str(truncated)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=run_env)
    time.sleep(1.0)
    truncated.write_text("Segmentation fault (core dumped)\n")  # copytruncate: the same file, shorter
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0 and b": segfault (job," in out, err


def test_watch_reports_a_silent_log_as_a_possible_hang(cli, run_env, tmp_path):
    log = tmp_path / "hung.log"
    log.write_text("".join(f"step {s} loss {3 - s / 10:.2f}\n" for s in range(1, 11)))
    start = time.monotonic()
    r = subprocess.run([cli, "watch", "--silence", "2s", "--settle", "0.5s", "-f", "brief", str(log)],
                       capture_output=True, env=run_env, timeout=60)
    assert r.returncode == 4
    assert b"has written nothing for 2s: the job may hang" in r.stderr
    assert r.stdout.decode().startswith(f"{log}: unknown (none,")
    assert 2 <= time.monotonic() - start < 20


def test_watch_reports_when_the_job_process_ends(cli, run_env, tmp_path):
    log = tmp_path / "pid.log"
    log.write_text("step 1 loss 2.5\n")
    job = subprocess.Popen(["sleep", "1"])
    r = subprocess.run([cli, "watch", "--pid", str(job.pid), "--settle", "1h", "-f", "brief", str(log)],
                       capture_output=True, env=run_env, timeout=60)
    job.wait()
    assert r.returncode == 0 and f"process {job.pid} has ended".encode() in r.stderr
    assert r.stdout.decode().startswith(f"{log}: unknown")
    bad = subprocess.run([cli, "watch", "--silence", "soon", str(log)], capture_output=True, env=run_env)
    assert bad.returncode == 2 and b"--silence takes a duration" in bad.stderr


def test_the_readme_notification_demo_runs(cli, run_env):
    """The README's quick tour shows this demo's output: a real run, a real
    e-mail and a real webhook POST received on localhost."""
    root = __import__("conftest").ROOT
    r = subprocess.run([sys.executable, str(root / "examples" / "notify_demo.py")], capture_output=True, text=True,
                       env=dict(run_env, GPUDIAG_CLI=cli), timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Subject: gpudiag: file_not_found (job): python train.py on" in r.stdout
    assert "the last checkpoint saved: checkpoints/step-30.pt" in r.stdout
    assert '"class": "file_not_found"' in r.stdout and "(exit status 1)" in r.stdout


def test_email_over_starttls_with_a_login_from_the_environment(cli, run_env, tmp_path):
    """STARTTLS to a server whose certificate is verified (a test authority
    given by GPUDIAG_SMTP_CAFILE), and AUTH with the login from the
    environment: the password never appears on the command line."""
    import ssl
    from aiosmtpd.smtp import AuthResult
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    logins = []

    def authenticate(server, session, envelope, mechanism, auth_data):
        logins.append((auth_data.login, auth_data.password))
        return AuthResult(success=auth_data.password == b"s3cret")

    inbox = Inbox()
    controller = aiosmtpd.Controller(inbox, hostname="127.0.0.1", port=free_port(), tls_context=context,
                                     require_starttls=True, authenticator=authenticate, auth_require_tls=True)
    controller.start()
    try:
        env = dict(run_env, GPUDIAG_SMTP_URL=f"smtp://127.0.0.1:{controller.port}", GPUDIAG_SMTP_USER="me",
                   GPUDIAG_SMTP_PASSWORD="s3cret", GPUDIAG_SMTP_CAFILE=str(cert), GPUDIAG_SMTP_STARTTLS="require")
        r = gpudiag_run(cli, env, "--log", str(tmp_path / "tls.log"), "--notify-email", "me@example.org", "--",
                        "sh", "-c", "echo 'Segmentation fault (core dumped)' >&2; exit 139")
        assert r.returncode == 139 and b"notified: e-mail to me@example.org" in r.stderr, r.stderr
        assert logins == [(b"me", b"s3cret")] and len(inbox.messages) == 1
        # The certificate is verified: without the authority, no mail goes.
        untrusted = dict(env)
        del untrusted["GPUDIAG_SMTP_CAFILE"]
        r = gpudiag_run(cli, untrusted, "--log", str(tmp_path / "tls2.log"), "--notify-email", "me@example.org",
                        "--", "sh", "-c", "exit 1")
        assert r.returncode == 1 and b"CERTIFICATE_VERIFY_FAILED" in r.stderr and len(inbox.messages) == 1
    finally:
        controller.stop()


def test_run_and_watch_help_teach_in_80_columns(cli):
    for command in ("run", "watch"):
        out = subprocess.run([cli, command, "--help"], capture_output=True, text=True).stdout
        assert out.startswith(f"usage: gpudiag {command} [options]") and "exit status:" in out
        assert all(len(line) <= 80 for line in out.splitlines()), command
    run_help = subprocess.run([cli, "run", "--help"], capture_output=True, text=True).stdout
    for option in ("--notify-email", "--notify-webhook", "--notify-command", "--attach-budget", "--restart-on",
                   "--max-restarts", "GPUDIAG_SMTP_URL", "GPUDIAG_LAST_CHECKPOINT"):
        assert option in run_help


def test_a_process_left_behind_does_not_keep_run_waiting(cli, run_env, tmp_path):
    """A daemon the command leaves behind holds the pipes open and writes on:
    gpudiag run stops reading ten seconds after the command exits."""
    start = time.monotonic()
    r = gpudiag_run(cli, run_env, "--log", str(tmp_path / "d.log"), "--", "sh", "-c",
                    "(while :; do echo tick; sleep 0.2; done) & echo $! > " + str(tmp_path / "pid") + "; exit 5")
    took = time.monotonic() - start
    os.kill(int((tmp_path / "pid").read_text()), signal.SIGKILL)
    assert r.returncode == 5 and 9 < took < 30


def test_watch_finds_the_end_of_a_long_log(cli, run_env, tmp_path):
    """A log longer than the window watch reads at each quiet moment (8 MiB):
    the end in its last pages is found, and the report is of the whole log."""
    log = tmp_path / "long.log"
    line = b"{'loss': '2.5000', 'grad_norm': '1.0', 'learning_rate': '1e-4', 'epoch': '0.5'}\n"
    with open(log, "wb") as f:
        f.write(b"RuntimeError: CUDA error: an illegal memory access was encountered\n")  # 9 MiB before the end
        f.write(line * (9 * (1 << 20) // len(line)))
    p = subprocess.Popen([cli, "watch", "--settle", "0.5s", "-f", "jsonl", str(log)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=run_env)
    time.sleep(1.5)
    assert p.poll() is None  # progress lines only at the end: no end yet
    with open(log, "ab") as f:
        f.write(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    d = json.loads(out)
    assert d["class"] == "cuda_oom" and d["lines"] == log.read_bytes().count(b"\n")
    assert any(f["line"] == 1 for f in d["findings"])  # the whole log: its first line's error is in the verdict


def test_a_notifier_that_cannot_start_changes_nothing(cli, run_env, tmp_path):
    env = dict(run_env, GPUDIAG_PYTHON=str(tmp_path / "no-python"))
    r = gpudiag_run(cli, env, "--log", str(tmp_path / "n.log"), "--notify-webhook", "http://127.0.0.1:1/", "--",
                    "sh", "-c", "exit 3")
    assert r.returncode == 3
    assert b"notify: cannot run" in r.stderr and b"set GPUDIAG_PYTHON" in r.stderr
    assert "# gpudiag run: notify: cannot run" in (tmp_path / "n.log").read_text()


def test_a_log_that_cannot_be_written_is_said(cli, run_env, tmp_path):
    """The header is written before the command starts: a full device refuses
    to start (125), and never runs the command without its log."""
    marker = tmp_path / "ran"
    r = gpudiag_run(cli, run_env, "--log", "/dev/full", "--", "touch", str(marker))
    assert r.returncode == 125 and b"cannot write the log '/dev/full': No space left on device" in r.stderr
    assert not marker.exists()
