#pragma once

#include <string>
#include <vector>

namespace gpudiag::cli {

// Exit statuses of the gpudiag command (documented in the README and --help).
// 0: it ran; 1: an input could not be read (diagnose) or an example failed
// (rules check); 2: a usage error, or rules that do not load, in every command.
enum Status : int { kOk = 0, kInputFailed = 1, kUsage = 2 };

int run_diagnose(const std::vector<std::string>& args);
int run_rules(const std::vector<std::string>& args);
int run_taxonomy(const std::vector<std::string>& args);

}  // namespace gpudiag::cli
