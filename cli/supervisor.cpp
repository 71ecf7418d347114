#include "supervisor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <optional>

namespace gpudiag::cli {
namespace {

using Clock = std::chrono::steady_clock;

// The signals passed on to the command: the ones a terminal, a scheduler
// (scancel, Slurm's --signal) or an operator sends to stop or warn a job.
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
// After the command exits, its output is read until this long passes without
// any, and no longer than kDrainLimit: a process it left behind may hold the
// pipes open, and write, for good.
constexpr auto kDrainGrace = std::chrono::milliseconds(1000);
constexpr auto kDrainLimit = std::chrono::seconds(10);
// A partial line is held for the log until its newline comes, up to this size.
constexpr std::size_t kMaxPending = 1 << 20;

int g_signal_write = -1;

// One byte a signal: the number, and 0x80 when a process sent it (kill(2))
// rather than the kernel (a terminal's Ctrl-C).
void on_signal(int sig, siginfo_t* info, void*) {
  const int saved = errno;
  const bool sent = info && (info->si_code == SI_USER || info->si_code == SI_QUEUE);
  const unsigned char byte = static_cast<unsigned char>(sig | (sent ? 0x80 : 0));
  (void)!::write(g_signal_write, &byte, 1);
  errno = saved;
}

void install(int sig) {
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  ::sigaction(sig, &sa, nullptr);
}

std::vector<char*> c_strings(const std::vector<std::string>& items) {
  std::vector<char*> out;
  for (const auto& s : items) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// The command started with posix_spawn (a vfork: nothing of the wrapper's
// memory is copied), in its own process group unless it shares the terminal
// with the wrapper, its output into the pipes, SIGPIPE back to its default
// (ignored here; an ignored signal stays so across exec), no signal blocked.
// Returns 0 or the errno of the failed exec.
int spawn(pid_t& pid, char* const* argv, char* const* envp, int out, int err, bool interactive) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&actions, out, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err, STDERR_FILENO);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (!interactive) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attr, 0);
  }
  posix_spawnattr_setflags(&attr, flags);
  const int error = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return error;
}

// One of the command's two outputs.
struct Channel {
  int fd;
  int terminal;
  std::string pending;  // the start of a line whose newline has not come
  bool open = true;
};

class Relay {
 public:
  Relay(int log_fd, Stream& stream) : log_fd_(log_fd), stream_(stream) {}

  // To the terminal as it comes (a progress bar redrawn with \r shows at
  // once); to the log and the diagnosis a whole line at a time, so that the
  // two outputs never cut into each other's lines.
  void pass(Channel& ch, std::string_view data) {
    if (terminal_ok_ && !write_all(ch.terminal, data)) terminal_ok_ = false;  // closed: the log goes on
    ch.pending.append(data);
    const std::size_t last = ch.pending.rfind('\n');
    if (last != std::string::npos) {
      emit(std::string_view(ch.pending).substr(0, last + 1));
      ch.pending.erase(0, last + 1);
    }
    if (ch.pending.size() >= kMaxPending) flush(ch);
  }

  void flush(Channel& ch) {
    if (ch.pending.empty()) return;
    if (ch.pending.back() != '\n') ch.pending += '\n';  // the footer starts a line of its own
    emit(ch.pending);
    ch.pending.clear();
  }

 private:
  void emit(std::string_view lines) {
    if (!write_all(log_fd_, lines) && log_ok_) {
      // Said once; the command goes on, and so do the terminal and the diagnosis.
      log_ok_ = false;
      const std::string why = std::strerror(errno);
      std::cerr << "gpudiag run: the log can no longer be written (" << why
                << "); the command goes on, its output only on the terminal\n";
    }
    stream_.write(lines);
  }

  int log_fd_;
  bool log_ok_ = true;
  Stream& stream_;
  bool terminal_ok_ = true;
};

struct Child {
  pid_t pid = -1;
  bool interactive = false;
  bool exited = false;
  int wait_status = 0;
  int interrupts = 0;
  bool stop_asked = false;

  void reap(int options) {
    if (exited) return;
    int st = 0;
    pid_t r;
    do r = ::waitpid(pid, &st, options);
    while (r < 0 && errno == EINTR);
    if (r == pid) {
      exited = true;
      wait_status = st;
    }
  }

