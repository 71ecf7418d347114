// One job from many files: per-rank or per-node logs merged into one
// timeline and diagnosed as one log.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "container_reader.hpp"
#include "decompressor.hpp"
#include "utf16_reader.hpp"
#include "gpudiag/diagnose.hpp"
#include "line_fields.hpp"

namespace gpudiag {
namespace {

namespace fs = std::filesystem;

bool digit(char c) { return c >= '0' && c <= '9'; }

// The digits at `at`, as a number, when there are some.
std::optional<int> digits_at(std::string_view s, std::size_t at) {
  std::size_t end = at;
  while (end < s.size() && end - at < 7 && digit(s[end])) ++end;
  if (end == at) return std::nullopt;
  return std::stoi(std::string(s.substr(at, end - at)));
}

// The digits of a timestamp, which order it among others of its form:
// "2026-11-23 10:00:01,250" -> "20261123100001250".
std::string time_key(std::string_view timestamp) {
  std::string key;
  for (char c : timestamp)
    if (digit(c)) key += c;
  return key;
}

// One file's text, line by line, decoded as the Stream decodes it.
class LineSource {
 public:
  LineSource(const fs::path& path, std::optional<int> rank)
      : path_(path), rank_(rank), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw InputError(path.string() + ": " + std::strerror(errno));
    // As diagnose_file: a file is read up to the size it had when opened.
    struct stat st;
    if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
      left_ = static_cast<std::uint64_t>(st.st_size);
  }
  ~LineSource() { ::close(fd_); }
  LineSource(const LineSource&) = delete;
  LineSource& operator=(const LineSource&) = delete;

  // The next line with its newline, tagged with the file's rank where it
  // carries none; false at the end.
  bool next(std::string& line) {
    std::size_t nl;
    while ((nl = text_.find('\n', taken_)) == std::string::npos && !ended_ && text_.size() - taken_ < kMaxLine)
      fill();
    if (taken_ >= text_.size()) return false;
    // A line longer than kMaxLine is taken a piece at a time: memory stays
    // bounded whatever the file holds.
    const std::size_t end = nl != std::string::npos ? nl + 1 : std::min(text_.size(), taken_ + kMaxLine);
    const std::string_view raw = std::string_view(text_).substr(taken_, end - taken_);
    taken_ = end;
    line.clear();
    const detail::LineFields fields = detail::read_line(raw);  // its rank and its time, in one parse
    if (rank_ && !fields.rank) line = "[rank" + std::to_string(*rank_) + "]: ";
    line.append(raw);
    if (line.back() != '\n') line += '\n';
    if (std::string ts = time_key(fields.timestamp); !ts.empty()) key_ = std::move(ts);
    return true;
  }

  // The time of the last line that stated one ("" before any).
  const std::string& key() const { return key_; }
  const InputFormat& format() const { return format_; }

 private:
  void fill() {
    text_.erase(0, taken_);
    taken_ = 0;
    char buffer[1 << 16];
    ssize_t n = 0;
    if (left_ > 0) {
      do n = ::read(fd_, buffer, static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buffer, left_)));
      while (n < 0 && errno == EINTR);
      if (n > 0) left_ -= static_cast<std::uint64_t>(n);
    }
    if (n < 0) throw InputError(path_.string() + ": " + std::strerror(errno));
    if (n > 0) return decompressor_.write({buffer, static_cast<std::size_t>(n)});
    decompressor_.finish();
    utf16_.finish();
    container_.finish();
    ended_ = true;
    format_ = InputFormat{std::string(decompressor_.format()), std::string(container_.format()),
                          std::string(utf16_.format()), decompressor_.damage(), decompressor_.damage_at()};
  }

  static constexpr std::size_t kMaxLine = 1 << 20;
  fs::path path_;
  std::optional<int> rank_;
  int fd_;
  std::uint64_t left_ = UINT64_MAX;  // bytes still to read: the size at open, for a file
  std::string text_;
  std::size_t taken_ = 0;
  bool ended_ = false;
  std::string key_;
  InputFormat format_;
  detail::ContainerReader container_{[this](std::string_view s) { text_.append(s); }, 256 << 10};
  detail::Utf16Reader utf16_{[this](std::string_view s) { container_.write(s); }};
  detail::Decompressor decompressor_{[this](std::string_view s) { utf16_.write(s); }};
};

// Which source's line comes next: the earliest time stated so far, where
// two sources state times of one form (digit strings of one length); else
// the one given first. A line without a time goes with the line before it.
std::size_t earliest(const std::vector<std::unique_ptr<LineSource>>& sources, const std::vector<bool>& live) {
  std::size_t best = sources.size();
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (!live[i]) continue;
    if (best == sources.size()) {
      best = i;
      continue;
    }
    const std::string &a = sources[i]->key(), &b = sources[best]->key();
    if (a.size() == b.size() && a < b) best = i;
  }
  return best;
}

}  // namespace

std::optional<int> rank_from_path(const fs::path& path) {
  const std::string name = path.filename().string();
  // rank3.log, rank_03.out, worker-rank-3.txt
  for (std::size_t at = name.find("rank"); at != std::string::npos; at = name.find("rank", at + 1)) {
    std::size_t d = at + 4;
    if (d < name.size() && (name[d] == '_' || name[d] == '-')) ++d;
    if (auto r = digits_at(name, d)) return r;
  }
  // Slurm's %j-%t.out (job id, task id), e.g. 4714782-3.out
  if (const std::size_t sep = name.find_first_of("-_"); sep != std::string::npos && sep > 0) {
    bool job = true;
    for (std::size_t i = 0; i < sep; ++i) job = job && digit(name[i]);
    std::size_t end = sep + 1;
    while (end < name.size() && digit(name[end])) ++end;
    if (job && end > sep + 1 && end < name.size() && name[end] == '.') return digits_at(name, sep + 1);
  }
  // torchrun --log-dir: <dir>/attempt_0/3/stderr.log, the folder the local rank
  const std::string stem = path.stem().string();
  if ((stem == "stdout" || stem == "stderr" || stem == "error") && path.has_parent_path()) {
    const std::string folder = path.parent_path().filename().string();
    bool all = !folder.empty();
    for (char c : folder) all = all && digit(c);
    if (all) return digits_at(folder, 0);
  }
  return std::nullopt;
}

Diagnosis diagnose_job(std::shared_ptr<const RuleSet> rules, const std::vector<fs::path>& files,
                       const DiagnoseOptions& options) {
  std::vector<std::unique_ptr<LineSource>> sources;
  for (const fs::path& f : files) sources.push_back(std::make_unique<LineSource>(f, rank_from_path(f)));
  Stream stream(std::move(rules), options);
  std::vector<bool> live(sources.size(), true);
  std::vector<std::string> head(sources.size());
  // Each source's next line is read ahead, so that its time is known.
  for (std::size_t i = 0; i < sources.size(); ++i) live[i] = sources[i]->next(head[i]);
  for (std::size_t i; (i = earliest(sources, live)) < sources.size();) {
    stream.write(head[i]);
    live[i] = sources[i]->next(head[i]);
  }
  Diagnosis d = stream.finish();
  for (const auto& s : sources)
    if (!s->format().damage.empty() && d.input.damage.empty()) d.input = s->format();
  return d;
}

}  // namespace gpudiag
