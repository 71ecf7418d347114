// gpudiag watch: follows a log another program is writing (a job's output
// file, as Slurm or a launcher writes it) and reports the diagnosis once the
// log shows how the job ended, or once it has gone silent for longer than
// the user allows (a hang: the job holds its GPUs and prints nothing).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "commands.hpp"
#include "gpudiag/gpudiag.hpp"

namespace po = boost::program_options;
using Clock = std::chrono::steady_clock;

namespace gpudiag::cli {
namespace {

// watch's statuses beside the shared ones: the log went silent.
constexpr int kSilent = 4;

constexpr const char* kWatchUsage = R"(usage: gpudiag watch [options] FILE

Follows FILE as another program writes it, as tail -F does (a file replaced
or truncated by log rotation is followed to its new start), and reports the
diagnosis when the log shows how the job ended: a cause, or a completion,
with the log quiet for --settle seconds after it (a traceback's last lines
come after its first). With --silence, a log that writes nothing for that
long is reported as it stands: the job may hang, holding its GPUs. With
--pid, the diagnosis is reported as soon as that process ends. FILE may not
exist yet: a job still queued has written nothing.

)";

constexpr const char* kWatchNotes = R"(
examples:
  gpudiag watch slurm-4714782.out --silence 30m
  gpudiag watch --pid $TRAIN_PID --format brief train.log

exit status: 0 the log showed the job's end (whatever the verdict); 4 it went
silent for --silence; 1 FILE could not be read; 2 a usage error or rules that
do not load.
)";

// "90", "90s", "30m", "2h" as seconds; nullopt when it is not a duration.
std::optional<double> parse_duration(const std::string& s) {
  char* end = nullptr;
  const double n = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !(n >= 0)) return std::nullopt;
  const std::string unit(end);
  if (unit.empty() || unit == "s") return n;
  if (unit == "m") return n * 60;
  if (unit == "h") return n * 3600;
  return std::nullopt;
}

std::string duration_text(double seconds) {
  const long s = static_cast<long>(seconds);
  if (s >= 3600) return std::to_string(s / 3600) + "h " + std::to_string(s / 60 % 60) + "m";
  if (s >= 60) return std::to_string(s / 60) + "m " + std::to_string(s % 60) + "s";
  return std::to_string(s) + "s";
}

// What the file is now: its identity and size, or nothing when it is gone.
struct FileState {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  bool operator==(const FileState& o) const {
    return exists == o.exists && dev == o.dev && ino == o.ino && size == o.size;
  }
};

FileState state_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {true, st.st_dev, st.st_ino, st.st_size};
}

// The log shows how the job ended: a line names its cause, or its
// completion. A verdict on the loss trajectory (flat, diverging, NaN) is a
// judgement on the run so far, not an end: it waits for the process, or the
// silence.
bool shows_an_end(const RuleSet& rules, const Diagnosis& d) {
  const ClassInfo* c = rules.taxonomy().find(d.cls);
  if (!c || d.evidence.empty()) return false;
  return c->outcome == Outcome::none || c->outcome == Outcome::completed;
}

// Whether the process runs: it exists and is no zombie waiting for its
// parent to reap it.
bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!f) return true;  // no /proc: kill(2) said it exists
  char state = 0;
  const int read = std::fscanf(f, "%*d (%*[^)]) %c", &state);
  std::fclose(f);
  return !(read == 1 && (state == 'Z' || state == 'X'));
}

// How much of a long log's end is read to see whether it shows the job's
// end: a re-read of a whole 10 GB log at every quiet moment would take
// minutes.
constexpr off_t kTailWindow = 8 << 20;

// The diagnosis of the log's last kTailWindow bytes, from its first whole
// line on.
Diagnosis tail_diagnosis(const std::shared_ptr<const RuleSet>& rules, const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw InputError(path + ": " + std::strerror(errno));
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - kTailWindow);
  std::string tail(static_cast<std::size_t>(size - from), '\0');
  in.seekg(from);
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  tail.resize(static_cast<std::size_t>(in.gcount()));
  const std::size_t start = from == 0 ? 0 : tail.find('\n') + 1;
  return diagnose_bytes(rules, std::string_view(tail).substr(std::min(start, tail.size())));
}

struct WatchOptions {
  std::string file, format = "text", color = "auto";
  double settle = 5, poll = 0.25;
  std::optional<double> silence;
  std::optional<pid_t> pid;
};

