#pragma once

#include <string>
#include <vector>

namespace gpudiag::cli {

// Exit statuses of the gpudiag command (documented in the README and --help).
enum Status : int { kOk = 0, kInputFailed = 1, kUsage = 2 };

int run_diagnose(const std::vector<std::string>& args);
int run_rules(const std::vector<std::string>& args);

}  // namespace gpudiag::cli
