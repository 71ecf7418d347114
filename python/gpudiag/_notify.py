"""gpudiag run's notifier: tells whoever ``gpudiag run`` was asked to why a
command ended.

``gpudiag run`` starts ``python -m gpudiag._notify`` with the run's JSON on
standard input (the command, host, status and every attempt with its log and
diagnosis) and whom to tell: e-mail over SMTP (STARTTLS when offered, or
required), webhooks (an HTTP POST of JSON) and commands (``/bin/sh``, the JSON
on their standard input). Each notification stands alone: a refusal, a
timeout or an exception is said in one line and the others still go. It runs
in a process of its own, so that nothing it does can change the status of the
command that was watched. Attachments (the last log's head and tail, and the
artifacts the user names) fit a byte budget; what does not fit is listed in
the message, never dropped silently.
"""

from __future__ import annotations

import glob
import json
import shlex
import os
import smtplib
import socket
import ssl
import subprocess
import sys
import urllib.request
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

HEAD_BYTES = 16 << 10
TAIL_BYTES = 64 << 10
SMTP_KEYS = ("url", "user", "password", "from", "starttls", "cafile")


@dataclass
class Bundle:
    """What goes with a notification, within the budget, and what did not."""

    files: List[Tuple[str, bytes]] = field(default_factory=list)  # (name, content)
    left_out: List[Dict[str, Any]] = field(default_factory=list)  # {"path", "bytes", "why"}
    head: str = ""
    tail: str = ""


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def _log_parts(log: Path) -> Tuple[bytes, bytes]:
    """The log's head and tail; the whole log as the head when it is short."""
    data_size = log.stat().st_size
    with open(log, "rb") as f:
        if data_size <= HEAD_BYTES + TAIL_BYTES:
            return f.read(), b""
        head = f.read(HEAD_BYTES)
        f.seek(data_size - TAIL_BYTES)
        return head, f.read()


def collect(log: Optional[str], patterns: List[str], budget: int) -> Bundle:
    """The log's head and tail first, then each pattern's files in name
    order, while they fit in ``budget`` bytes."""
    bundle = Bundle()
    used = 0

    def add(name: str, path: str, content: Optional[bytes], size: int, why: str = "") -> None:
        nonlocal used
        if content is None or used + size > budget:
            bundle.left_out.append({"path": path, "bytes": size,
                                    "why": why or f"over the attachment budget of {_size(budget)}"})
            return
        bundle.files.append((name, content))
        used += size

    if log:
        try:
            head, tail = _log_parts(Path(log))
            bundle.head = head.decode("utf-8", "replace")
            bundle.tail = tail.decode("utf-8", "replace")
            stem = Path(log).name
            add(f"{stem}.head.txt" if tail else stem, log, head, len(head))
            if tail:
                add(f"{stem}.tail.txt", log, tail, len(tail))
        except OSError as e:
            bundle.left_out.append({"path": log, "bytes": 0, "why": e.strerror or str(e)})
    for pattern in patterns:
        matches = sorted(p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p))
        if not matches:
            bundle.left_out.append({"path": pattern, "bytes": 0, "why": "no file matches it"})
        for path in matches:
            try:
                size = os.path.getsize(path)
                content = Path(path).read_bytes() if used + size <= budget else None
                add(Path(path).name, path, content, size)
            except OSError as e:
                add(Path(path).name, path, None, 0, e.strerror or str(e))
    return bundle


def summary(run: Dict[str, Any], bundle: Bundle) -> str:
    """The message: the class, the verdict's three parts, the evidence, the
    attempts, and what was attached or left out."""
    last = run["attempts"][-1]
    d = last["diagnosis"]
    command = shlex.join(run["command"])
    lines = [f"{command} on {run['host']} ended with status {run['status']} after {last['seconds']:.1f} s"
             + (f" (attempt {last['attempt']})" if len(run["attempts"]) > 1 else ""), "",
             f"{d['class']} · {d['title']} · owner {d['owner']} · confidence {d['confidence']:.2f}"]
    for title, key in (("shows", "shows"), ("implies", "implies"), ("cannot decide", "cannot_decide")):
        if d["verdict"][key]:
            lines += ["", title] + [f"  {s}" for s in d["verdict"][key]]
    if d["evidence"]:
        lines += ["", "evidence"] + [f"  line {e['line']} ({e['rule']}): {e['text']}" for e in d["evidence"]]
    if d["findings"]:
        lines += ["", "findings"] + [f"  {f['message']}" for f in d["findings"]]
    if len(run["attempts"]) > 1:
        lines += ["", "attempts"] + [
            f"  {a['attempt']}: status {a['status']} after {a['seconds']:.1f} s, {a['diagnosis']['class']} "
            f"(owner {a['diagnosis']['owner']}), log {a['log']}" for a in run["attempts"]]
    lines += ["", f"log: {last['log']}"]
    if bundle.files:
        lines.append("attached: " + ", ".join(f"{name} ({_size(len(c))})" for name, c in bundle.files))
    if bundle.left_out:
        lines.append("left out:")
        lines += [f"  {x['path']} ({_size(x['bytes'])}): {x['why']}" for x in bundle.left_out]
    return "\n".join(lines) + "\n"


