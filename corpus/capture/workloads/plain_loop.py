"""A plain PyTorch training loop: an MLP fits a noisy linear map on the CPU.

Its options reproduce the ways real jobs go wrong (see faults.py and the
options below); with none of them it trains to completion.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import warnings

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from faults import inject

STYLES = ("step", "epoch", "iter", "pipe", "json")


class Synthetic(Dataset):
    def __init__(self, n, dim, seed, worker_fault=None, worker_fault_index=-1):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, dim, generator=g)
        w = torch.randn(dim, 1, generator=g)
        self.y = self.x @ w + 0.1 * torch.randn(n, 1, generator=g)
        self.worker_fault, self.worker_fault_index = worker_fault, worker_fault_index

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if self.worker_fault and i == self.worker_fault_index:
            os.kill(os.getpid(), getattr(signal, self.worker_fault))
        return self.x[i], self.y[i]


class JsonLines(Dataset):
    """Records {"x": [...], "y": number}, one per line, parsed on load."""

    def __init__(self, path):
        self.rows = []
        with open(path) as f:
            for line in f:
                row = json.loads(line)
                self.rows.append((torch.tensor(row["x"], dtype=torch.float32),
                                  torch.tensor([float(row["y"])])))

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


def log_line(style, epoch, step, total, loss, lr):
    if style == "step":
        return f"step {step} loss {loss:.4f}"
    if style == "epoch":
        return f"epoch {epoch} step {step} loss {loss:.4f}"
    if style == "iter":
        return f"iter {step}/{total} | loss {loss:.5f} | lr {lr:.2e}"
    if style == "pipe":
        return f"[train] epoch={epoch} step={step} loss={loss:.4f} lr={lr:.3g}"
    return json.dumps({"step": step, "epoch": epoch, "loss": round(loss, 5), "lr": lr})


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="train.py", description=__doc__)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--style", choices=STYLES, default="step")
    p.add_argument("--optimizer", choices=("sgd", "adam", "adamw"), default="adam")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--dim", type=int, default=16)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data", help="a JSON-lines data file instead of synthetic data")
    p.add_argument("--device", default="cpu")
    p.add_argument("--save", help="checkpoint directory")
    p.add_argument("--save-every", type=int, default=0)
    p.add_argument("--resume", help="checkpoint file to resume from")
    p.add_argument("--resume-dir", help="directory to resume from (looks for last.pt)")
    p.add_argument("--strict-resume", action="store_true")
    p.add_argument("--quiet-resume", action="store_true",
                   help="load --resume without announcing it, as many scripts do")
    p.add_argument("--eval-every", type=int, default=0,
                   help="evaluate on held-out batches every N steps and log the validation loss")
    p.add_argument("--require", help="a module the model code imports")
    p.add_argument("--require-name", help="'module:name' imported from a module")
    p.add_argument("--native-lib", help="a shared library the kernels load")
    p.add_argument("--require-version", help="a requirement checked by transformers' require_version")
    p.add_argument("--faulthandler", action="store_true", help="faulthandler.enable() at start")
    p.add_argument("--fault", help="a fault of faults.py, provoked at --fault-step")
    p.add_argument("--fault-step", type=int, default=50)
    p.add_argument("--worker-fault", help="SIGSEGV, SIGBUS or SIGKILL inside a DataLoader worker")
    p.add_argument("--nan-at", type=int, default=0, help="a corrupt batch (inf inputs) at this step")
    p.add_argument("--anomaly", action="store_true", help="torch.autograd.detect_anomaly")
    p.add_argument("--scaler", action="store_true",
                   help="dynamic loss scaling (torch.amp.GradScaler); each progress line shows the loss scale")
    p.add_argument("--overflow-from", type=int, default=0,
                   help="with --scaler: from this step the backward pass overflows on every step, as fp16 "
                        "activations that outgrew their range do; the scaler skips the step and halves its scale")
    p.add_argument("--look-alikes", action="store_true",
                   help="benign lines a keyword matcher takes for failures")
    p.add_argument("--print-args", action="store_true")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.print_args:
        print(f"args: {args}")
    if args.faulthandler:
        import faulthandler
        faulthandler.enable()
    if args.require_version:
        from transformers.utils.versions import require_version
        require_version(args.require_version)
    if args.require:
        __import__(args.require)
    if args.require_name:
        module, name = args.require_name.split(":")
        exec(f"from {module} import {name}")
    if args.native_lib:
        import ctypes
        ctypes.CDLL(args.native_lib)
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    torch.zeros(1, device=device)

    dataset = JsonLines(args.data) if args.data else Synthetic(
        4096, args.dim, args.seed, args.worker_fault, args.fault_step * args.batch_size)
    dim = dataset[0][0].shape[0]
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=not args.worker_fault,
                        num_workers=args.workers, drop_last=True)
    model = nn.Sequential(nn.Linear(dim, args.hidden), nn.GELU(), nn.Linear(args.hidden, 1)).to(device)
    opt_cls = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}[args.optimizer]
    kwargs = {"lr": args.lr, "weight_decay": args.weight_decay}
    if args.optimizer != "sgd":
        kwargs["betas"] = (args.beta1, 0.999)
    optimizer = opt_cls(model.parameters(), **kwargs)
    print(f"model: {sum(p.numel() for p in model.parameters())} parameters, "
          f"{len(dataset)} samples, {args.steps} steps, optimizer {args.optimizer} lr {args.lr}")

    step = 0
    if args.resume:
        state = torch.load(args.resume)
        model.load_state_dict(state["model"], strict=True)
        optimizer.load_state_dict(state["optimizer"])
        step = state["step"]
        if not args.quiet_resume:
            print(f"resumed from {args.resume} at step {step}")
    if args.resume_dir:
        # Looks for the file under the name an older version of this script used.
        path = os.path.join(args.resume_dir, "checkpoint_last.pt")
        if os.path.exists(path):
            state = torch.load(path)
            model.load_state_dict(state["model"])
            step = state["step"]
            print(f"resumed from {path} at step {step}")
        elif args.strict_resume:
            raise FileNotFoundError(f"no checkpoint in {args.resume_dir}")

    if args.look_alikes:
        warnings.warn("the 'fused' argument will raise RuntimeError for CPU tensors in a future "
                      "release; pass fused=False", FutureWarning)
        print("dataset: financial-news-2024 (nan values dropped: 0)")
        try:
            torch.empty(1 << 45)
        except RuntimeError as e:
            print(f"probe allocation failed, falling back to a smaller buffer: {e}")

    loss_fn = nn.MSELoss()
    scaler = torch.amp.GradScaler(device.type) if args.scaler else None
    held_out = Synthetic(256, dim, args.seed + 1) if args.eval_every else None
    start = time.monotonic()
    epoch = 0
    done = False
    with torch.autograd.set_detect_anomaly(args.anomaly):
        while not done:
            for x, y in loader:
                step += 1
                x, y = x.to(device), y.to(device)
                if args.nan_at and step == args.nan_at:
                    x = x.clone()
                    x[0, 0] = float("inf")
                if args.fault and step == args.fault_step:
                    inject(args.fault, step=step, batch_size=args.batch_size, elapsed=0,
                           scheduler=None, protected_path=os.path.join(args.save or ".", "step.pt"))
                out = model(x)
                loss = loss_fn(torch.sqrt(out * out + 1e-12) * torch.sign(out), y) if args.anomaly \
                    else loss_fn(out, y)
                optimizer.zero_grad()
                if scaler is None:
                    loss.backward()
                    optimizer.step()
                else:
                    overflow = args.overflow_from and step >= args.overflow_from
                    scaler.scale(loss * float("inf") if overflow else loss).backward()
                    scaler.step(optimizer)
                    scaler.update()
                if step % args.log_every == 0 or step == 1:
                    line = log_line(args.style, epoch, step, args.steps, loss.item(), optimizer.param_groups[0]["lr"])
                    if scaler is not None:
                        line += f" | loss_scale: {scaler.get_scale():.6g}"
                    print(line, flush=True)
                if held_out is not None and step % args.eval_every == 0:
                    with torch.no_grad():
                        # A different input distribution: the validation loss sits above the training loss.
                        val = loss_fn(model(held_out.x.to(device)), held_out.y.to(device)).item()
                    print(f"epoch {epoch} step {step} | validation | val_loss {val:.4f} | best_val_loss "
                          f"{val:.4f}", flush=True)
                if args.save and args.save_every and step % args.save_every == 0:
                    os.makedirs(args.save, exist_ok=True)
                    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                                "step": step}, os.path.join(args.save, "last.pt"))
                    print(f"saved checkpoint {os.path.join(args.save, 'last.pt')} at step {step}")
                if step >= args.steps:
                    done = True
                    break
            epoch += 1
    if args.save:
        os.makedirs(args.save, exist_ok=True)
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step},
                   os.path.join(args.save, "last.pt"))
    print(f"training finished: {step} steps in {time.monotonic() - start:.1f}s, "
          f"final loss {loss.item():.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
