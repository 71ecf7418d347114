// gpudiag run: runs a training command under watch. Its log is created, with
// a header, before the command starts; its output is diagnosed as it
// streams; when it ends the verdict is reported, whoever asked is notified
// (in a process of its own, whose failure never changes the exit status),
// and the command is run again when the diagnosis says a rerun helps.
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <future>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "gpudiag/gpudiag.hpp"
#include "supervisor.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace gpudiag::cli {
namespace {

// gpudiag run's own failures (before the command could run) exit with this,
// as env(1), nohup(1) and timeout(1) do: every other status is the command's.
constexpr int kRunFailed = 125;

constexpr const char* kRunUsage = R"(usage: gpudiag run [options] -- CMD [ARGS...]

Runs CMD with its standard input, environment and signals passed through,
shows its output as it comes and keeps it in a durable log (created, with a
header naming the command, host, time and gpudiag version, before CMD
starts), diagnoses the log as it streams, and when CMD ends reports why,
notifies whoever asked, and runs it again when a rerun will help. Exits with
CMD's status (128 + N when signal N ended it), whatever the notifications do.

)";

constexpr const char* kRunNotes = R"(
notifications (sent by the gpudiag Python package, in a process of its own):
  e-mail         over SMTP, STARTTLS when the server offers it; the server and
                 the login come from GPUDIAG_SMTP_URL (smtp://host:587, or
                 smtps://host:465), GPUDIAG_SMTP_USER, GPUDIAG_SMTP_PASSWORD,
                 GPUDIAG_SMTP_FROM, GPUDIAG_SMTP_STARTTLS (try, require, off),
                 GPUDIAG_SMTP_CAFILE (the authority that signed the server's
                 certificate, when the system's do not: it is verified), or
                 the same keys in --notify-config FILE (JSON: {"smtp":
                 {"url": ..., "user": ..., "password": ..., "from": ...,
                 "starttls": ..., "cafile": ...}}), never from the command line
  webhook        an HTTP POST of JSON: the command, host, exit status, run time,
                 every attempt with its log and diagnosis, the log's head and
                 tail, and the artifacts (with what the budget left out)
  command        run by /bin/sh with that JSON on its standard input and
                 GPUDIAG_CLASS, GPUDIAG_OWNER, GPUDIAG_STATUS, GPUDIAG_LOG set

restarts: --restart-on infra reruns after a fault of the machines (the
diagnosis's owner is infra: GPU hardware, node failure, NCCL, rendezvous);
retryable also after the scheduler's stops that a rerun helps (preemption);
never after the job's own bugs, nor after gpudiag run itself was told to stop
(Ctrl-C, scancel's SIGTERM). Each attempt has its own log (NAME.attempt2.log)
and diagnosis, and gets GPUDIAG_RESTART_COUNT and GPUDIAG_LAST_CHECKPOINT (the
path of the last checkpoint the previous attempt's log saved) in its
environment; the final notification summarises every attempt.

The command also gets GPUDIAG_RUN_LOG (its log's path) and, when it is not
set, PYTHONUNBUFFERED=1: a crash must not take the last lines with it.

examples:
  gpudiag run -- python train.py --lr 3e-4
  gpudiag run --log-dir /scratch/logs --notify-email me@example.org \
      -- torchrun --nproc-per-node 8 train.py
  gpudiag run --restart-on infra --max-restarts 3 -- srun python train.py

exit status: CMD's own; 125 when gpudiag run could not start it (a usage
error, a log that cannot be created); 126 CMD is not executable, 127 not found.
)";

enum class RestartPolicy { never, infra, retryable };

struct RunOptions {
  std::vector<std::string> command;
  fs::path log, log_dir;
  std::string report = "brief", report_on = "failure", notify_on = "failure";
  std::vector<std::string> webhooks, emails, hooks, attach;
  std::string notify_config;
  double notify_timeout = 30;
  std::uint64_t attach_budget = 5 << 20;
  RestartPolicy restart = RestartPolicy::never;
  int max_restarts = 3;
  double restart_delay = 30;
};

struct Attempt {
  int number = 1;
  fs::path log;
  std::string started;  // ISO 8601, UTC
  AttemptResult result;
  Diagnosis diagnosis;
  std::string checkpoint;  // the last checkpoint its log saved, when one shows
};

std::string utc_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string stamp_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

// The command as a shell would read it back.
std::string shell_quoted(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                          "0123456789-_./=:,+@%") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

// NAME.log for the first attempt, NAME.attemptN.log for the others.
fs::path attempt_log(const RunOptions& o, int attempt, const std::string& stamp) {
  fs::path base = o.log;
  if (base.empty()) {
    const std::string name = fs::path(o.command.front()).filename().string();
    base = o.log_dir / (name + "-" + stamp + "-" + std::to_string(::getpid()) + ".log");
  }
  if (attempt == 1) return base;
  fs::path out = base;
  out.replace_extension(".attempt" + std::to_string(attempt) + base.extension().string());
  return out;
}

// The durable log, opened before the command starts; throws with the reason.
int open_log(const fs::path& path) {
  std::error_code ec;
  const fs::path dir = path.parent_path();
  if (!dir.empty() && !fs::is_directory(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) throw std::runtime_error("cannot create the log directory '" + dir.string() + "': " + ec.message());
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create the log '" + path.string() + "': " + std::strerror(errno));
  return fd;
}

std::string header(const RunOptions& o, const Attempt& a) {
  std::error_code ec;
  return "# gpudiag run: " + shell_quoted(o.command) + "\n# gpudiag run: host " + host_name() + " · started " + a.started +
         " · cwd " + fs::current_path(ec).string() + " · gpudiag " + std::string(version()) + " · attempt " +
         std::to_string(a.number) + "\n";
}

std::string signal_note(const AttemptResult& r) {
  if (!r.exit_code || *r.exit_code >= 0) return "";
  const char* name = ::sigabbrev_np(-*r.exit_code);
  return std::string(" (SIG") + (name ? name : "?") + ")";
}

// The last line of the log: the status and the class, but no quoted text,
// so that diagnosing the log again later finds what the stream found.
std::string footer(const Attempt& a) {
  char took[32];
  std::snprintf(took, sizeof took, "%.1f", a.result.seconds);
  const Diagnosis& d = a.diagnosis;
  char conf[16];
  std::snprintf(conf, sizeof conf, "%.2f", d.confidence);
  return "# gpudiag run: status " + std::to_string(a.result.status) + signal_note(a.result) + " after " + took +
         " s · diagnosis " + d.cls + " (" + d.owner + ", " + conf + ")" +
         (d.evidence.empty() ? "" : ", line " + std::to_string(d.evidence.front().line)) + "\n";
}

// The child's environment: this one, and what the run adds.
std::vector<std::string> child_env(const Attempt& a, const Attempt* previous) {
  std::vector<std::string> env;
  const std::vector<std::string> ours = {"GPUDIAG_RUN_LOG", "GPUDIAG_RESTART_COUNT", "GPUDIAG_LAST_CHECKPOINT"};
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    const std::string name(entry.substr(0, entry.find('=')));
    if (std::find(ours.begin(), ours.end(), name) == ours.end()) env.emplace_back(entry);
  }
  env.push_back("GPUDIAG_RUN_LOG=" + a.log.string());
  env.push_back("GPUDIAG_RESTART_COUNT=" + std::to_string(a.number - 1));
  if (previous && !previous->checkpoint.empty()) env.push_back("GPUDIAG_LAST_CHECKPOINT=" + previous->checkpoint);
  if (!std::getenv("PYTHONUNBUFFERED")) env.emplace_back("PYTHONUNBUFFERED=1");
  return env;
}

std::string last_checkpoint(const Diagnosis& d) {
  for (const Finding& f : d.findings)
    if (f.kind == "checkpoint" && f.evidence) {
      const auto path = f.evidence->values.find("path");
      if (path != f.evidence->values.end()) return path->second;
    }
  return "";
}

using Rules = std::shared_future<std::shared_ptr<const RuleSet>>;

// One attempt: the log and its header, the command, the diagnosis, the footer.
Attempt run_attempt(const RunOptions& o, const Rules& rules, int number, const std::string& stamp,
                    const Attempt* previous, SignalPipe& signals) {
  Attempt a;
  a.number = number;
  a.log = attempt_log(o, number, stamp);
  a.started = utc_now();
  const int log_fd = open_log(a.log);
  const std::string head = header(o, a);
  if (!write_all(log_fd, head)) {
    const std::string why = std::strerror(errno);
    ::close(log_fd);
    throw std::runtime_error("cannot write the log '" + a.log.string() + "': " + why);
  }
  std::optional<Stream> stream;
  auto ready = [&]() -> Stream& {
    stream.emplace(rules.get());
    stream->write(head);  // read as diagnose reads the file: the wrapper's lines blank, the numbering the log's
    return *stream;
  };
  Launch launch{o.command, child_env(a, previous), log_fd};
  a.result = supervise(launch, signals, ready);
  if (!a.result.exec_error.empty()) {
    const std::string line = "gpudiag run: cannot run '" + o.command.front() + "': " + a.result.exec_error + "\n";
    std::cerr << line;
    write_all(log_fd, line);
    stream->write(line);
  }
  stream->set_exit_code(a.result.exit_code);
  a.diagnosis = stream->finish();
  a.diagnosis.path = a.log.string();
  a.checkpoint = last_checkpoint(a.diagnosis);
  write_all(log_fd, footer(a));
  ::close(log_fd);
  return a;
}

bool rerun_helps(RestartPolicy policy, const RuleSet& rules, const Attempt& a) {
  if (policy == RestartPolicy::never || a.result.status == 0 || a.result.interrupted || !a.result.exec_error.empty())
    return false;
  const ClassInfo* c = rules.taxonomy().find(a.diagnosis.cls);
  if (!c || c->owner == "job" || c->owner == "none" || c->rerun == "no") return false;
  if (policy == RestartPolicy::infra) return c->owner == "infra";
  return c->rerun == "yes" || c->rerun == "maybe";
}

// Sleeps before a restart; false when a stop signal came meanwhile.
bool back_off(double seconds, SignalPipe& signals) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    pollfd fd{signals.fd(), POLLIN, 0};
    if (::poll(&fd, 1, static_cast<int>(std::max<long long>(1, left.count()))) > 0)
      for (int sig : signals.drain())
        if (int s = sig & 0x7f; s == SIGINT || s == SIGTERM || s == SIGHUP) return false;
  }
  return true;
}

void report(const RunOptions& o, const Attempt& a) {
  if (o.report == "none" || (o.report_on == "failure" && a.result.status == 0)) return;
  const std::string shown = render(a.diagnosis, o.report, TextStyle{want_color("auto", STDERR_FILENO)});
  std::cerr << (o.report == "brief" ? "gpudiag: " : "") << shown << (o.report == "json" ? "\n" : "");
}

// What the notifier is given: the run, every attempt with its diagnosis
// (the one serializer's JSON), and whom to tell.
std::string notification(const RunOptions& o, const std::vector<Attempt>& attempts) {
  auto strings = [](const std::vector<std::string>& items) {
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + json_string(items[i]);
    return out + "]";
  };
  std::string out = "{\"command\": " + strings(o.command) + ", \"host\": " + json_string(host_name()) +
                    ", \"status\": " + std::to_string(attempts.back().result.status) + ", \"attempts\": [";
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    const Attempt& a = attempts[i];
    char took[32];
    std::snprintf(took, sizeof took, "%.3f", a.result.seconds);
    out += std::string(i ? ", " : "") + "{\"attempt\": " + std::to_string(a.number) + ", \"log\": " +
           json_string(a.log.string()) + ", \"started\": " + json_string(a.started) + ", \"seconds\": " + took +
           ", \"status\": " + std::to_string(a.result.status) + ", \"exit_code\": " +
           (a.result.exit_code ? std::to_string(*a.result.exit_code) : "null") +
           ", \"checkpoint\": " + (a.checkpoint.empty() ? "null" : json_string(a.checkpoint)) +
           ", \"diagnosis\": " + to_json(a.diagnosis) + "}";
  }
  out += "], \"notify\": {\"webhooks\": " + strings(o.webhooks) + ", \"emails\": " + strings(o.emails) +
         ", \"commands\": " + strings(o.hooks) + ", \"attach\": " + strings(o.attach) +
         ", \"attach_budget\": " + std::to_string(o.attach_budget) + ", \"timeout\": " +
         std::to_string(o.notify_timeout) + ", \"config\": " +
         (o.notify_config.empty() ? "null" : json_string(o.notify_config)) + "}}";
  return out;
}

void log_line(const fs::path& log, const std::string& line) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return;
  write_all(fd, line);
  ::close(fd);
}

