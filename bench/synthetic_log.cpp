#include "synthetic_log.hpp"

#include <cstdio>
#include <random>

namespace gpudiag::bench {

std::string synthetic_training_log(std::size_t bytes) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> jitter(-0.05, 0.05);
  std::string log;
  log.reserve(bytes + 4096);
  char line[512];
  double loss = 11.0;
  for (unsigned long step = 1; log.size() < bytes; ++step) {
    unsigned rank = step % 8;
    loss = loss * 0.99995 + jitter(rng) * 0.01;
    switch (step % 10) {
      case 0:
        std::snprintf(line, sizeof line,
                      "gpu%02u:%u:%u [%u] NCCL INFO Channel %02lu/0 : %u[%u] -> %u[%u] via P2P/IPC/read\n",
                      rank, 4000 + rank, 4100 + rank, rank, step % 32, rank, rank, (rank + 1) % 8,
                      (rank + 1) % 8);
        break;
      case 3:
        std::snprintf(line, sizeof line,
                      "{'loss': '%.4f', 'grad_norm': '%.3f', 'learning_rate': '%.2e', 'epoch': '%.2f'}\n",
                      loss, 1.0 + jitter(rng), 3e-4, step / 100000.0);
        break;
      case 5:
        std::snprintf(line, sizeof line,
                      " %3lu%%|#####     | %lu/1000000 [12:%02lu:%02lu<8:01:12,  2.31it/s]\n",
                      step / 10000 % 100, step, step / 60 % 60, step % 60);
        break;
      case 7:
        std::snprintf(line, sizeof line,
                      "[rank%u]:[W1102 10:%02lu:%02lu.%06lu ProcessGroupNCCL.cpp:4571] using GPU %u to perform "
                      "barrier as devices used by this process are currently unknown.\n",
                      rank, step / 60 % 60, step % 60, step % 1000000, rank);
        break;
      default:
        std::snprintf(line, sizeof line,
                      "[rank%u]: step %lu | loss %.4f | lr 3.0e-04 | tokens/s %lu | mem 61.2 GiB\n", rank,
                      step, loss, 180000 + step % 5000);
    }
    log += line;
  }
  log +=
      "[rank3]: Traceback (most recent call last):\n"
      "[rank3]:   File \"train.py\", line 210, in <module>\n"
      "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total "
      "capacity of 79.10 GiB of which 1.02 GiB is free.\n";
  return log;
}

std::string synthetic_nccl_log(std::size_t bytes) {
  std::string log;
  log.reserve(bytes + 512);
  char line[512];
  for (unsigned long i = 0; log.size() < bytes; ++i) {
    const unsigned rank = i % 8;
    if (i % 7 == 6)
      std::snprintf(line, sizeof line,
                    "[rank%u]:[W1102 10:%02lu:%02lu.%06lu ProcessGroupNCCL.cpp:4571] using GPU %u to perform "
                    "barrier as devices used by this process are currently unknown.\n",
                    rank, i / 60 % 60, i % 60, i % 1000000, rank);
    else
      std::snprintf(line, sizeof line,
                    "gpu%02u:%u:%u [%u] NCCL INFO Channel %02lu/0 : %u[%u] -> %u[%u] via P2P/IPC/read\n", rank,
                    4000 + rank, 4100 + rank, rank, i % 32, rank, rank, (rank + 1) % 8, (rank + 1) % 8);
    log += line;
  }
  return log +
         "[rank2]:[E1102 11:00:00.000000 ProcessGroupNCCL.cpp:632] [Rank 2] Watchdog caught collective operation "
         "timeout: WorkNCCL(SeqNum=512, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
         "600009 milliseconds before timing out.\n";
}

}  // namespace gpudiag::bench
