#include "signals.hpp"

#include <array>
#include <utility>

namespace gpudiag::detail {
namespace {

// Linux's numbering, which is what the logs this reads come from.
constexpr std::array<std::pair<int, std::string_view>, 24> kSignals = {{
    {1, "SIGHUP"},   {2, "SIGINT"},    {3, "SIGQUIT"},  {4, "SIGILL"},   {5, "SIGTRAP"},
    {6, "SIGABRT"},  {7, "SIGBUS"},    {8, "SIGFPE"},   {9, "SIGKILL"},  {10, "SIGUSR1"},
    {11, "SIGSEGV"}, {12, "SIGUSR2"},  {13, "SIGPIPE"}, {14, "SIGALRM"}, {15, "SIGTERM"},
    {16, "SIGSTKFLT"}, {17, "SIGCHLD"}, {18, "SIGCONT"}, {19, "SIGSTOP"}, {20, "SIGTSTP"},
    {24, "SIGXCPU"}, {25, "SIGXFSZ"},  {30, "SIGPWR"},  {31, "SIGSYS"},
}};

}  // namespace

std::optional<int> signal_of(std::optional<int> exit_code) {
  if (!exit_code) return std::nullopt;
  const int c = *exit_code;
  if (c < 0 && c > -65) return -c;
  if (c > 128 && c < 128 + 65) return c - 128;
  return std::nullopt;
}

std::string_view signal_name(int signo) {
  for (const auto& [n, name] : kSignals)
    if (n == signo) return name;
  return {};
}

std::optional<int> signal_number(std::string_view name) {
  for (const auto& [n, known] : kSignals)
    if (known == name || known.substr(3) == name) return n;
  return std::nullopt;
}

std::string describe_exit(int exit_code) {
  std::string s = "exit code " + std::to_string(exit_code);
  if (auto signo = signal_of(exit_code)) {
    std::string_view name = signal_name(*signo);
    s += name.empty() ? " (signal " + std::to_string(*signo) + ")" : " (" + std::string(name) + ")";
  }
  return s;
}

}  // namespace gpudiag::detail