// On stderr, and in the log as the wrapper's own lines ("# gpudiag run: ...").
void tell(const fs::path& log, const std::string& text) {
  std::cerr << text;
  std::string marked;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = std::string_view(text).substr(at, end - at);
    marked += line.substr(0, 13) == "gpudiag run: " ? "# " : "# gpudiag run: ";
    marked.append(line).append("\n");
    at = end + 1;
  }
  log_line(log, marked);
}

// Starts the notifier (the Python package's gpudiag._notify) reading from
// `in` and writing its lines to `out`; the errno of a failed start, or 0.
int start_notifier(pid_t& pid, int in, int out) {
  const std::string interpreter = python();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  const char* argv[] = {interpreter.c_str(), "-m", "gpudiag._notify", nullptr};
  const int error = ::posix_spawnp(&pid, argv[0], &actions, &attr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return error;
}

// What the notifier says until it ends, or until the deadline, when it is
// killed.
std::string hear_out(pid_t pid, int from, std::chrono::steady_clock::time_point deadline) {
  std::string said;
  char buf[4096];
  for (bool open = true; open;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      said += "gpudiag run: notify: the notifier was still running at its deadline and was stopped\n";
      break;
    }
    pollfd fd{from, POLLIN, 0};
    if (::poll(&fd, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = ::read(from, buf, sizeof buf);
    if (n > 0) said.append(buf, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR) open = false;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return said;
}

// Runs the notifier with the payload on its standard input, past its
// deadline killed. Whatever it says goes to stderr and the last log; nothing
// it does reaches the exit status.
void notify(const RunOptions& o, const std::vector<Attempt>& attempts) {
  const bool wanted = !o.webhooks.empty() || !o.emails.empty() || !o.hooks.empty();
  if (!wanted || (o.notify_on == "failure" && attempts.back().result.status == 0)) return;
  const fs::path& log = attempts.back().log;
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
    tell(log, "gpudiag run: notify: cannot create pipes: " + std::string(std::strerror(errno)) + "\n");
    return;
  }
  pid_t pid = -1;
  const int error = start_notifier(pid, in[0], out[1]);
  ::close(in[0]);
  ::close(out[1]);
  if (error) {
    ::close(in[1]);
    ::close(out[0]);
    tell(log, "gpudiag run: notify: cannot run " + python() + ": " + std::strerror(error) +
                  " (set GPUDIAG_PYTHON to an interpreter with the gpudiag package)\n");
    return;
  }
  write_all(in[1], notification(o, attempts));
  ::close(in[1]);
  const auto allowed = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(o.notify_timeout * 2 + 5));
  const std::string said = hear_out(pid, out[0], std::chrono::steady_clock::now() + allowed);
  ::close(out[0]);
  if (!said.empty()) tell(log, said);
}

po::options_description run_options(RunOptions& o) {
  po::options_description opts;
  opts.add_options()
      ("help,h", "show this help")
      ("log", po::value<std::string>()->value_name("FILE"),
       "the log to write (default: DIR/CMD-DATE-TIME-PID.log under --log-dir)")
      ("log-dir", po::value<std::string>()->value_name("DIR"),
       "where logs go (default: $GPUDIAG_LOG_DIR, else ./gpudiag-logs); created when missing")
      ("report", po::value<std::string>(&o.report)->default_value("brief")->value_name("FORMAT"),
       "the diagnosis on stderr when CMD ends: brief (one line), text, json or none")
      ("report-on", po::value<std::string>(&o.report_on)->default_value("failure")->value_name("WHEN"),
       "failure (a non-zero status) or always")
      ("notify-email", po::value<std::vector<std::string>>(&o.emails)->composing()->value_name("ADDRESS"),
       "e-mail the diagnosis with the log's head and tail and the artifacts (repeatable)")
      ("notify-webhook", po::value<std::vector<std::string>>(&o.webhooks)->composing()->value_name("URL"),
       "POST the run and its diagnosis as JSON (repeatable)")
      ("notify-command", po::value<std::vector<std::string>>(&o.hooks)->composing()->value_name("CMD"),
       "run CMD with /bin/sh, the JSON on its standard input (repeatable)")
      ("notify-on", po::value<std::string>(&o.notify_on)->default_value("failure")->value_name("WHEN"),
       "failure (the last attempt's status is not 0) or always")
      ("notify-timeout", po::value<double>(&o.notify_timeout)->default_value(30)->value_name("SECONDS"),
       "the longest one notification may take")
      ("notify-config", po::value<std::string>(&o.notify_config)->value_name("FILE"),
       "a JSON file with the SMTP settings (below)")
      ("attach", po::value<std::vector<std::string>>(&o.attach)->composing()->value_name("GLOB"),
       "files to send with the notification ('out/*.json'; repeatable)")
      ("attach-budget", po::value<std::string>()->value_name("SIZE"),
       "the most bytes of attachments, the log's head and tail included (default 5M); what does not "
       "fit is listed, never dropped silently")
      ("restart-on", po::value<std::string>()->default_value("never")->value_name("POLICY"),
       "never, infra or retryable (below)")
      ("max-restarts", po::value<int>(&o.max_restarts)->default_value(3)->value_name("N"),
       "restart at most N times")
      ("restart-delay", po::value<double>(&o.restart_delay)->default_value(30)->value_name("SECONDS"),
       "wait before the first restart, doubled before each next one")
      ("rules,r", po::value<std::string>()->value_name("DIR"), "a directory of rule files to use instead of the shipped rules")
      ("no-cache", "compile the rules without reading or writing the on-disk cache");
  return opts;
}

// The options, validated; nullopt after saying why on stderr.
std::optional<RunOptions> parse_run(const std::vector<std::string>& args, po::variables_map& vm, bool& help) {
  RunOptions o;
  auto split = std::find(args.begin(), args.end(), "--");
  std::vector<std::string> ours(args.begin(), split);
  if (split != args.end()) o.command.assign(split + 1, args.end());
  else if (!args.empty() && args.front()[0] != '-') o.command = args, ours.clear();
  const po::options_description opts = run_options(o);
  try {
    po::store(po::command_line_parser(ours).options(opts).style(po::command_line_style::default_style &
                                                               ~po::command_line_style::allow_guessing).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "gpudiag run: " << e.what() << "\n"
              << (split == args.end() ? "(put '--' before the command: gpudiag run [options] -- CMD [ARGS...])\n"
                                      : "(see 'gpudiag run --help')\n");
    return std::nullopt;
  }
  if ((help = vm.count("help"))) {
    std::cout << kRunUsage << format_options(opts) << kRunNotes;
    return std::nullopt;
  }
  auto bad = [](const std::string& why) {
    std::cerr << "gpudiag run: " << why << "\n";
    return std::nullopt;
  };
  if (o.command.empty()) return bad("no command given: gpudiag run [options] -- CMD [ARGS...]");
  const std::string restart = vm["restart-on"].as<std::string>();
  if (restart == "infra") o.restart = RestartPolicy::infra;
  else if (restart == "retryable") o.restart = RestartPolicy::retryable;
  else if (restart != "never") return bad("--restart-on must be never, infra or retryable, not '" + restart + "'");
  if (o.report != "brief" && o.report != "text" && o.report != "json" && o.report != "none")
    return bad("--report must be brief, text, json or none, not '" + o.report + "'");
  for (const std::string* when : {&o.report_on, &o.notify_on})
    if (*when != "failure" && *when != "always") return bad("--report-on and --notify-on take failure or always, not '" + *when + "'");
  if (o.max_restarts < 0) return bad("--max-restarts must not be negative");
  if (!(o.restart_delay >= 0) || !(o.notify_timeout > 0)) return bad("--restart-delay and --notify-timeout must be positive");
  if (vm.count("attach-budget")) {
    const auto size = parse_size(vm["attach-budget"].as<std::string>());
    if (!size) return bad("--attach-budget takes a size such as 500K or 5M");
    o.attach_budget = *size;
  }
  if (vm.count("log")) o.log = vm["log"].as<std::string>();
  const char* env_dir = std::getenv("GPUDIAG_LOG_DIR");
  o.log_dir = vm.count("log-dir") ? fs::path(vm["log-dir"].as<std::string>())
              : env_dir && *env_dir ? fs::path(env_dir) : fs::path("gpudiag-logs");
  return o;
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  po::variables_map vm;
  bool help = false;
  const std::optional<RunOptions> parsed = parse_run(args, vm, help);
  if (!parsed) return help ? kOk : kRunFailed;
  const RunOptions& o = *parsed;
  // A rules directory is loaded before anything starts: rules that do not
  // load are a usage error. The shipped rules load while the command starts.
  Rules rules;
  if (vm.count("rules")) {
    std::promise<std::shared_ptr<const RuleSet>> loaded;
    auto set = load_rules(vm);
    if (!set) return kRunFailed;
    loaded.set_value(std::move(set));
    rules = loaded.get_future().share();
  } else {
    const bool cache = !vm.count("no-cache");
    rules = std::async(std::launch::async, [cache] { return RuleSet::builtin(CacheOptions{cache, {}}); }).share();
  }
  SignalPipe signals;
  const std::string stamp = stamp_now();
  std::vector<Attempt> attempts;
  double delay = o.restart_delay;
  for (int number = 1;; ++number) {
    try {
      attempts.push_back(run_attempt(o, rules, number, stamp, attempts.empty() ? nullptr : &attempts.back(), signals));
    } catch (const std::exception& e) {
      std::cerr << "gpudiag run: " << e.what() << "\n";
      if (attempts.empty()) return kRunFailed;
      break;
    }
    const Attempt& a = attempts.back();
    report(o, a);
    if (number > o.max_restarts || !rerun_helps(o.restart, *rules.get(), a)) break;
    std::cerr << "gpudiag run: " << a.diagnosis.cls << " (owner " << a.diagnosis.owner << "): a rerun may help; "
              << "restart " << number << " of " << o.max_restarts << " in " << delay << " s\n";
    if (!back_off(delay, signals)) break;
    delay *= 2;
  }
  notify(o, attempts);
  // Nothing is left to write: the process ends without unwinding the rules
  // and the diagnoses, which costs a job half a millisecond of frees.
  std::cout.flush();
  std::cerr.flush();
  std::_Exit(attempts.back().result.status);
}

}  // namespace gpudiag::cli
