#pragma once

// Runs one command as `gpudiag run` does: its output relayed to the terminal
// as it comes and, a whole line at a time, to a durable log and a diagnosis
// stream; the signals the wrapper receives passed on; its exit status read
// back. Knows nothing of restarts or notifications (run_command.cpp).

#include <csignal>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpudiag/diagnose.hpp"

namespace gpudiag::cli {

// What became of one attempt.
struct AttemptResult {
  int status = 0;                // as a shell reports it: the code, 128 + N for signal N,
                                 // 126 not executable, 127 not found
  std::optional<int> exit_code;  // as the diagnosis reads it: negative for a signal
  std::string exec_error;        // why the command could not be started, if it could not
  double seconds = 0;
  bool interrupted = false;      // the wrapper was asked to stop (SIGINT, SIGTERM, SIGHUP)
};

// The signals gpudiag run passes on, caught through a self-pipe so that the
// relay loop sees them among its descriptors. Installed once per process.
class SignalPipe {
 public:
  SignalPipe();
  ~SignalPipe();
  int fd() const { return read_end_; }
  // Signals that arrived since the last call, in order (SIGCHLD included).
  std::vector<int> drain();

 private:
  int read_end_ = -1;
};

struct Launch {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // the child's whole environment, NAME=VALUE
  int log_fd = -1;               // the durable log: complete lines are appended
};

// Starts the command and relays until it has exited and its output is done;
// every complete line goes to the log and to the stream `ready` gives, which
// is asked for once the command has started (the rules may still be loading
// while it does).
AttemptResult supervise(const Launch& launch, SignalPipe& signals, const std::function<Stream&()>& ready);

// Writes all of `data`, retrying short writes and EINTR; false on an error.
bool write_all(int fd, std::string_view data);

}  // namespace gpudiag::cli
