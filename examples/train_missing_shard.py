"""A training loop that dies the way many do: a data shard is missing. The
failure is Python's own (no message typed in), for the gpudiag run demo."""

import math
import sys

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
for step in range(1, steps + 1):
    print(f"step {step} loss {2.5 * math.exp(-step / 20):.4f}", flush=True)
    if step % 10 == 0:
        print(f"saved checkpoint checkpoints/step-{step}.pt at step {step}", flush=True)
with open("data/shard-00042.bin", "rb") as shard:  # never written: the job ends here
    shard.read()
