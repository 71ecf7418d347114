"""transformers' Trainer on a tiny randomly initialised GPT-2 (nothing downloaded).

The data are token sequences with a repeating pattern, so the loss falls. The
options reproduce the ways real fine-tuning jobs go wrong.
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
from torch.utils.data import Dataset


class Patterned(Dataset):
    def __init__(self, n, length, vocab, seed, drop_labels=False):
        g = torch.Generator().manual_seed(seed)
        self.items = []
        for _ in range(n):
            period = int(torch.randint(2, 6, (1,), generator=g))
            base = torch.randint(0, vocab, (period,), generator=g)
            ids = base.repeat(length // period + 1)[:length]
            self.items.append(ids)
        self.drop_labels = drop_labels

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        if self.drop_labels:
            return {"input_ids": self.items[i]}
        return {"input_ids": self.items[i], "labels": self.items[i].clone()}


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="finetune.py")
    p.add_argument("--output-dir", required=True)
    p.add_argument("--max-steps", type=int, default=60)
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--logging-steps", type=int, default=5)
    p.add_argument("--save-steps", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--samples", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-tqdm", action="store_true")
    p.add_argument("--model", help="from_pretrained() this id or path instead of a fresh config")
    p.add_argument("--tokenizer", help="AutoTokenizer.from_pretrained() this id or path first")
    p.add_argument("--resume", nargs="?", const=True, default=None,
                   help="resume_from_checkpoint for trainer.train()")
    p.add_argument("--forget-resume", action="store_true",
                   help="accepts --resume but does not pass it to train()")
    p.add_argument("--drop-labels", action="store_true")
    p.add_argument("--bad-eval-config", action="store_true")
    p.add_argument("--eval-steps", type=int, default=0, help="evaluate every N steps (logs eval_loss)")
    p.add_argument("--nan-at", type=int, default=0, help="poison the weights at this step")
    p.add_argument("--fault", help="a fault of faults.py, provoked at --fault-step")
    p.add_argument("--fault-step", type=int, default=20)
    p.add_argument("--label-smoothing", type=float, default=0.0,
                   help="label_smoothing_factor: the loss settles at a floor above zero")
    p.add_argument("--print-args", action="store_true")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.print_args:
        print(f"script arguments: {vars(args)}")
    from transformers import (GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback,
                              TrainingArguments, set_seed)
    set_seed(args.seed)
    if args.tokenizer:
        from transformers import AutoTokenizer
        AutoTokenizer.from_pretrained(args.tokenizer)
    if args.model:
        model = GPT2LMHeadModel.from_pretrained(args.model)
    else:
        config = GPT2Config(vocab_size=128, n_positions=64, n_embd=32, n_layer=2, n_head=2)
        model = GPT2LMHeadModel(config)

    class Faults(TrainerCallback):
        def on_step_begin(self, targs, state, control, **kw):
            step = state.global_step + 1
            if args.nan_at and step == args.nan_at:
                with torch.no_grad():
                    model.transformer.wte.weight.fill_(float("nan"))
            if args.fault and step == args.fault_step:
                from faults import inject
                inject(args.fault, step=step, batch_size=args.batch_size, elapsed=0,
                       scheduler=None)

    extra = {}
    if args.eval_steps:
        extra = {"eval_strategy": "steps", "eval_steps": args.eval_steps}
    if args.bad_eval_config:
        extra = {"eval_strategy": "steps", "save_strategy": "epoch", "load_best_model_at_end": True}
    if args.label_smoothing:
        extra["label_smoothing_factor"] = args.label_smoothing
    targs = TrainingArguments(
        output_dir=args.output_dir, max_steps=args.max_steps, num_train_epochs=args.epochs,
        learning_rate=args.lr, logging_steps=args.logging_steps, per_device_train_batch_size=args.batch_size,
        save_steps=args.save_steps or 10_000, save_strategy="steps" if args.save_steps else "no",
        report_to="none", disable_tqdm=args.no_tqdm, seed=args.seed, use_cpu=True, **extra)
    train = Patterned(args.samples, 32, 128, args.seed, args.drop_labels)
    evaluation = Patterned(64, 32, 128, args.seed + 1, False) if args.eval_steps else None
    trainer = Trainer(model=model, args=targs, train_dataset=train, eval_dataset=evaluation,
                      callbacks=[Faults()])
    resume = None if args.forget_resume else args.resume
    result = trainer.train(resume_from_checkpoint=resume)
    if args.save_steps:
        trainer.save_model(os.path.join(args.output_dir, "final"))
    print(f"train_loss={result.training_loss:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