def smtp_settings(config_path: Optional[str]) -> Dict[str, str]:
    """The SMTP settings: the config file's, then the environment's over them."""
    settings: Dict[str, str] = {}
    path = Path(config_path) if config_path else Path(
        os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "gpudiag" / "notify.json"
    if config_path or path.is_file():
        try:
            settings.update({k: str(v) for k, v in json.loads(path.read_text()).get("smtp", {}).items()
                             if k in SMTP_KEYS})
        except (OSError, ValueError, AttributeError) as e:
            raise RuntimeError(f"the notify config {path} cannot be read: {e}") from None
    for key in SMTP_KEYS:
        value = os.environ.get(f"GPUDIAG_SMTP_{key.upper()}")
        if value:
            settings[key] = value
    return settings


def send_email(address: str, run: Dict[str, Any], bundle: Bundle, text: str, settings: Dict[str, str],
               timeout: float) -> None:
    if "url" not in settings:
        raise RuntimeError("no SMTP server: set GPUDIAG_SMTP_URL (smtp://host:587) or --notify-config")
    url = urlsplit(settings["url"])
    if url.scheme not in ("smtp", "smtps") or not url.hostname:
        raise RuntimeError(f"GPUDIAG_SMTP_URL must be smtp://host[:port] or smtps://host[:port], not {settings['url']!r}")
    d = run["attempts"][-1]["diagnosis"]
    message = EmailMessage()
    message["Subject"] = (f"gpudiag: {d['class']} ({d['owner']}): {shlex.join(run['command'])[:80]} on "
                          f"{run['host']}, status {run['status']}")
    message["From"] = settings.get("from") or f"gpudiag@{socket.getfqdn()}"
    message["To"] = address
    message.set_content(text)
    for name, content in bundle.files:
        message.add_attachment(content, maintype="text" if name.endswith((".txt", ".log")) else "application",
                               subtype="plain" if name.endswith((".txt", ".log")) else "octet-stream",
                               filename=name)
    starttls = settings.get("starttls", "try")
    if starttls not in ("try", "require", "off"):
        raise RuntimeError(f"starttls must be try, require or off, not {starttls!r}")
    # The server's certificate is verified (smtplib's own default does not):
    # against the system's authorities, or the cafile the settings name.
    tls = ssl.create_default_context(cafile=settings.get("cafile") or None)
    port = url.port or (465 if url.scheme == "smtps" else 587)
    smtp = (smtplib.SMTP_SSL(url.hostname, port, timeout=timeout, context=tls) if url.scheme == "smtps"
            else smtplib.SMTP(url.hostname, port, timeout=timeout))
    with smtp:
        smtp.ehlo()
        if url.scheme == "smtp" and starttls != "off":
            if smtp.has_extn("starttls"):
                smtp.starttls(context=tls)
                smtp.ehlo()
            elif starttls == "require":
                raise RuntimeError(f"{url.hostname} does not offer STARTTLS, and starttls is 'require'")
        if settings.get("user"):
            smtp.login(settings["user"], settings.get("password", ""))
        smtp.send_message(message)


def webhook_body(run: Dict[str, Any], bundle: Bundle, text: str) -> bytes:
    last = run["attempts"][-1]
    body = {"summary": text, "command": run["command"], "host": run["host"], "status": run["status"],
            "seconds": last["seconds"], "log": last["log"], "diagnosis": last["diagnosis"],
            "attempts": run["attempts"], "log_head": bundle.head, "log_tail": bundle.tail,
            "attached": [{"name": name, "bytes": len(c)} for name, c in bundle.files],
            "left_out": bundle.left_out}
    return json.dumps(body).encode()


def send_webhook(url: str, body: bytes, timeout: float) -> None:
    from . import __version__
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "User-Agent": f"gpudiag/{__version__}"})
    with urllib.request.urlopen(request, timeout=timeout) as response:  # raises on 4xx and 5xx
        response.read()


def run_hook(command: str, run: Dict[str, Any], timeout: float) -> None:
    d = run["attempts"][-1]["diagnosis"]
    env = dict(os.environ, GPUDIAG_CLASS=d["class"], GPUDIAG_OWNER=d["owner"],
               GPUDIAG_STATUS=str(run["status"]), GPUDIAG_LOG=run["attempts"][-1]["log"])
    done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(run).encode() + b"\n", env=env,
                          capture_output=True, timeout=timeout)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(f"exit status {done.returncode}" + (f": {said[-1]}" if said else ""))


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text if isinstance(e, RuntimeError) else f"{type(e).__name__}: {text}"


def main() -> int:
    try:
        run = json.load(sys.stdin)
        asked = run.pop("notify")
    except (ValueError, KeyError) as e:
        print(f"gpudiag run: notify: the run's description does not parse: {e}")
        return 2
    timeout = float(asked["timeout"])
    bundle = collect(run["attempts"][-1]["log"], asked["attach"], int(asked["attach_budget"]))
    text = summary(run, bundle)
    sends: List[Tuple[str, Callable[[], None]]] = []
    try:
        settings = smtp_settings(asked.get("config")) if asked["emails"] else {}
        config_error = None
    except RuntimeError as e:
        settings, config_error = {}, e
    for address in asked["emails"]:
        def email(address: str = address) -> None:
            if config_error:
                raise config_error
            send_email(address, run, bundle, text, settings, timeout)
        sends.append((f"e-mail to {address}", email))
    body = webhook_body(run, bundle, text)
    for url in asked["webhooks"]:
        sends.append((f"webhook {url}", lambda url=url: send_webhook(url, body, timeout)))
    for command in asked["commands"]:
        sends.append((f"command {command!r}", lambda command=command: run_hook(command, run, timeout)))
    failures = 0
    for what, send in sends:
        try:
            send()
            print(f"gpudiag run: notified: {what}")
        except Exception as e:  # each notification on its own: one failing never stops the others
            failures += 1
            print(f"gpudiag run: notify {what} failed: {_one_line(e)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
