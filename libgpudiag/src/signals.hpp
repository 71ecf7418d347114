#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpudiag::detail {

// The signal an exit status reports: -N as subprocess and torchelastic report
// it, 128+N as a shell does; the Windows status that stands for one (an
// access violation for SIGSEGV, a fail-fast abort for SIGABRT, Ctrl-C for
// SIGINT). 0..128 are a process's own exit codes.
std::optional<int> signal_of(std::optional<int> exit_code);

// SIGKILL for 9; empty for a number with no common name.
std::string_view signal_name(int signo);

// The number of a name such as "SIGKILL" or "KILL", or of a shell's words for
// it ("Killed", "User defined signal 2"); nullopt when unknown.
std::optional<int> signal_number(std::string_view name);

// "exit code -9 (SIGKILL)", "exit code 1", "exit code 3221225477
// (0xC0000005, STATUS_ACCESS_VIOLATION: as SIGSEGV)".
std::string describe_exit(int exit_code);

}  // namespace gpudiag::detail
