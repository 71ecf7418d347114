"""What a scenario's working directory holds before it runs: data files and checkpoints.

Each setup is ``f(work, python, workloads, env)``; its own output is not captured.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path


def _rows(n=400, dim=16, seed=0):
    rng = random.Random(seed)
    for _ in range(n):
        x = [round(rng.gauss(0, 1), 4) for _ in range(dim)]
        yield {"x": x, "y": round(sum(x[:4]) + rng.gauss(0, 0.1), 4)}


def _write_rows(path: Path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def data_good(work, *_):
    _write_rows(work / "data" / "train.jsonl", _rows())


def data_truncated_line(work, *_):
    data_good(work)
    path = work / "data" / "train.jsonl"
    lines = path.read_text().splitlines()
    lines[217] = lines[217][:57]  # a write that was cut off
    path.write_text("\n".join(lines) + "\n")


def data_missing_key(work, *_):
    rows = list(_rows())
    del rows[88]["y"]
    _write_rows(work / "data" / "train.jsonl", rows)


def data_bad_value(work, *_):
    rows = list(_rows())
    rows[301]["y"] = "n/a"
    _write_rows(work / "data" / "train.jsonl", rows)


def data_ragged(work, *_):
    rows = list(_rows())
    rows[5]["x"] = rows[5]["x"][:12]
    _write_rows(work / "data" / "train.jsonl", rows)


def data_empty(work, *_):
    (work / "data").mkdir(parents=True, exist_ok=True)
    (work / "data" / "train.jsonl").write_text("")


def data_binary(work, *_):
    (work / "data").mkdir(parents=True, exist_ok=True)
    (work / "data" / "train.jsonl").write_bytes(bytes(range(256)) * 64)


def data_csv(work, *_):
    (work / "data").mkdir(parents=True, exist_ok=True)
    with open(work / "data" / "train.jsonl", "w") as f:
        f.write("x0,x1,x2,y\n")
        for r in _rows(50):
            f.write(",".join(map(str, r["x"][:3] + [r["y"]])) + "\n")


def data_root_only(work, *_):
    data_good(work)
    os.chmod(work / "data" / "train.jsonl", 0o600)


def protected_dir(work, *_):
    (work / "ckpt").mkdir(mode=0o755)


def _run(python, workloads, env, work, script, *args):
    subprocess.run([str(python), str(workloads / script), *args], cwd=work, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def ckpt(work, python, workloads, env):
    _run(python, workloads, env, work, "plain_loop.py", "--steps", "60", "--save", str(work / "ckpt"))


def ckpt_hidden32(work, python, workloads, env):
    _run(python, workloads, env, work, "plain_loop.py", "--steps", "20", "--hidden", "32",
         "--save", str(work / "ckpt"))


def _edit_ckpt(work, python, env, code):
    subprocess.run([str(python), "-c", "import torch, argparse\n"
                    f"p = {str(work / 'ckpt' / 'last.pt')!r}\n"
                    "s = torch.load(p)\n" + code + "\ntorch.save(s, p)\n"],
                   cwd=work, env=env, check=True)


def ckpt_ddp_prefixed(work, python, workloads, env):
    """Saved from a DistributedDataParallel wrapper: every key starts with 'module.'."""
    ckpt(work, python, workloads, env)
    _edit_ckpt(work, python, env, "s['model'] = {'module.' + k: v for k, v in s['model'].items()}")


def ckpt_with_namespace(work, python, workloads, env):
    """Holds the run's argparse.Namespace, which weights_only loading refuses."""
    ckpt(work, python, workloads, env)
    _edit_ckpt(work, python, env, "s['args'] = argparse.Namespace(lr=3e-3, steps=60)")


def ckpt_truncated(work, python, workloads, env):
    ckpt(work, python, workloads, env)
    path = work / "ckpt" / "last.pt"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def hf_ckpt(work, python, workloads, env):
    _run(python, workloads, env, work, "hf_trainer.py", "--output-dir", str(work / "out"),
         "--max-steps", "30", "--save-steps", "15", "--no-tqdm")


def lightning_ckpt(work, python, workloads, env):
    _run(python, workloads, env, work, "lightning_fit.py", "--root", str(work), "--max-epochs", "1",
         "--save", "--no-bar")


def lightning_ckpt_hidden32(work, python, workloads, env):
    _run(python, workloads, env, work, "lightning_fit.py", "--root", str(work), "--max-epochs", "1",
         "--save", "--no-bar", "--hidden", "32")


SETUPS = {f.__name__: f for f in (
    data_good, data_truncated_line, data_missing_key, data_bad_value, data_ragged, data_empty,
    data_binary, data_csv, data_root_only, protected_dir, ckpt, ckpt_hidden32, ckpt_ddp_prefixed,
    ckpt_with_namespace, ckpt_truncated, hf_ckpt, lightning_ckpt, lightning_ckpt_hidden32)}
