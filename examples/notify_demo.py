"""gpudiag run with its notifications received for real: a local SMTP server
(aiosmtpd) and a local HTTP server stand in for the mail relay and the chat
webhook. Prints what each received. Run from the project's root:

    .venv/bin/python examples/notify_demo.py

The README's quick tour shows its output; tests/python/test_run.py runs it.
"""

import email
import email.policy
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from aiosmtpd.controller import Controller

HERE = Path(__file__).resolve().parent


class Inbox:
    def __init__(self):
        self.messages = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(email.message_from_bytes(envelope.content, policy=email.policy.default))
        return "250 Message accepted for delivery"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    gpudiag = os.environ.get("GPUDIAG_CLI") or shutil.which("gpudiag") or str(HERE.parent / "build" / "gpudiag")
    inbox = Inbox()
    smtp = Controller(inbox, hostname="127.0.0.1", port=free_port())
    smtp.start()
    posted = []

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            posted.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as work:
        shutil.copy(HERE / "train_missing_shard.py", Path(work) / "train.py")
        # `python` is this interpreter, as it is in an activated environment.
        env = dict(os.environ, GPUDIAG_SMTP_URL=f"smtp://127.0.0.1:{smtp.port}",
                   GPUDIAG_SMTP_FROM="gpudiag@cluster.example", GPUDIAG_PYTHON=sys.executable,
                   PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
        command = [gpudiag, "run", "--log", "logs/train.log", "--notify-email", "me@example.org",
                   "--notify-webhook", f"http://127.0.0.1:{web.server_port}/hook", "--", "python", "train.py"]
        print("$ gpudiag run --log logs/train.log --notify-email me@example.org --notify-webhook URL "
              "-- python train.py")
        run = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
        print(run.stdout[-200:] + run.stderr, end="")
        print(f"(exit status {run.returncode})\n")
    smtp.stop()
    web.shutdown()
    [message] = inbox.messages
    print("== the e-mail, as the SMTP server received it ==")
    for header in ("From", "To", "Subject"):
        print(f"{header}: {message[header]}")
    print()
    print(message.get_body(("plain",)).get_content().replace("\r\n", "\n"))
    print("attachments:", [part.get_filename() for part in message.iter_attachments()])
    [body] = posted
    print("\n== the webhook's JSON (the diagnosis and attempts cut short) ==")
    shown = {k: v for k, v in body.items() if k not in ("summary", "log_head", "log_tail", "attempts")}
    shown["diagnosis"] = {k: body["diagnosis"][k] for k in ("class", "owner", "confidence", "verdict")}
    shown["attempts"] = f"[{len(body['attempts'])} attempt(s), each with its log and diagnosis]"
    shown["log_head"] = body["log_head"][:60] + "..."
    print(json.dumps(shown, indent=2))
    return 0 if run.returncode == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
