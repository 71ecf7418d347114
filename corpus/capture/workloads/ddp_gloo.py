"""Data-parallel training over torch.distributed's gloo backend, one process per rank.

Started by torchrun (or any launcher that sets RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT). Options make one rank fail in a chosen way at a chosen step, so
the others see the cascade that real multi-rank jobs see.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist
from torch import nn


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="train_ddp.py")
    p.add_argument("--steps", type=int, default=120)
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--backend", default="gloo")
    p.add_argument("--timeout", type=float, default=20.0, help="collective timeout, seconds")
    p.add_argument("--fault", help="a fault of faults.py for --fault-rank at --fault-step")
    p.add_argument("--fault-rank", type=int, default=1)
    p.add_argument("--fault-step", type=int, default=40)
    p.add_argument("--hang", action="store_true", help="--fault-rank stops calling collectives")
    p.add_argument("--leave-early", action="store_true",
                   help="--fault-rank runs out of data and returns at --fault-step")
    p.add_argument("--nan-at", type=int, default=0)
    p.add_argument("--all-ranks-log", action="store_true", help="every rank prints its loss")
    p.add_argument("--step-sleep", type=float, default=0.0)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    dist.init_process_group(args.backend, timeout=datetime.timedelta(seconds=args.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 1))
    ddp = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.Adam(ddp.parameters(), lr=args.lr)
    g = torch.Generator().manual_seed(1234 + rank)
    w = torch.randn(16, 1, generator=torch.Generator().manual_seed(7))
    if rank == 0:
        print(f"world size {world}, backend {args.backend}, {args.steps} steps", flush=True)
    for step in range(1, args.steps + 1):
        if rank == args.fault_rank and step == args.fault_step:
            if args.hang:
                time.sleep(3600)
            if args.leave_early:
                print(f"rank {rank}: data exhausted after {step - 1} steps", flush=True)
                return 0
            if args.fault:
                from faults import inject
                inject(args.fault, step=step, batch_size=32, elapsed=0, scheduler=None)
        x = torch.randn(32, 16, generator=g)
        y = x @ w
        if args.nan_at and step >= args.nan_at:
            x[0, 0] = float("nan")
        loss = nn.functional.mse_loss(ddp(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if args.step_sleep:
            time.sleep(args.step_sleep)
        if step % args.log_every == 0 or step == 1:
            avg = loss.detach().clone()
            dist.all_reduce(avg)
            if rank == 0 or args.all_ranks_log:
                print(f"step {step} loss {avg.item() / world:.4f}", flush=True)
    dist.barrier()
    if rank == 0:
        print("training complete", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
