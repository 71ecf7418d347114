#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gpudiag/version.hpp"

namespace {

constexpr const char* kUsage = R"(usage: gpudiag <command> [options]

Says why a GPU training job ended, quoting the log lines that show it.

commands:
  diagnose FILE|DIR... diagnose training logs: files, directories, archives, '-' for stdin
  rules list           list the rules in priority order
  rules check [DIR]    validate and compile rules, run their examples
  taxonomy             the classes gpudiag can report (--format markdown: docs/taxonomy.md)

options:
  -h, --help           show this help; 'gpudiag <command> --help' for a command
  --version            print the versions of gpudiag and Hyperscan

examples:
  gpudiag diagnose train.log
  gpudiag diagnose --exit-code -9 --format json rank*.log
  kubectl logs job/train | gpudiag diagnose -

exit status: 0 when it ran; 1 when an input could not be read (the others are
still diagnosed) or a rule's example failed; 2 on a usage error or rules that
do not load, in every command.
)";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kUsage;
    return gpudiag::cli::kUsage;
  }
  const std::string command = args.front();
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "-h" || command == "--help" || command == "help") {
    std::cout << kUsage;
    return gpudiag::cli::kOk;
  }
  if (command == "--version") {
    std::cout << "gpudiag " << gpudiag::version() << " (Hyperscan " << gpudiag::hyperscan_version()
              << ")\n";
    return gpudiag::cli::kOk;
  }
  try {
    if (command == "diagnose") return gpudiag::cli::run_diagnose(rest);
    if (command == "rules") return gpudiag::cli::run_rules(rest);
    if (command == "taxonomy") return gpudiag::cli::run_taxonomy(rest);
  } catch (const std::exception& e) {
    std::cerr << "gpudiag: " << e.what() << "\n";
    return gpudiag::cli::kUsage;
  }
  std::cerr << "gpudiag: unknown command '" << command << "'\n\n" << kUsage;
  return gpudiag::cli::kUsage;
}