  // A signal the wrapper received, passed on: to the child's process group,
  // or with a shared terminal to the child alone, and only when a process
  // sent it (the terminal's own signal reached the child already). A second
  // SIGINT kills the command.
  void forward(unsigned char byte) {
    const int sig = byte & 0x7f;
    const bool sent = byte & 0x80;
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) stop_asked = true;
    if (sig == SIGINT && ++interrupts >= 2) {
      send(SIGKILL);
      return;
    }
    if (interactive && !sent) return;
    send(sig);
  }

  void send(int sig) const {
    if (exited) return;
    if (interactive) ::kill(pid, sig);
    else ::killpg(pid, sig);
  }
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Reads the command's outputs until both end, or until the command has
// exited and they have been quiet for kDrainGrace.
void relay(Child& child, Channel (&channels)[2], Relay& relay, SignalPipe& signals) {
  char buf[64 << 10];
  auto quiet_since = Clock::now();
  std::optional<Clock::time_point> exited_at;
  while (channels[0].open || channels[1].open) {
    pollfd fds[3] = {{channels[0].open ? channels[0].fd : -1, POLLIN, 0},
                     {channels[1].open ? channels[1].fd : -1, POLLIN, 0},
                     {signals.fd(), POLLIN, 0}};
    const int ready = ::poll(fds, 3, child.exited ? 100 : -1);
    if (ready < 0 && errno != EINTR) break;
    bool data = false;
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(channels[i].fd, buf, sizeof buf);
      if (n > 0) {
        relay.pass(channels[i], std::string_view(buf, static_cast<std::size_t>(n)));
        data = true;
      } else if (n == 0 || errno != EINTR) {
        channels[i].open = false;
      }
    }
    if (fds[2].revents & POLLIN)
      for (int sig : signals.drain()) {
        if ((sig & 0x7f) == SIGCHLD) child.reap(WNOHANG);
        else child.forward(static_cast<unsigned char>(sig));
      }
    if (child.exited && !exited_at) exited_at = Clock::now();
    if (data || !child.exited) quiet_since = Clock::now();
    else if (Clock::now() - quiet_since >= kDrainGrace) break;
    if (exited_at && Clock::now() - *exited_at >= kDrainLimit) break;
  }
  for (Channel& ch : channels) relay.flush(ch);
}

// Waits for the command, still passing signals on.
void wait_for(Child& child, SignalPipe& signals) {
  while (!child.exited) {
    child.reap(WNOHANG);
    if (child.exited) break;
    pollfd fd{signals.fd(), POLLIN, 0};
    if (::poll(&fd, 1, 100) > 0)
      for (int sig : signals.drain())
        if ((sig & 0x7f) != SIGCHLD) child.forward(static_cast<unsigned char>(sig));
  }
}

}  // namespace

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

SignalPipe::SignalPipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error(std::strerror(errno));
  read_end_ = fds[0];
  g_signal_write = fds[1];
  for (int sig : kForwarded) install(sig);
  install(SIGCHLD);
  ::signal(SIGPIPE, SIG_IGN);  // a closed terminal must not end the wrapper: the log goes on
}

SignalPipe::~SignalPipe() {
  for (int sig : kForwarded) ::signal(sig, SIG_DFL);
  ::signal(SIGCHLD, SIG_DFL);
}

std::vector<int> SignalPipe::drain() {
  std::vector<int> out;
  unsigned char buf[64];
  ssize_t n;
  while ((n = ::read(read_end_, buf, sizeof buf)) > 0)
    for (ssize_t i = 0; i < n; ++i) out.push_back(buf[i]);
  return out;
}

AttemptResult supervise(const Launch& launch, SignalPipe& signals, const std::function<Stream&()>& ready) {
  AttemptResult result;
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create pipes: ") + std::strerror(errno));
  std::vector<char*> argv = c_strings(launch.argv), envp = c_strings(launch.env);
  Child child;
  // Sharing the terminal (in its foreground), the command stays in the
  // wrapper's process group: it reads the terminal, Ctrl-C and Ctrl-Z reach
  // it as they would bare. Otherwise it gets a group of its own, which the
  // signals are passed to whole (torchrun's workers included).
  child.interactive = ::isatty(STDIN_FILENO) && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
  const auto start = Clock::now();
  const int spawn_error = spawn(child.pid, argv.data(), envp.data(), out[1], err[1], child.interactive);
  ::close(out[1]);
  ::close(err[1]);
  Stream& stream = ready();  // what the wrapper prepares while the command starts
  Channel channels[2] = {{out[0], STDOUT_FILENO, {}}, {err[0], STDERR_FILENO, {}}};
  if (spawn_error) {
    result.exec_error = std::strerror(spawn_error);
    result.status = spawn_error == ENOENT ? 127 : 126;
    result.exit_code = result.status;
  } else {
    Relay lines(launch.log_fd, stream);
    relay(child, channels, lines, signals);
    wait_for(child, signals);
    result.interrupted = child.stop_asked;
    if (WIFSIGNALED(child.wait_status)) {
      result.status = 128 + WTERMSIG(child.wait_status);
      result.exit_code = -WTERMSIG(child.wait_status);
    } else {
      result.status = WEXITSTATUS(child.wait_status);
      result.exit_code = result.status;
    }
  }
  close_fd(channels[0].fd);
  close_fd(channels[1].fd);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace gpudiag::cli
