"""The surroundings real cluster logs have and a clean composed log lacks.

Batch-script banners, module loads, environment dumps, package listings,
`collect_env` and `ds_report` reports, nvidia-smi tables, NCCL at full
verbosity, tqdm bars redrawn with carriage returns, ANSI colour, warnings and
logged exceptions that name errors in runs that go on, side processes killed
by the batch script, other schedulers' job records, and logs pasted in pieces.
Each generator takes a ``random.Random``; the messages follow what the
programs print (../shared/docs/log-formats.md and the programs' sources).
"""

from __future__ import annotations

import random
from typing import List

import jobs as J

ESC = "\x1b"


def slurm_prolog(rng: random.Random, job: int, nodes: List[str]) -> List[str]:
    return ["=" * 60, f"SLURM_JOB_ID       = {job}", f"SLURM_JOB_NODELIST = {','.join(nodes)}",
            f"SLURM_NNODES       = {len(nodes)}", "SLURM_GPUS_ON_NODE = 8", "Start time: " +
            f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)} 0{rng.randint(0, 9)}:1{rng.randint(0, 9)}:00", "=" * 60]


def slurm_epilog(job: int) -> List[str]:
    return ["=" * 60, f"Job {job} epilog: cleaning /tmp on all nodes", "=" * 60]


def module_loads(rng: random.Random) -> List[str]:
    out = ["+ module purge", "+ module load cuda/12.4 nccl/2.21.5 gcc/12.2"]
    if rng.random() < 0.5:
        out.append("Lmod has detected the following error:  The following module(s) are unknown: \"cudnn/8\"")
    out.append("+ source /opt/venvs/llm/bin/activate")
    return out


