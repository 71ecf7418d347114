#include "launcher_report_reader.hpp"

#include <charconv>

#include "line_fields.hpp"
#include "signals.hpp"
#include "text_util.hpp"

namespace gpudiag::detail {
namespace {

constexpr std::size_t kMaxOtherFailures = 64;
// Lines allowed between two lines of one summary: an entry's `[k]:` header
// and the `-----` rule are not flagged, so the gap before a field can be two.
constexpr std::uint64_t kMaxGap = 3;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::optional<int> leading_int(std::string_view s) {
  s = trim(s);
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr == s.data()) return std::nullopt;
  return v;
}

// The integer after `key` in `s`, as in "(local_rank: 3)" or "Signal 6 (".
std::optional<int> int_after(std::string_view s, std::string_view key) {
  std::size_t at = s.find(key);
  if (at == s.npos) return std::nullopt;
  return leading_int(s.substr(at + key.size()));
}

void set_signal(FailedWorker& w, int signo) {
  if (signo <= 0 || signo >= 65) return;
  w.signal = signo;
  w.signal_name = std::string(signal_name(signo));
  if (w.signal_name.empty()) w.signal_name = "signal " + std::to_string(signo);
}

}  // namespace

LauncherReportReader::LauncherReportReader(const RuleSet::Impl& rules) : rules_(rules) {}

void LauncherReportReader::on_hit(const LineHit& hit) {
  if (reads(rules_.rules[hit.rule].role)) add_line(hit.text, hit.line);
}

void LauncherReportReader::commit() {
  if (!entry_open_) return;
  entry_open_ = false;
  if (entry_section_ == Section::root) {
    if (!current_.root_cause) current_.root_cause = entry_;
  } else {
    ++current_.other_failure_count;
    if (current_.other_failures.size() < kMaxOtherFailures) current_.other_failures.push_back(entry_);
  }
}

void LauncherReportReader::start_summary() {
  commit();
  if (current_.root_cause) complete_ = current_;
  current_ = {};
}

void LauncherReportReader::add_line(std::string_view text, std::uint64_t line) {
  // srun --label puts its task label in front of the agent's lines.
  text = read_line(text).message;
  text = trim(text);
  const bool close = section_ != Section::none && line <= last_line_ + kMaxGap;

  if (starts_with(text, "Failures:")) {
    start_summary();
    section_ = Section::others;
    last_line_ = line;
    return;
  }
  if (starts_with(text, "Root Cause (first observed failure)")) {
    if (!close) start_summary();  // a summary with no Failures block above it
    commit();
    section_ = Section::root;
    last_line_ = line;
    return;
  }

  std::size_t colon = text.find(':');
  if (colon == text.npos) return;
  if (!close) {
    section_ = Section::none;
    return;
  }
  const std::string_view key = trim(text.substr(0, colon));
  const std::string_view value = trim(text.substr(colon + 1));
  // `time` is each entry's first field; any field opens an entry if none is.
  if (key == "time" || !entry_open_ || entry_section_ != section_) {
    commit();
    entry_ = FailedWorker{};
    entry_.line = line;
    entry_section_ = section_;
    entry_open_ = true;
  }
  last_line_ = line;
  // The summary's fields are the log's bytes: valid UTF-8 for JSON and Python.
  if (key == "time") {
    entry_.time = to_valid_utf8(value);
  } else if (key == "host") {
    entry_.host = to_valid_utf8(value);
  } else if (key == "rank") {
    entry_.rank = leading_int(value);
    entry_.local_rank = int_after(value, "local_rank:");
  } else if (key == "exitcode") {
    entry_.exit_code = leading_int(value);
    if (entry_.exit_code && *entry_.exit_code < 0) set_signal(entry_, -*entry_.exit_code);
  } else if (auto signo = int_after(value, "Signal "); signo && value.starts_with("Signal ")) {
    set_signal(entry_, *signo);  // the traceback field: "Signal 6 (SIGABRT) received by PID 7"
  }
}

std::optional<LauncherReport> LauncherReportReader::finish() {
  commit();
  if (current_.root_cause) return current_;
  if (complete_) return complete_;
  if (current_.other_failure_count > 0) return current_;
  return std::nullopt;
}

}  // namespace gpudiag::detail
