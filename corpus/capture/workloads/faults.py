"""Real failures, provoked inside a running training job.

Every fault makes the process fail the way a real job fails: the exception is
raised by the library that raises it in the field, the signal is delivered by
the kernel. Nothing here prints a failure message of its own.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import signal
import tempfile


def _div_zero(ctx):
    tokens_per_s = ctx.get("tokens", 4096) / ctx.get("elapsed", 0)  # a timer that read 0
    return tokens_per_s


def _div_zero_mean(ctx):
    losses = []  # an empty validation set
    return sum(losses) / len(losses)


def _assert_msg(ctx):
    batch = ctx.get("batch_size", 32)
    assert batch % 3 == 0, f"global batch {batch} is not divisible by the 3 pipeline stages"


def _assert_bare(ctx):
    assert ctx.get("step", 0) < 0


def _shape(ctx):
    import torch
    torch.randn(8, 17) @ torch.randn(16, 4)


def _no_grad(ctx):
    import torch
    with torch.no_grad():
        loss = torch.nn.functional.mse_loss(torch.nn.Linear(4, 1)(torch.randn(2, 4)), torch.zeros(2, 1))
    loss.backward()


def _backward_twice(ctx):
    import torch
    w = torch.randn(4, 4, requires_grad=True)
    loss = (w.exp() * 2).sum()
    loss.backward()
    loss.backward()


def _dtype(ctx):
    import torch
    torch.nn.Linear(4, 2)(torch.randn(3, 4, dtype=torch.float64))


def _inplace(ctx):
    import torch
    w = torch.randn(4, requires_grad=True)
    y = w.sigmoid()
    y.mul_(2)
    y.sum().backward()
    x = w.exp()
    x.add_(1)
    (x * w).sum().backward()


def _index(ctx):
    import torch
    torch.nn.functional.embedding(torch.tensor([70000]), torch.randn(50257, 8))


def _keyerror(ctx):
    return {"input_ids": [1, 2, 3]}["attention_mask"]


def _typeerror(ctx):
    return None + ctx.get("step", 1)


def _attributeerror(ctx):
    return ctx.get("scheduler").get_last_lr()


def _valueerror(ctx):
    return int("3e-4")


def _memoryerror(ctx):
    return bytearray(1 << 46)


def _numpy_alloc(ctx):
    import numpy as np
    return np.zeros((1 << 22, 1 << 22), dtype=np.float32)


def _torch_alloc(ctx):
    import torch
    return torch.empty(1 << 45, dtype=torch.float32)


def _segv(ctx):
    ctypes.string_at(0)


def _segv_faulthandler(ctx):
    import faulthandler
    faulthandler.enable()
    ctypes.string_at(0)


def _abort(ctx):
    os.abort()


def _abort_faulthandler(ctx):
    import faulthandler
    faulthandler.enable()
    os.abort()


def _sigkill(ctx):
    os.kill(os.getpid(), signal.SIGKILL)


def _sigbus(ctx):
    # A mapped file that shrank under the mapping: the next read is a SIGBUS.
    fd, path = tempfile.mkstemp(prefix="shard-")
    os.write(fd, b"\0" * 65536)
    m = mmap.mmap(fd, 65536)
    os.ftruncate(fd, 0)
    os.unlink(path)
    return m[40000]


def _sigfpe(ctx):
    os.kill(os.getpid(), signal.SIGFPE)


def _file_missing(ctx):
    with open(ctx.get("missing_path", "data/val/shard-00017.bin"), "rb") as f:
        return f.read()


def _permission(ctx):
    # Run as an unprivileged user: the shared directory belongs to root.
    with open(ctx.get("protected_path", "/var/lib/checkpoints/run7/step_100.pt"), "wb") as f:
        f.write(b"x")


FAULTS = {
    "div_zero": _div_zero,
    "div_zero_mean": _div_zero_mean,
    "assert_msg": _assert_msg,
    "assert_bare": _assert_bare,
    "shape": _shape,
    "no_grad": _no_grad,
    "backward_twice": _backward_twice,
    "dtype": _dtype,
    "inplace": _inplace,
    "index": _index,
    "keyerror": _keyerror,
    "typeerror": _typeerror,
    "attributeerror": _attributeerror,
    "valueerror": _valueerror,
    "memoryerror": _memoryerror,
    "numpy_alloc": _numpy_alloc,
    "torch_alloc": _torch_alloc,
    "segv": _segv,
    "segv_faulthandler": _segv_faulthandler,
    "abort": _abort,
    "abort_faulthandler": _abort_faulthandler,
    "sigkill": _sigkill,
    "sigbus": _sigbus,
    "sigfpe": _sigfpe,
    "file_missing": _file_missing,
    "permission": _permission,
}


def inject(name, **ctx):
    """Provokes fault `name` now; returns only if the fault does not end the process."""
    return FAULTS[name](ctx)
