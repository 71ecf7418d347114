#include "signals.hpp"

#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <utility>

#include "gpudiag/diagnose.hpp"

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

// How a shell (strsignal) words the signal that ended a job: "User defined
// signal 2" is bash's report of a job killed by SIGUSR2.
constexpr std::array<std::pair<int, std::string_view>, 12> kDescriptions = {{
    {1, "Hangup"},         {2, "Interrupt"},         {4, "Illegal instruction"},
    {6, "Aborted"},        {7, "Bus error"},         {8, "Floating point exception"},
    {9, "Killed"},         {10, "User defined signal 1"}, {11, "Segmentation fault"},
    {12, "User defined signal 2"}, {15, "Terminated"}, {24, "CPU time limit exceeded"},
}};

// The Windows statuses a crashed process exits with (NTSTATUS, as unsigned
// 32-bit numbers), and the Linux signal each stands for.
struct WindowsStatus {
  std::uint32_t code;
  std::string_view name;
  int signo;
};
constexpr std::array<WindowsStatus, 8> kWindowsStatuses = {{
    {0xC0000005u, "STATUS_ACCESS_VIOLATION", 11},
    {0xC00000FDu, "STATUS_STACK_OVERFLOW", 11},
    {0xC000001Du, "STATUS_ILLEGAL_INSTRUCTION", 4},
    {0xC0000094u, "STATUS_INTEGER_DIVIDE_BY_ZERO", 8},
    {0xC000008Eu, "STATUS_FLOAT_DIVIDE_BY_ZERO", 8},
    {0xC0000409u, "STATUS_STACK_BUFFER_OVERRUN", 6},  // a fail-fast: abort() in the C runtime
    {0xC0000374u, "STATUS_HEAP_CORRUPTION", 6},
    {0xC000013Au, "STATUS_CONTROL_C_EXIT", 2},
}};

const WindowsStatus* windows_status(int exit_code) {
  for (const WindowsStatus& s : kWindowsStatuses)
    if (static_cast<std::uint32_t>(exit_code) == s.code) return &s;
  return nullptr;
}

}  // namespace

std::optional<int> signal_of(std::optional<int> exit_code) {
  if (!exit_code) return std::nullopt;
  const int c = *exit_code;
  if (c < 0 && c > -65) return -c;
  if (c > 128 && c < 128 + 65) return c - 128;
  if (const WindowsStatus* s = c < 0 ? windows_status(c) : nullptr) return s->signo;
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
  for (const auto& [n, words] : kDescriptions)
    if (words == name) return n;
  return std::nullopt;
}

std::string describe_exit(int exit_code) {
  if (const WindowsStatus* w = exit_code < 0 ? windows_status(exit_code) : nullptr) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08X", w->code);
    return "exit code " + std::to_string(w->code) + " (" + hex + ", " + std::string(w->name) + ": as " +
           std::string(signal_name(w->signo)) + ")";
  }
  std::string s = "exit code " + std::to_string(exit_code);
  if (auto signo = signal_of(exit_code)) {
    std::string_view name = signal_name(*signo);
    s += name.empty() ? " (signal " + std::to_string(*signo) + ")" : " (" + std::string(name) + ")";
  }
  return s;
}

}  // namespace gpudiag::detail

namespace gpudiag {

std::optional<int> parse_exit_status(std::string_view text) {
  long long v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  if (v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max()) return static_cast<int>(v);
  if (v > 0 && v <= static_cast<long long>(std::numeric_limits<std::uint32_t>::max()))
    return static_cast<int>(static_cast<std::uint32_t>(v));  // two's complement: 3221225477 -> -1073741819
  return std::nullopt;
}

}  // namespace gpudiag
