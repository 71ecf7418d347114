#pragma once

#include <cstddef>
#include <string>

namespace gpudiag::bench {

// A deterministic log in the shape of a long multi-rank training job:
// rank-prefixed step lines, NCCL INFO chatter, warnings, tqdm bars, HF
// Trainer records, ending in a CUDA OOM traceback. About `bytes` long.
std::string synthetic_training_log(std::size_t bytes);

// NCCL INFO lines and warnings only: no line mentions the loss. About
// `bytes` long, ending in a collective timeout.
std::string synthetic_nccl_log(std::size_t bytes);

}  // namespace gpudiag::bench