void print(const WatchOptions& o, const Diagnosis& d) {
  const bool json = o.format == "json" || o.format == "jsonl";
  std::cout << render(d, o.format, TextStyle{want_color(o.color)}) << (json ? "\n" : "");
  std::cout.flush();
}

int watch(const WatchOptions& o, const std::shared_ptr<const RuleSet>& rules) {
  FileState seen = state_of(o.file), checked{};
  if (!seen.exists) std::cerr << "gpudiag watch: " << o.file << " does not exist yet; waiting for it\n";
  auto changed_at = Clock::now();
  std::optional<Diagnosis> last;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::duration<double>(o.poll));
    const FileState now = state_of(o.file);
    if (!(now == seen)) {
      seen = now;
      changed_at = Clock::now();
    }
    const double quiet = std::chrono::duration<double>(Clock::now() - changed_at).count();
    const bool process_ended = o.pid && !alive(*o.pid);
    const bool settled = quiet >= o.settle && !(seen == checked);
    if (seen.exists && (settled || process_ended)) {
      try {
        // A long log's end is looked for in its last pages; the whole log
        // is read once, when they show one.
        if (process_ended || seen.size <= kTailWindow || shows_an_end(*rules, tail_diagnosis(rules, o.file)))
          last = diagnose_file(rules, o.file);
      } catch (const InputError& e) {
        std::cerr << "gpudiag watch: " << e.what() << "\n";
        return kInputFailed;
      }
      checked = seen;
      if (last && (shows_an_end(*rules, *last) || process_ended)) {
        if (process_ended) std::cerr << "gpudiag watch: process " << *o.pid << " has ended\n";
        print(o, *last);
        return kOk;
      }
    }
    if (o.silence && quiet >= *o.silence) {
      std::cerr << "gpudiag watch: " << o.file << " has written nothing for " << duration_text(quiet)
                << ": the job may hang (the diagnosis of the log as it stands follows)\n";
      if (!last && seen.exists) last = diagnose_file(rules, o.file);
      if (last) print(o, *last);
      return kSilent;
    }
  }
}

}  // namespace

int run_watch(const std::vector<std::string>& args) {
  WatchOptions o;
  po::options_description opts;
  opts.add_options()
      ("help,h", "show this help")
      ("silence", po::value<std::string>()->value_name("DURATION"),
       "report when the log has written nothing for this long (90s, 30m, 2h), with exit status 4")
      ("settle", po::value<std::string>()->default_value("5s")->value_name("DURATION"),
       "how long the log must stay quiet after an end before it is reported")
      ("pid", po::value<int>()->value_name("PID"), "report as soon as this process (the job) ends")
      ("format,f", po::value<std::string>(&o.format)->default_value("text")->value_name("FORMAT"),
       "text, brief, json or jsonl")
      ("color", po::value<std::string>(&o.color)->default_value("auto")->value_name("WHEN"), "auto, always or never")
      ("rules,r", po::value<std::string>()->value_name("DIR"), "a directory of rule files to use instead of the shipped rules")
      ("no-cache", "compile the rules without reading or writing the on-disk cache");
  po::options_description all;
  all.add(opts).add_options()("file", po::value<std::string>(&o.file));
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "gpudiag watch: " << e.what() << "\n(see 'gpudiag watch --help')\n";
    return kUsage;
  }
  if (vm.count("help")) {
    std::cout << kWatchUsage << format_options(opts) << kWatchNotes;
    return kOk;
  }
  auto bad = [](const std::string& why) {
    std::cerr << "gpudiag watch: " << why << "\n";
    return kUsage;
  };
  if (o.file.empty()) return bad("no FILE given (see 'gpudiag watch --help')");
  if (o.format != "text" && o.format != "brief" && o.format != "json" && o.format != "jsonl")
    return bad("--format must be text, brief, json or jsonl, not '" + o.format + "'");
  const auto settle = parse_duration(vm["settle"].as<std::string>());
  if (!settle) return bad("--settle takes a duration such as 5s or 1m, not '" + vm["settle"].as<std::string>() + "'");
  o.settle = *settle;
  if (vm.count("silence")) {
    o.silence = parse_duration(vm["silence"].as<std::string>());
    if (!o.silence || *o.silence <= 0)
      return bad("--silence takes a duration such as 90s, 30m or 2h, not '" + vm["silence"].as<std::string>() + "'");
  }
  if (vm.count("pid")) o.pid = vm["pid"].as<int>();
  const std::shared_ptr<const RuleSet> rules = load_rules(vm);
  if (!rules) return kUsage;
  return watch(o, rules);
}

}  // namespace gpudiag::cli
