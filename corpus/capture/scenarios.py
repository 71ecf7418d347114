"""Every captured scenario: a real workload, how it is launched, and the class its log shows.

Ids are ``<class>-<nn>-<workload>-<launch>``. Launches: ``python`` (the bare
process), ``job`` (inside a batch script, which reports signals as bash does),
``torchrun`` (``--tee 3`` prefixes ranks with ``[defaultN]:``), ``ranks`` (one
process per rank, lines labelled ``N: `` as ``srun --label`` does) and
``nobody`` (an unprivileged user). Classes that only GPUs and clusters produce
are composed by compose.py instead.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Tuple


@dataclass(frozen=True)
class Scenario:
    id: str
    cls: str
    workload: str  # plain, hf, lightning, ddp
    args: Tuple[str, ...]
    launch: str = "python"
    nproc: int = 2
    tee: bool = True
    trace: bool = False  # the batch script echoes its commands (set -x)
    env: Dict[str, str] = field(default_factory=dict)
    setup: Tuple[str, ...] = ()
    # A job only: an earlier run of the same workload with these arguments runs first in the same
    # job, its output in the same log, as a requeued Slurm job appends to its output file, or a
    # sweep runs its trials one after another.
    earlier: Tuple[str, ...] = ()
    # A job only: variables its script exports before the run (traced with set -x, as a batch
    # script shows them), e.g. a debugging switch left on.
    exports: Dict[str, str] = field(default_factory=dict)
    timeout: float = 180.0


SCENARIOS: List[Scenario] = []
_count: Counter = Counter()


def add(cls, workload, *args, launch="python", **kw):
    _count[cls] += 1
    sid = f"{cls}-{_count[cls]:02d}-{workload}-{launch}"
    SCENARIOS.append(Scenario(sid, cls, workload, tuple(args), launch, **kw))


HF = ("--output-dir", "{work}/out")
LT = ("--root", "{work}")
DATA = ("--data", "{work}/data/train.jsonl")

# A · start-up and configuration
add("missing_module", "plain", "--require", "flash_attn")
add("missing_module", "plain", "--require", "apex.normalization", launch="job")
add("missing_module", "plain", "--require", "deepspeed", "--print-args")
add("missing_module", "plain", "--require-name", "torch.nn:FlashAttention")
add("missing_module", "plain", "--require-name", "torch.utils.data:StatefulDataLoader", launch="job", trace=True)
add("missing_module", "plain", "--require", "bitsandbytes", launch="torchrun")
add("missing_module", "plain", "--require", "megatron.core", launch="torchrun", nproc=3, tee=False)
add("missing_module", "plain", "--require", "wandb", launch="job")
add("missing_module", "plain", "--require", "sentencepiece", "--style", "epoch")
add("missing_module", "plain", "--require", "xformers.ops", launch="ranks", nproc=2)
add("missing_module", "plain", "--require", "triton_kernels.matmul", launch="job", trace=True)
add("missing_module", "plain", "--require-name", "torch.optim:Lion")

add("env_error", "plain", "--native-lib", "libcudart.so.12")
add("env_error", "plain", "--native-lib", "libnccl.so.2", launch="job")
add("env_error", "plain", "--native-lib", "libcudnn.so.9", "--print-args")
add("env_error", "plain", "--device", "cuda")
add("env_error", "plain", "--device", "cuda:0", launch="job", trace=True)
add("env_error", "ddp", "--backend", "nccl", launch="torchrun")
add("env_error", "ddp", "--backend", "nccl", launch="torchrun", nproc=4, tee=False)
add("env_error", "plain", "--require-version", "torch>=3.0")
add("env_error", "plain", "--require-version", "accelerate>=9.0", launch="job")
add("env_error", "lightning", *LT, "--accelerator", "gpu")
add("env_error", "lightning", *LT, "--accelerator", "cuda", "--tqdm", launch="job")
add("env_error", "plain", "--native-lib", "libcuda.so.1", launch="ranks", nproc=2)

add("config_error", "plain", "--optimizer", "lamb")
add("config_error", "plain", "--lr", "3e-4x", launch="job")
add("config_error", "plain", "--lr-schedule", "cosine", launch="job", trace=True)
add("config_error", "hf", "--max-steps", "10")  # --output-dir is required
add("config_error", "plain", "--lr", "-0.01")
add("config_error", "plain", "--weight-decay", "-0.1", "--optimizer", "adamw", launch="job")
add("config_error", "plain", "--beta1", "1.5")
add("config_error", "plain", "--hidden", "-8", "--print-args")
add("config_error", "hf", *HF, "--bad-eval-config")
add("config_error", "lightning", *LT, "--precision", "banana")
add("config_error", "plain", "--lr", "-1", launch="torchrun")
add("config_error", "hf", *HF, "--bad-eval-config", "--print-args", launch="job")

add("data_error", "plain", *DATA, setup=("data_truncated_line",))
add("data_error", "plain", *DATA, setup=("data_missing_key",), launch="job")
add("data_error", "plain", *DATA, setup=("data_bad_value",))
add("data_error", "plain", *DATA, setup=("data_ragged",))
add("data_error", "plain", *DATA, setup=("data_empty",), launch="job", trace=True)
add("data_error", "plain", *DATA, setup=("data_binary",))
add("data_error", "plain", *DATA, setup=("data_csv",), launch="job")
add("data_error", "hf", *HF, "--drop-labels")
add("data_error", "hf", *HF, "--drop-labels", "--no-tqdm", launch="job")
add("data_error", "plain", *DATA, "--style", "iter", setup=("data_truncated_line",), launch="torchrun")
add("data_error", "plain", *DATA, setup=("data_missing_key",), launch="ranks", nproc=2)

add("asset_error", "hf", *HF, "--model", "acme-research/llama-3-8b-sft")
add("asset_error", "hf", *HF, "--model", "{work}/checkpoints/llama-7b-converted", launch="job")
add("asset_error", "hf", *HF, "--tokenizer", "meta-llama/Llama-2-7b-hf")
add("asset_error", "hf", *HF, "--tokenizer", "{work}/tokenizer", launch="job", trace=True)
add("asset_error", "hf", *HF, "--model", "gpt2")
add("asset_error", "hf", *HF, "--model", "mistralai/Mistral-7B-v0.1", "--print-args", launch="job")
add("asset_error", "hf", *HF, "--model", "gpt2", launch="torchrun")
add("asset_error", "hf", *HF, "--tokenizer", "bert-base-uncased", launch="torchrun", tee=False)
add("asset_error", "hf", *HF, "--model", "EleutherAI/pythia-70m", launch="ranks", nproc=2)
add("asset_error", "hf", *HF, "--model", "./models/final")
add("asset_error", "hf", *HF, "--tokenizer", "google/gemma-2b", "--no-tqdm")

add("file_not_found", "plain", "--data", "/data/shards/train-00000.jsonl")
add("file_not_found", "plain", "--data", "data/train.jsonl", launch="job")
add("file_not_found", "plain", "--fault", "file_missing", "--fault-step", "60")
add("file_not_found", "plain", "--fault", "file_missing", "--style", "epoch", launch="job", trace=True)
add("file_not_found", "plain", "--fault", "file_missing", "--style", "iter", launch="torchrun")
add("file_not_found", "hf", *HF, "--fault", "file_missing")
add("file_not_found", "lightning", *LT, "--fault", "file_missing", "--no-bar")
add("file_not_found", "plain", "--data", "/scratch/run42/val.jsonl", "--print-args")
add("file_not_found", "plain", "--fault", "file_missing", launch="ranks", nproc=3)
add("file_not_found", "lightning", *LT, "--fault", "file_missing", "--tqdm", launch="job")

add("permission", "plain", "--steps", "80", "--save", "{work}/ckpt", setup=("protected_dir",), launch="nobody")
add("permission", "plain", *DATA, setup=("data_root_only",), launch="nobody")
add("permission", "plain", "--save", "{work}/ckpt", "--fault", "permission", setup=("protected_dir",), launch="nobody")
add("permission", "plain", "--steps", "120", "--save", "{work}/ckpt", "--save-every", "40", "--style", "epoch",
    setup=("protected_dir",), launch="nobody")
add("permission", "hf", "--output-dir", "{work}/ckpt", "--save-steps", "20", "--max-steps", "40",
    setup=("protected_dir",), launch="nobody")
add("permission", "lightning", "--root", "{work}/ckpt", "--save", "--no-bar", setup=("protected_dir",), launch="nobody")
add("permission", "plain", *DATA, "--style", "iter", setup=("data_root_only",), launch="nobody")
add("permission", "hf", "--output-dir", "{work}/ckpt", "--save-steps", "10", "--max-steps", "20", "--no-tqdm",
    setup=("protected_dir",), launch="nobody")
add("permission", "plain", "--save", "{work}/ckpt", "--fault", "permission", "--style", "pipe",
    setup=("protected_dir",), launch="nobody")
add("permission", "lightning", "--root", "{work}/ckpt", "--save", "--tqdm", setup=("protected_dir",), launch="nobody")

# D · signals and host memory
for launch in ("python", "job", "torchrun"):
    add("ram_oom", "plain", "--fault", "memoryerror", launch=launch)
    add("ram_oom", "plain", "--fault", "numpy_alloc", "--style", "iter", launch=launch)
    add("ram_oom", "plain", "--fault", "torch_alloc", "--style", "epoch", launch=launch)
add("ram_oom", "hf", *HF, "--fault", "torch_alloc")
add("ram_oom", "lightning", *LT, "--fault", "numpy_alloc", "--no-bar")
add("ram_oom", "hf", *HF, "--fault", "memoryerror", launch="job")

add("bus_error", "plain", "--fault", "sigbus")
add("bus_error", "plain", "--fault", "sigbus", "--faulthandler", "--style", "iter")
add("bus_error", "plain", "--fault", "sigbus", launch="job")
add("bus_error", "plain", "--fault", "sigbus", launch="torchrun", nproc=3)
add("bus_error", "plain", "--workers", "2", "--worker-fault", "SIGBUS")
add("bus_error", "plain", "--workers", "4", "--worker-fault", "SIGBUS", "--style", "epoch", launch="job")
add("bus_error", "plain", "--workers", "2", "--worker-fault", "SIGBUS", launch="torchrun")
add("bus_error", "hf", *HF, "--fault", "sigbus", launch="job")
add("bus_error", "lightning", *LT, "--fault", "sigbus", "--no-bar", launch="torchrun", tee=False)
add("bus_error", "plain", "--fault", "sigbus", launch="ranks", nproc=2)

add("segfault", "plain", "--fault", "segv")
add("segfault", "plain", "--fault", "segv_faulthandler", "--style", "iter")
add("segfault", "plain", "--fault", "segv", launch="job")
add("segfault", "plain", "--fault", "segv_faulthandler", launch="job", trace=True)
add("segfault", "plain", "--fault", "segv", launch="torchrun", nproc=4)
add("segfault", "plain", "--workers", "2", "--worker-fault", "SIGSEGV")
add("segfault", "plain", "--workers", "2", "--worker-fault", "SIGSEGV", launch="torchrun", tee=False)
add("segfault", "hf", *HF, "--fault", "segv_faulthandler")
add("segfault", "lightning", *LT, "--fault", "segv", "--no-bar", launch="job")
add("segfault", "plain", "--fault", "sigfpe", launch="job")
add("segfault", "plain", "--fault", "segv", launch="ranks", nproc=3)

add("native_abort", "plain", "--fault", "abort")
add("native_abort", "plain", "--fault", "abort_faulthandler", "--style", "pipe")
add("native_abort", "plain", "--fault", "abort", launch="job")
add("native_abort", "plain", "--fault", "abort_faulthandler", launch="job", trace=True)
add("native_abort", "plain", "--fault", "abort", launch="torchrun")
add("native_abort", "plain", "--fault", "abort", "--style", "iter", launch="torchrun", nproc=3, tee=False)
add("native_abort", "hf", *HF, "--fault", "abort", launch="job")
add("native_abort", "lightning", *LT, "--fault", "abort_faulthandler", "--no-bar")
add("native_abort", "lightning", *LT, "--fault", "abort", "--tqdm", launch="torchrun")
add("native_abort", "plain", "--fault", "abort", launch="ranks", nproc=2)

add("oom_killer", "plain", "--fault", "sigkill", launch="job")
add("oom_killer", "plain", "--fault", "sigkill", "--style", "iter", launch="job", trace=True)
add("oom_killer", "plain", "--fault", "sigkill", launch="torchrun")
add("oom_killer", "ddp", "--fault", "sigkill", "--fault-rank", "1", launch="torchrun", nproc=3)
add("oom_killer", "ddp", "--fault", "sigkill", "--fault-rank", "2", launch="torchrun", nproc=4, tee=False)
add("oom_killer", "plain", "--workers", "2", "--worker-fault", "SIGKILL")
add("oom_killer", "plain", "--workers", "3", "--worker-fault", "SIGKILL", "--style", "epoch", launch="job")
add("oom_killer", "hf", *HF, "--fault", "sigkill", launch="job")
add("oom_killer", "lightning", *LT, "--fault", "sigkill", "--no-bar", launch="torchrun")
add("oom_killer", "ddp", "--fault", "sigkill", "--fault-rank", "1", "--timeout", "15", launch="ranks", nproc=3)
add("oom_killer", "ddp", "--fault", "sigkill", "--fault-rank", "0", "--timeout", "15", launch="ranks", nproc=2)

# C · distributed coordination (gloo on the CPU)
add("rendezvous_failure", "ddp", "--timeout", "10", launch="python",
    env={"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29622"})
add("rendezvous_failure", "ddp", "--timeout", "10", launch="python",
    env={"RANK": "0", "WORLD_SIZE": "3", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29633"})
add("rendezvous_failure", "ddp", "--timeout", "10", launch="job",
    env={"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "trainer-master-0.invalid", "MASTER_PORT": "29644"})
add("rendezvous_failure", "ddp", "--timeout", "12", launch="job", trace=True,
    env={"RANK": "3", "WORLD_SIZE": "4", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29655"})
add("rendezvous_failure", "ddp", "--timeout", "10", launch="python",
    env={"RANK": "0", "WORLD_SIZE": "8", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29666"})
add("rendezvous_failure", "ddp", "--timeout", "10", launch="python",
    env={"RANK": "2", "WORLD_SIZE": "4", "MASTER_ADDR": "node-017.cluster.invalid", "MASTER_PORT": "29500"})
add("rendezvous_failure", "ddp", "--timeout", "10", launch="job",
    env={"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29677"})
add("rendezvous_failure", "ddp", "--timeout", "8", launch="python",
    env={"RANK": "5", "WORLD_SIZE": "16", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29688"})
add("rendezvous_failure", "ddp", "--timeout", "9", launch="python",
    env={"RANK": "1", "WORLD_SIZE": "4", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29699"})
add("rendezvous_failure", "ddp", "--timeout", "10", launch="job",
    env={"RANK": "0", "WORLD_SIZE": "4", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29711"})

add("nccl_timeout", "ddp", "--hang", "--fault-rank", "1", "--timeout", "10", launch="torchrun")
add("nccl_timeout", "ddp", "--hang", "--fault-rank", "2", "--timeout", "10", launch="torchrun", nproc=3)
add("nccl_timeout", "ddp", "--hang", "--fault-rank", "0", "--timeout", "12", launch="torchrun", nproc=4, tee=False)
add("nccl_timeout", "ddp", "--hang", "--fault-rank", "1", "--timeout", "10", "--all-ranks-log", launch="torchrun", nproc=3)
add("nccl_timeout", "ddp", "--hang", "--fault-rank", "1", "--timeout", "15", "--fault-step", "90", launch="torchrun", nproc=2, tee=False)
add("nccl_timeout", "ddp", "--hang", "--fault-rank", "3", "--timeout", "10", "--fault-step", "70", launch="torchrun", nproc=4)

add("nccl", "ddp", "--leave-early", "--fault-rank", "1", launch="torchrun")
add("nccl", "ddp", "--leave-early", "--fault-rank", "2", "--fault-step", "25", launch="torchrun", nproc=3)
add("nccl", "ddp", "--leave-early", "--fault-rank", "0", launch="torchrun", nproc=4, tee=False)
add("nccl", "ddp", "--leave-early", "--fault-rank", "1", launch="ranks", nproc=2, timeout=60)

# E · training correctness
add("nan_loss", "plain", "--nan-at", "60")
add("nan_loss", "plain", "--nan-at", "45", "--style", "iter", launch="job")
add("nan_loss", "plain", "--nan-at", "30", "--anomaly")
add("nan_loss", "plain", "--nan-at", "80", "--anomaly", "--style", "epoch", launch="torchrun")
add("nan_loss", "plain", "--optimizer", "sgd", "--lr", "0.9", "--style", "pipe")
add("nan_loss", "plain", "--nan-at", "100", "--style", "json", "--steps", "300", launch="job")
add("nan_loss", "hf", *HF, "--nan-at", "25")
add("nan_loss", "hf", *HF, "--nan-at", "15", "--no-tqdm", launch="job")
add("nan_loss", "lightning", *LT, "--nan-at", "40", "--early-stop-nan", "--no-bar")
add("nan_loss", "lightning", *LT, "--nan-at", "70", "--tqdm")
add("nan_loss", "ddp", "--nan-at", "50", launch="torchrun", nproc=3)
add("nan_loss", "ddp", "--nan-at", "30", launch="torchrun", tee=False)
# mixed precision's loss scale collapsing: the backward pass overflows on every step from step 60, the
# scaler skips each step and halves its scale, and the printed loss stays finite
add("nan_loss", "plain", "--scaler", "--overflow-from", "60", "--steps", "200", launch="job")

add("loss_divergence", "plain", "--lr", "5", "--log-every", "20")
add("loss_divergence", "plain", "--lr", "2", "--style", "iter", launch="job")
add("loss_divergence", "plain", "--lr", "8", "--style", "epoch", "--steps", "400", "--log-every", "25")
add("loss_divergence", "plain", "--lr", "0", "--style", "json")                  # a flat plateau
add("loss_divergence", "plain", "--lr", "1e-9", "--steps", "300", launch="job")   # never decreases
add("loss_divergence", "hf", *HF, "--lr", "0", "--max-steps", "80")
add("loss_divergence", "lightning", *LT, "--lr", "6", "--tqdm", "--max-epochs", "4")
add("loss_divergence", "lightning", *LT, "--lr", "6", "--divergence-threshold", "50", "--no-bar")
add("loss_divergence", "ddp", "--lr", "6", launch="torchrun", nproc=3)
add("loss_divergence", "plain", "--lr", "4", "--style", "pipe", launch="torchrun", tee=False)

add("resume_from_scratch", "plain", "--resume-dir", "{work}/ckpt", "--print-args", setup=("ckpt",))
add("resume_from_scratch", "plain", "--resume-dir", "{work}/ckpt", "--style", "iter", setup=("ckpt",), launch="job", trace=True)
add("resume_from_scratch", "plain", "--resume-dir", "{work}/ckpt", "--print-args", "--style", "epoch", setup=("ckpt",), launch="job")
add("resume_from_scratch", "plain", "--resume-dir", "{work}/ckpt", "--print-args", "--style", "pipe", setup=("ckpt",), launch="torchrun")
add("resume_from_scratch", "hf", *HF, "--resume", "{work}/out/checkpoint-30", "--forget-resume", "--print-args", setup=("hf_ckpt",))
add("resume_from_scratch", "hf", *HF, "--resume", "--forget-resume", "--no-tqdm", setup=("hf_ckpt",), launch="job", trace=True)
add("resume_from_scratch", "lightning", *LT, "--resume-from", "{work}/checkpoints/last.ckpt", "--print-args", "--no-bar", setup=("lightning_ckpt",))
add("resume_from_scratch", "lightning", *LT, "--resume-from", "{work}/checkpoints/last.ckpt", "--tqdm", setup=("lightning_ckpt",), launch="job", trace=True)
add("resume_from_scratch", "plain", "--resume-dir", "{work}/ckpt", "--style", "json", setup=("ckpt",), launch="job", trace=True)
add("resume_from_scratch", "hf", *HF, "--resume", "{work}/out/checkpoint-15", "--forget-resume", "--print-args", "--no-tqdm", setup=("hf_ckpt",), launch="job")
# a relative path, as a job script in its working directory passes it
add("resume_from_scratch", "plain", "--resume-dir", "ckpt", "--print-args", "--style", "iter", setup=("ckpt",), launch="job")
add("resume_from_scratch", "hf", *HF, "--resume", "out/checkpoint-30", "--forget-resume", "--print-args", setup=("hf_ckpt",), launch="job", trace=True)
# a requeued job whose second attempt ignores the checkpoint: its checkpoint names start over
add("resume_from_scratch", "lightning", *LT, "--resume-from", "{work}/checkpoints/last.ckpt", "--save", "--verbose-ckpt",
    "--save-every", "10", "--max-epochs", "2", "--no-bar", "--print-args", launch="job",
    earlier=(*LT, "--save", "--verbose-ckpt", "--save-every", "10", "--max-steps", "1200", "--max-epochs", "100",
             "--no-bar"))

add("checkpoint_load_error", "plain", "--resume", "{work}/ckpt/last.pt", setup=("ckpt_hidden32",))
add("checkpoint_load_error", "plain", "--resume", "{work}/ckpt/last.pt", setup=("ckpt_ddp_prefixed",), launch="job")
add("checkpoint_load_error", "plain", "--resume", "{work}/ckpt/last.pt", setup=("ckpt_truncated",))
add("checkpoint_load_error", "plain", "--resume", "{work}/ckpt/last.pt", setup=("ckpt_with_namespace",), launch="job", trace=True)
add("checkpoint_load_error", "hf", *HF, "--resume")
add("checkpoint_load_error", "hf", *HF, "--resume", "{work}/out/checkpoint-500", launch="job")
add("checkpoint_load_error", "lightning", *LT, "--ckpt-path", "{work}/checkpoints/last.ckpt", "--hidden", "64",
    setup=("lightning_ckpt_hidden32",), launch="job")
add("checkpoint_load_error", "plain", "--resume", "{work}/ckpt/last.pt", "--hidden", "128", setup=("ckpt",), launch="torchrun")
add("checkpoint_load_error", "plain", "--resume", "{work}/ckpt/last.pt", "--style", "iter", setup=("ckpt_truncated",), launch="torchrun", tee=False)
add("checkpoint_load_error", "plain", "--resume", "{work}/ckpt/last.pt", setup=("ckpt_with_namespace",))
add("checkpoint_load_error", "lightning", *LT, "--ckpt-path", "{work}/checkpoints/last.ckpt", "--tqdm",
    setup=("lightning_ckpt_hidden32",))

add("undertrained", "plain", "--steps", "2", "--log-every", "1")
add("undertrained", "plain", "--steps", "3", "--log-every", "1", "--style", "iter", launch="job")
add("undertrained", "plain", "--steps", "2", "--style", "epoch")
add("undertrained", "hf", *HF, "--max-steps", "2", "--logging-steps", "1")
add("undertrained", "hf", *HF, "--max-steps", "3", "--logging-steps", "1", "--no-tqdm", launch="job")
add("undertrained", "lightning", *LT, "--max-steps", "2", "--no-bar")
add("undertrained", "lightning", *LT, "--max-steps", "3", "--tqdm")
add("undertrained", "ddp", "--steps", "2", "--log-every", "1", launch="torchrun")
add("undertrained", "ddp", "--steps", "3", "--log-every", "1", launch="torchrun", nproc=3, tee=False)
add("undertrained", "plain", "--steps", "2", "--log-every", "1", "--style", "json", launch="job")

# Python exceptions with no more specific class
for fault, launch, extra in (
        ("div_zero", "python", ()), ("div_zero_mean", "python", ("--style", "iter")),
        ("div_zero", "job", ()), ("div_zero_mean", "job", ("--style", "epoch")),
        ("div_zero", "torchrun", ())):
    add("div_zero", "plain", "--fault", fault, *extra, launch=launch)
add("div_zero", "hf", *HF, "--fault", "div_zero")
add("div_zero", "hf", *HF, "--fault", "div_zero_mean", "--no-tqdm", launch="job")
add("div_zero", "lightning", *LT, "--fault", "div_zero", "--no-bar")
add("div_zero", "lightning", *LT, "--fault", "div_zero_mean", "--tqdm", launch="torchrun")
add("div_zero", "plain", "--fault", "div_zero", "--style", "pipe", launch="ranks", nproc=2)

for fault, launch, extra in (
        ("assert_msg", "python", ()), ("assert_bare", "python", ("--style", "iter")),
        ("assert_msg", "job", ()), ("assert_bare", "job", ("--style", "epoch")),
        ("assert_msg", "torchrun", ())):
    add("assertion", "plain", "--fault", fault, *extra, launch=launch)
add("assertion", "hf", *HF, "--fault", "assert_msg")
add("assertion", "hf", *HF, "--fault", "assert_bare", "--no-tqdm", launch="job")
add("assertion", "lightning", *LT, "--fault", "assert_msg", "--no-bar")
add("assertion", "lightning", *LT, "--fault", "assert_bare", "--tqdm", launch="torchrun")
add("assertion", "plain", "--fault", "assert_bare", launch="ranks", nproc=3)

for fault, launch, extra in (
        ("shape", "python", ()), ("no_grad", "python", ("--style", "iter")),
        ("backward_twice", "job", ()), ("dtype", "job", ("--style", "epoch")),
        ("inplace", "torchrun", ()), ("shape", "torchrun", ("--style", "pipe"))):
    add("runtime_error", "plain", "--fault", fault, *extra, launch=launch)
add("runtime_error", "hf", *HF, "--fault", "dtype")
add("runtime_error", "hf", *HF, "--fault", "backward_twice", "--no-tqdm", launch="job")
add("runtime_error", "lightning", *LT, "--fault", "shape", "--no-bar")
add("runtime_error", "lightning", *LT, "--fault", "no_grad", "--tqdm", launch="job")

for fault, launch, extra in (
        ("keyerror", "python", ()), ("typeerror", "python", ("--style", "iter")),
        ("attributeerror", "job", ()), ("valueerror", "job", ("--style", "epoch")),
        ("index", "torchrun", ()), ("keyerror", "torchrun", ("--style", "pipe"))):
    add("traceback", "plain", "--fault", fault, *extra, launch=launch)
add("traceback", "hf", *HF, "--fault", "keyerror")
add("traceback", "hf", *HF, "--fault", "attributeerror", "--no-tqdm", launch="job")
add("traceback", "lightning", *LT, "--fault", "typeerror", "--no-bar")
add("traceback", "lightning", *LT, "--fault", "index", "--tqdm", launch="job")

# G · healthy runs of every framework, some with benign look-alikes, some resumed for real
add("healthy", "plain")
add("healthy", "plain", "--style", "iter", "--steps", "400", "--look-alikes", launch="job")
add("healthy", "plain", "--style", "epoch", "--steps", "300", "--workers", "2")
add("healthy", "plain", "--style", "json", "--steps", "250", launch="job", trace=True)
add("healthy", "plain", "--style", "pipe", "--look-alikes", launch="torchrun", nproc=3)
add("healthy", "plain", "--resume", "{work}/ckpt/last.pt", "--steps", "160", setup=("ckpt",), launch="job")
add("healthy", "plain", "--steps", "6000", "--log-every", "1", "--style", "iter", timeout=600)
add("healthy", "ddp", "--steps", "150", launch="torchrun", nproc=4)
add("healthy", "ddp", "--steps", "150", "--all-ranks-log", launch="torchrun", nproc=2, tee=False)
add("healthy", "ddp", "--steps", "120", launch="ranks", nproc=3)
add("healthy", "hf", *HF, "--max-steps", "150", "--lr", "5e-3")
add("healthy", "hf", *HF, "--max-steps", "120", "--lr", "5e-3", "--no-tqdm", launch="job")
add("healthy", "hf", *HF, "--max-steps", "60", "--resume", "--save-steps", "30", setup=("hf_ckpt",), launch="job")
add("healthy", "hf", *HF, "--max-steps", "2000", "--logging-steps", "1", "--lr", "5e-3", timeout=600)
add("healthy", "lightning", *LT)
add("healthy", "lightning", *LT, "--tqdm", "--max-epochs", "4", launch="job")
add("healthy", "lightning", *LT, "--ckpt-path", "{work}/checkpoints/last.ckpt", "--max-epochs", "3", "--no-bar",
    setup=("lightning_ckpt",))
add("healthy", "lightning", *LT, "--max-epochs", "2", "--tqdm", launch="torchrun", tee=False)
# look-alikes of the training-correctness classes: a resume that does not announce its load (its
# counters go on), validation losses above the training loss, a checkpoint saved at every step
add("healthy", "plain", "--resume", "ckpt/last.pt", "--quiet-resume", "--steps", "200", "--print-args",
    setup=("ckpt",), launch="job")
add("healthy", "plain", "--eval-every", "50", "--steps", "300", "--style", "epoch")
add("healthy", "hf", *HF, "--max-steps", "80", "--eval-steps", "20", "--lr", "5e-3")
add("healthy", "plain", "--save", "{work}/ckpt", "--save-every", "1", "--steps", "120", "--log-every", "5", launch="job")
# a sweep: two trials in one job, each saving its own step-named checkpoints in its own directory
add("healthy", "lightning", "--root", "{work}/trial-2", "--lr", "1e-3", "--save", "--verbose-ckpt", "--save-every", "10",
    "--max-epochs", "2", "--no-bar", launch="job",
    earlier=("--root", "{work}/trial-1", "--save", "--verbose-ckpt", "--save-every", "10", "--max-steps", "1200",
             "--max-epochs", "100", "--no-bar"))
# a debugging switch left on in the batch script: synchronous kernel launches slow every step (a
# throughput finding), and the run is healthy
add("healthy", "plain", "--steps", "200", "--print-args", launch="job", trace=True,
    exports={"CUDA_LAUNCH_BLOCKING": "1", "OMP_NUM_THREADS": "2"})
# label smoothing: the loss settles at a floor well above zero and sits flat there to the end
add("healthy", "hf", *HF, "--max-steps", "3000", "--lr", "5e-3", "--logging-steps", "100", "--label-smoothing", "0.3",
    "--no-tqdm")
# mixed precision with one overflow the scaler absorbs (a corrupt batch between two logged steps): the
# scale halves once and training goes on
add("healthy", "plain", "--scaler", "--nan-at", "55", "--steps", "200")
