#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
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
  batch INPUT...       reclassify many jobs into JSONL, CSV or Parquet, on every core
                       (the Python package's: pip install 'gpudiag[batch]')
  run -- CMD ARGS...   run a training command, keep its log, diagnose it as it
                       streams; notify, and restart it when a rerun will help
  watch FILE           follow a log another program writes; report when it
                       shows the job's end, or when it goes silent (a hang)
  rules list           list the rules in priority order
  rules check [DIR]    validate and compile rules, run their examples
  taxonomy             the classes gpudiag can report (--format markdown: docs/taxonomy.md)

options:
  -h, --help           show this help; 'gpudiag <command> --help' for a command
  --version            print the versions of gpudiag and Hyperscan

examples:
  gpudiag diagnose train.log
  gpudiag diagnose --format brief --stats logs/
  gpudiag diagnose --exit-code -9 --format json rank*.log
  kubectl logs job/train | gpudiag diagnose
  gpudiag run --notify-webhook https://hooks.example/x -- python train.py

exit status: 0 when it ran; 1 when an input could not be read (the others are
still diagnosed) or a rule's example failed; 2 on a usage error or rules that
do not load, in every command; 3 when 'diagnose --fail-on' matched; 4 when
'watch --silence' saw the log go silent. 'run' exits with the command's own
status (128 + N for signal N), 125 when it could not start it.
)";

// Runs the package's batch command, or says how to get the package.
constexpr const char* kBatch = R"(import sys
try:
    from gpudiag._batch import main
except ImportError as e:
    sys.exit(f"gpudiag batch: {sys.executable} cannot import the gpudiag package ({e}); "
             "pip install 'gpudiag[batch]' there, or set GPUDIAG_PYTHON to an interpreter that has it")
sys.exit(main(sys.argv[1:])))";

// `gpudiag batch` is the Python package's (its Parquet output is pyarrow's):
// this replaces the process with the interpreter running it.
int run_batch(const std::vector<std::string>& args) {
  const std::string interpreter = gpudiag::cli::python();
  std::vector<std::string> command{interpreter, "-c", kBatch};
  command.insert(command.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : command) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::cerr << "gpudiag batch: cannot run " << interpreter << ": " << std::strerror(errno)
            << " (set GPUDIAG_PYTHON to an interpreter with the gpudiag package)\n";
  return gpudiag::cli::kUsage;
}

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
    if (command == "batch") return run_batch(rest);
    if (command == "run") return gpudiag::cli::run_command(rest);
    if (command == "watch") return gpudiag::cli::run_watch(rest);
    if (command == "rules") return gpudiag::cli::run_rules(rest);
    if (command == "taxonomy") return gpudiag::cli::run_taxonomy(rest);
  } catch (const std::exception& e) {
    std::cerr << "gpudiag: " << e.what() << "\n";
    return gpudiag::cli::kUsage;
  }
  std::cerr << "gpudiag: unknown command '" << command << "'\n\n" << kUsage;
  return gpudiag::cli::kUsage;
}
