"""PyTorch Lightning fitting a small MLP on the CPU; options reproduce real failures."""

from __future__ import annotations

import argparse
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="fit.py")
    p.add_argument("--max-epochs", type=int, default=3)
    p.add_argument("--max-steps", type=int, default=-1)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--precision", default="32-true")
    p.add_argument("--root", default=".")
    p.add_argument("--ckpt-path", help="trainer.fit(ckpt_path=...)")
    p.add_argument("--save", action="store_true", help="keep checkpoints (ModelCheckpoint)")
    p.add_argument("--save-every", type=int, default=20, help="ModelCheckpoint's every_n_train_steps")
    p.add_argument("--verbose-ckpt", action="store_true",
                   help="ModelCheckpoint monitors train_loss and logs every save")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--nan-at", type=int, default=0)
    p.add_argument("--early-stop-nan", action="store_true")
    p.add_argument("--divergence-threshold", type=float)
    p.add_argument("--fault")
    p.add_argument("--fault-step", type=int, default=30)
    p.add_argument("--no-bar", action="store_true")
    p.add_argument("--tqdm", action="store_true", help="the tqdm progress bar instead of rich's")
    p.add_argument("--accelerator", default="cpu")
    p.add_argument("--resume-from", help="a checkpoint the launcher passes; this script version "
                                            "forgets to hand it to fit()")
    p.add_argument("--print-args", action="store_true")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.print_args:
        print(f"hparams: {vars(args)}")
    import lightning as L
    from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint, TQDMProgressBar

    L.seed_everything(args.seed)
    g = torch.Generator().manual_seed(args.seed)
    x = torch.randn(2048, 16, generator=g)
    y = x @ torch.randn(16, 1, generator=g) + 0.1 * torch.randn(2048, 1, generator=g)

    class Regressor(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(16, args.hidden), nn.GELU(), nn.Linear(args.hidden, 1))

        def training_step(self, batch, i):
            step = self.global_step + 1
            if args.nan_at and step >= args.nan_at:
                with torch.no_grad():
                    self.net[0].weight.fill_(float("nan"))
            if args.fault and step == args.fault_step:
                from faults import inject
                inject(args.fault, step=step, batch_size=32, elapsed=0, scheduler=None)
            loss = nn.functional.mse_loss(self.net(batch[0]), batch[1])
            self.log("train_loss", loss, prog_bar=True, on_step=True, on_epoch=False)
            return loss

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=args.lr)

    callbacks = []
    if args.early_stop_nan or args.divergence_threshold:
        callbacks.append(EarlyStopping("train_loss", patience=1000, check_finite=True,
                                       divergence_threshold=args.divergence_threshold,
                                       check_on_train_epoch_end=True))
    if args.tqdm:
        callbacks.append(TQDMProgressBar(refresh_rate=5))
    if args.save:
        monitor = {"monitor": "train_loss", "verbose": True} if args.verbose_ckpt else {}
        callbacks.append(ModelCheckpoint(dirpath=f"{args.root}/checkpoints", every_n_train_steps=args.save_every,
                                         save_last=True, **monitor))
    trainer = L.Trainer(max_epochs=args.max_epochs, max_steps=args.max_steps, accelerator=args.accelerator,
                        devices=1, precision=args.precision, default_root_dir=args.root,
                        enable_checkpointing=args.save, logger=False, callbacks=callbacks,
                        enable_progress_bar=not args.no_bar, log_every_n_steps=5)
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    trainer.fit(Regressor(), loader, ckpt_path=args.ckpt_path)
    print(f"final train_loss={trainer.callback_metrics.get('train_loss')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