def env_dump(rng: random.Random) -> List[str]:
    return ["+ env | sort | grep -E 'NCCL|CUDA|TORCH'",
            "CUDA_DEVICE_MAX_CONNECTIONS=1", "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
            "NCCL_DEBUG=INFO", "NCCL_IB_TIMEOUT=22", "NCCL_ASYNC_ERROR_HANDLING=1",
            "TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "TORCH_SHOW_CPP_STACKTRACES=1",
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"]


def pip_freeze(rng: random.Random) -> List[str]:
    return ["+ pip freeze", "accelerate==1.1.1", "datasets==3.1.0", "deepspeed==0.15.4",
            "flash-attn==2.6.3", "nvidia-nccl-cu12==2.21.5", "torch==2.5.1", "transformers==4.46.3",
            "triton==3.1.0", "wandb==0.18.7"]


def collect_env(rng: random.Random) -> List[str]:
    return ["Collecting environment information...", "PyTorch version: 2.5.1+cu124",
            "Is debug build: False", "CUDA used to build PyTorch: 12.4", "ROCM used to build PyTorch: N/A", "",
            "OS: Ubuntu 22.04.4 LTS (x86_64)", "GCC version: (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0",
            "Python version: 3.11.10 (main, Oct  3 2024, 07:29:13) [GCC 11.2.0] (64-bit runtime)",
            "Is CUDA available: True", "CUDA runtime version: 12.4.131",
            "GPU models and configuration:", "GPU 0: NVIDIA H100 80GB HBM3", "GPU 1: NVIDIA H100 80GB HBM3",
            "Nvidia driver version: 550.90.07", "cuDNN version: Could not collect",
            "HIP runtime version: N/A", "MIOpen runtime version: N/A", "Is XNNPACK available: True", "",
            "Versions of relevant libraries:", "[pip3] numpy==1.26.4", "[pip3] torch==2.5.1",
            "[pip3] triton==3.1.0", "[conda] Could not collect"]


def ds_report(rng: random.Random) -> List[str]:
    y, n = f"{ESC}[92m[YES]{ESC}[0m", f"{ESC}[93m[NO]{ESC}[0m"
    return ["-" * 50, "DeepSpeed C++/CUDA extension op report", "-" * 50,
            "NOTE: Ops not installed will be just-in-time (JIT) compiled at", "      runtime if needed. Op compatibility means that your system",
            "      meet the required dependencies to JIT install the op.", "-" * 50,
            "op name ................ installed .. compatible", "-" * 50,
            f"{ESC}[93m [WARNING] {ESC}[0m async_io requires the dev libaio .so object and headers but these were not found.",
            f"{ESC}[93m [WARNING] {ESC}[0m If libaio is already installed (perhaps from source), try setting the CFLAGS and LDFLAGS environment variables to where it can be found.",
            f"async_io ............... {n} ....... {n}", f"fused_adam ............. {n} ....... {y}",
            f"cpu_adam ............... {n} ....... {y}", f"sparse_attn ............ {n} ....... {n}",
            f"{ESC}[93m [WARNING] {ESC}[0m sparse_attn requires a torch version >= 1.5 and < 2.0 but detected 2.5",
            "-" * 50, "DeepSpeed general environment info:",
            "torch install path ............... ['/opt/venvs/llm/lib/python3.11/site-packages/torch']",
            "torch version .................... 2.5.1+cu124", "deepspeed info ................... 0.15.4, unknown, unknown"]


def nvidia_smi(rng: random.Random, gpus: int = 8) -> List[str]:
    out = ["+ nvidia-smi", "+-----------------------------------------------------------------------------------------+",
           "| NVIDIA-SMI 550.90.07              Driver Version: 550.90.07      CUDA Version: 12.4     |",
           "|-----------------------------------------+------------------------+----------------------+",
           "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
           "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
           "|=========================================+========================+======================|"]
    for g in range(gpus):
        out += [f"|   {g}  NVIDIA H100 80GB HBM3          On  |   00000000:{0x18 + 16 * g:02X}:00.0 Off |                    0 |",
                f"| N/A   {rng.randint(28, 36)}C    P0             {rng.randint(68, 75)}W /  700W |       1MiB /  81559MiB |      0%      Default |",
                "+-----------------------------------------+------------------------+----------------------+"]
    return out


def nccl_verbose(rng: random.Random, host: str, pid: int, rank: int, nranks: int) -> List[str]:
    """NCCL_DEBUG=INFO start-up of one rank, optional plugins that are absent included."""
    tid = pid + rng.randint(40, 90)
    p = f"{host}:{pid}:{tid} [{rank % 8}] NCCL INFO"
    lines = [f"{p} cudaDriverVersion 12040", f"{p} Bootstrap : Using ib0:10.40.7.{rank + 2}<0>",
             f"{p} NET/Plugin: No plugin found (libnccl-net.so)",
             f"{p} NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory : when loading libnccl-net.so",
             f"{p} NET/Plugin: Using internal network plugin.",
             f"{p} NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.40.7.{rank + 2}<0>",
             f"{p} Using non-device net plugin version 0", f"{p} Using network IB",
             f"{p} ncclCommInitRank comm 0x{rng.getrandbits(40):x} rank {rank} nranks {nranks} cudaDev {rank % 8} nvmlDev {rank % 8} busId {0x18 + 16 * (rank % 8):x}000 commId 0x{rng.getrandbits(64):x} - Init START",
             f"{p} Setting affinity for GPU {rank % 8} to ffff,ffffffff",
             f"{p} NVLS multicast support is not available on dev {rank % 8}",
             f"{p} comm 0x{rng.getrandbits(40):x} rank {rank} nRanks {nranks} nNodes {max(1, nranks // 8)} localRanks 8 localRank {rank % 8} MNNVL 0",
             f"{p} Channel 00/0 : {rank}[{rank % 8}] -> {(rank + 1) % nranks}[{(rank + 1) % 8}] via P2P/CUMEM/read",
             f"{p} Connected all rings", f"{p} Connected all trees",
             f"{p} ncclCommInitRank comm 0x{rng.getrandbits(40):x} rank {rank} nranks {nranks} cudaDev {rank % 8} nvmlDev {rank % 8} busId {0x18 + 16 * (rank % 8):x}000 commId 0x{rng.getrandbits(64):x} - Init COMPLETE"]
    return lines


def harmless_warnings(rng: random.Random, rank: int) -> List[str]:
    """Warnings and logged exceptions that name errors, in a run that goes on."""
    pool = [
        ["/opt/venvs/llm/lib/python3.11/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load image "
         "Python extension: 'libc10_cuda.so: cannot open shared object file: No such file or directory'If you don't "
         "plan on using image functionality from `torchvision.io`, you can ignore this warning. Otherwise, there might "
         "be something wrong with your environment. Did you have `libjpeg` or `libpng` installed before building "
         "`torchvision` from source?", "  warn("],
        [f"[2026-03-02 09:14:20,331] torch._dynamo.convert_frame: [WARNING] WON'T CONVERT forward /workspace/model.py line 88",
         "[2026-03-02 09:14:20,331] torch._dynamo.convert_frame: [WARNING] due to: ",
         "[2026-03-02 09:14:20,331] torch._dynamo.convert_frame: [WARNING] Traceback (most recent call last):",
         "[2026-03-02 09:14:20,331] torch._dynamo.convert_frame: [WARNING] FileNotFoundError: [Errno 2] No such file or directory: 'ldconfig'"],
        [f"[rank{rank}]:[W302 09:14:05.412031 TCPStore.cpp:340] [c10d] TCP client failed to connect/validate to host "
         "10.40.7.2:29500 - retrying (try=0, timeout=1800000ms, delay=496ms): Connection refused"],
        ["WARNING:root:Could not load the custom kernel: RuntimeError: Error building extension 'fused_rope'; "
         "falling back to the PyTorch implementation"],
        ["/opt/venvs/llm/lib/python3.11/site-packages/torch/utils/checkpoint.py:1399: FutureWarning: "
         "`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', args...)` instead.",
         "  with device_autocast_ctx, torch.cpu.amp.autocast(**cpu_autocast_kwargs), recompute_context:  # type: ignore[attr-defined]"],
        ["2026-03-02 09:15:01,002 - datasets.builder - WARNING - Found cached dataset json "
         "(/data/hf/json/default-2ad1/0.0.0): FileNotFoundError: [Errno 2] No such file or directory: "
         "'/data/hf/json/default-2ad1/0.0.0/dataset_info.json', regenerating"],
        [f"{ESC}[33mWARNING{ESC}[0m: Unable to load `bitsandbytes` CUDA kernels: CUDA Setup failed despite GPU being available."],
    ]
    return [line for block in rng.sample(pool, rng.randint(3, 5)) for line in block]


def tqdm_epoch(rng: random.Random, epoch: int, batches: int, loss: float, colour: bool) -> str:
    """One tqdm bar redrawn with carriage returns: the whole epoch is one line."""
    frames = []
    for n in range(0, batches + 1, max(1, batches // 8)):
        bar = "█" * (10 * n // batches)
        frames.append(f"Epoch {epoch}: {100 * n // batches:3d}%|{bar:<10}| {n}/{batches} "
                      f"[{n // 7:02d}:{n % 60:02d}<{(batches - n) // 7:02d}:00, {rng.uniform(6, 9):.2f}it/s, "
                      f"loss={loss * (1 + rng.gauss(0, 0.02)):.4f}]")
    text = "\r".join(frames)
    return f"{ESC}[36m{text}{ESC}[0m" if colour else text


def side_process_killed(rng: random.Random, job: int) -> List[str]:
    """The batch script stops the GPU monitor it started beside the training."""
    pid = rng.randint(20000, 90000)
    return [f"/var/spool/slurmd/job{job}/slurm_script: line {rng.randint(30, 60)}: {pid} Killed"
            f"                  nvidia-smi dmon -s pucm -d 30 > gpu_stats.log",
            f"/var/spool/slurmd/job{job}/slurm_script: line {rng.randint(61, 70)}: {pid + 3} Terminated"
            f"              tail -f train.out"]


def lsf_record(rng: random.Random, job: int, ok: bool, term: str = "", code: int = 0) -> List[str]:
    """LSF's job report appended to the output file."""
    out = ["", "------------------------------------------------------------",
           "Sender: LSF System <lsfadmin@hpc.example.org>",
           f"Subject: Job {job}: <train_{rng.randint(1, 99)}> in cluster <dcc> {'Done' if ok else 'Exited'}", "",
           f"Job <train_{rng.randint(1, 99)}> was submitted from host <login1> by user <user> in cluster <dcc>.",
           "Job was executed on host(s) <4*gpu-node>, in queue <gpua100>, as user <user> in cluster <dcc>.",
           "</home/user> was used as the home directory.", "</home/user/proj> was used as the working directory.",
           "Results reported at Sun Dec  3 16:02:10 2026", "",
           "Your job looked like:", "", "------------------------------------------------------------",
           "# LSBATCH: User input", "#BSUB -q gpua100", "#BSUB -W 24:00", "python train.py",
           "------------------------------------------------------------", ""]
    out += ["Successfully completed."] if ok else [f"{term}", f"Exited with exit code {code}."]
    out += ["", "Resource usage summary:", "",
            f"    CPU time :                                   {rng.uniform(1000, 90000):.2f} sec.",
            f"    Max Memory :                                 {rng.randint(2000, 30000)} MB",
            "    Max Swap :                                   -",
            f"    Run time :                                   {rng.randint(1000, 86000)} sec.", "",
            "The output (if any) is above this job summary.", ""]
    return out


def pbs_epilogue(rng: random.Random, job: int, killed: str = "") -> List[str]:
    out = [killed] if killed else []
    return out + ["", "======================================================================================",
                  f"                  Resource Usage on 2026-04-1{rng.randint(0, 9)} 11:02:13:",
                  f"   Job Id:             {job}.pbs01", "   Project:            proj-llm",
                  "   Exit Status:        " + ("271" if killed else "0"),
                  f"   Walltime Used:      {'24:00:17' if killed else '05:12:40'}", "   NCPUs Used:         48",
                  "======================================================================================"]
