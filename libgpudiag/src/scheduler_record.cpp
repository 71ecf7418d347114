#include <simdjson.h>

#include <charconv>
#include <climits>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "gpudiag/diagnose.hpp"
#include "gpudiag/scheduler.hpp"

namespace gpudiag {
namespace {

[[noreturn]] void fail(std::string_view name, const std::string& why) {
  throw InputError(std::string(name) + ": " + why);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

// A whole number of digits alone, when it fits in 64 bits.
std::optional<std::int64_t> whole(std::string_view s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || s[0] == '-') return std::nullopt;
  return v;
}

// "[D-]HH:MM:SS", "MM:SS", "MM:SS.mmm" as seconds; none for UNLIMITED and
// the like.
std::optional<std::int64_t> duration(std::string_view s) {
  // A year of seconds is 3e7: a record past a million days is no duration.
  constexpr std::int64_t kMaxDays = 1'000'000;
  std::int64_t days = 0, total = 0;
  if (const auto dash = s.find('-'); dash != s.npos) {
    const auto d = whole(s.substr(0, dash));
    if (!d || *d > kMaxDays) return std::nullopt;
    days = *d;
    s.remove_prefix(dash + 1);
  }
  int parts = 0;
  std::size_t at = 0;
  while (at <= s.size()) {
    const std::size_t colon = std::min(s.find(':', at), s.size());
    std::string_view part = s.substr(at, colon - at);
    part = part.substr(0, part.find('.'));  // sacct's "00:00:01.123": the fraction is dropped
    const auto v = whole(part);
    if (!v || *v > kMaxDays * 86400) return std::nullopt;
    total = total * 60 + *v;
    if (++parts > 3) return std::nullopt;
    at = colon + 1;
  }
  if (parts < 2) return std::nullopt;
  return days * 86400 + total;
}

std::string clock(std::int64_t seconds) {
  char out[32];
  const std::int64_t days = seconds / 86400;
  seconds %= 86400;
  if (days)
    std::snprintf(out, sizeof out, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(days),
                  static_cast<long long>(seconds / 3600), static_cast<long long>(seconds / 60 % 60),
                  static_cast<long long>(seconds % 60));
  else
    std::snprintf(out, sizeof out, "%02lld:%02lld:%02lld", static_cast<long long>(seconds / 3600),
                  static_cast<long long>(seconds / 60 % 60), static_cast<long long>(seconds % 60));
  return out;
}

// "0:15" (return code : signal).
void exit_code(SchedulerRecord& r, std::string_view s) {
  const auto colon = s.find(':');
  if (colon == s.npos) return;
  const auto code = whole(s.substr(0, colon)), signal = whole(s.substr(colon + 1));
  if (!code || !signal || *code > 255 || *signal > 255) return;  // no exit status Slurm writes
  r.return_code = static_cast<int>(*code);
  r.signal = static_cast<int>(*signal);
}

// "CANCELLED by 1234" -> "CANCELLED".
std::string state_word(std::string_view s) {
  s = trim(s);
  return std::string(s.substr(0, s.find(' ')));
}

// A number as Slurm's JSON writes it: plain, or {"set", "infinite", "number"}.
std::optional<std::int64_t> json_number(simdjson::dom::element e) {
  std::int64_t v;
  if (!e.get(v)) return v;
  simdjson::dom::object o;
  if (e.get(o)) return std::nullopt;
  bool flag;
  if (!o["set"].get(flag) && !flag) return std::nullopt;
  if (!o["infinite"].get(flag) && flag) return std::nullopt;
  if (!o["number"].get(v)) return v;
  return std::nullopt;
}

// The member `key` of `e`, when it has one.
std::optional<simdjson::dom::element> member(simdjson::dom::element e, const char* key) {
  simdjson::dom::element m;
  if (e[key].get(m)) return std::nullopt;
  return m;
}

// A string, or the first of a list of them (Slurm 23 writes states as lists).
std::string json_word(simdjson::dom::element e) {
  std::string_view s;
  if (!e.get(s)) return std::string(s);
  simdjson::dom::array a;
  if (!e.get(a) && a.size() && !a.at(0).get(s)) return std::string(s);
  return {};
}

SchedulerRecord from_sacct_json(std::string_view text, std::string_view name) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(text);
  simdjson::dom::element doc;
  if (auto error = parser.parse(padded).get(doc)) fail(name, std::string("not valid JSON: ") + simdjson::error_message(error));
  simdjson::dom::array jobs;
  if (doc["jobs"].get(jobs)) fail(name, "JSON without a \"jobs\" list: not sacct --json output");
  if (jobs.size() != 1)
    fail(name, "holds " + std::to_string(jobs.size()) + " jobs; give the record of one (sacct --json -j JOBID)");
  const simdjson::dom::element job = jobs.at(0).value_unsafe();
  SchedulerRecord r;
  r.source = "sacct --json";
  if (auto id = member(job, "job_id"))
    if (auto v = json_number(*id)) r.job_id = std::to_string(*v);
  if (auto state = member(job, "state")) {
    const auto current = member(*state, "current");
    r.state = json_word(current ? *current : *state);
    if (auto reason = member(*state, "reason")) r.reason = json_word(*reason);
    if (r.reason == "None") r.reason.clear();
  }
  if (auto code = member(job, "exit_code")) {
    if (auto rc = member(*code, "return_code"))
      if (auto v = json_number(*rc)) r.return_code = static_cast<int>(*v);
    if (auto signal = member(*code, "signal")) {
      auto id = member(*signal, "id");
      if (!id) id = member(*signal, "signal_id");  // Slurm 21
      if (id)
        if (auto v = json_number(*id)) r.signal = static_cast<int>(*v);
    }
  }
  if (auto time = member(job, "time")) {
    if (auto elapsed = member(*time, "elapsed")) r.elapsed_seconds = json_number(*elapsed);
    if (auto limit = member(*time, "limit"))
      if (auto minutes = json_number(*limit)) r.limit_seconds = *minutes * 60;
  }
  if (auto nodes = member(job, "nodes")) r.nodes = json_word(*nodes);
  if (auto restarts = member(job, "restart_cnt"))
    if (auto v = json_number(*restarts)) r.restarts = static_cast<int>(*v);
  if (r.state.empty()) fail(name, "the job has no state");
  return r;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (true) {
    const std::size_t next = s.find(sep, at);
    out.push_back(s.substr(at, next == s.npos ? s.npos : next - at));
    if (next == s.npos) return out;
    at = next + 1;
  }
}

SchedulerRecord from_sacct_parsable(std::string_view text, std::string_view name) {
  std::vector<std::string_view> lines = split(text, '\n');
  const std::vector<std::string_view> header = split(trim(lines[0]), '|');
  auto column = [&](std::string_view key) -> int {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == key) return static_cast<int>(i);
    return -1;
  };
  const int id = column("JobID"), state = column("State");
  if (id < 0 || state < 0) fail(name, "a '|' table without JobID and State columns: not sacct -P output");
  std::optional<std::vector<std::string_view>> job;
  int jobs = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string_view> row = split(trim(lines[i]), '|');
    if (row.size() != header.size() || row[id].find('.') != std::string_view::npos) continue;  // a step
    ++jobs;
    if (!job) job = row;
  }
  if (jobs != 1) fail(name, "holds " + std::to_string(jobs) + " jobs; give the record of one (sacct -P -j JOBID)");
  const auto& row = *job;
  auto cell = [&](std::string_view key) -> std::string_view {
    const int c = column(key);
    return c < 0 ? std::string_view() : row[c];
  };
  SchedulerRecord r;
  r.source = "sacct -P";
  r.job_id = std::string(cell("JobID"));
  r.state = state_word(cell("State"));
  exit_code(r, cell("ExitCode"));
  r.elapsed_seconds = duration(cell("Elapsed"));
  r.limit_seconds = duration(cell("Timelimit"));
  r.nodes = std::string(cell("NodeList"));
  r.reason = std::string(cell("Reason"));
  if (r.reason == "None") r.reason.clear();
  return r;
}

SchedulerRecord from_scontrol(std::string_view text, std::string_view name) {
  SchedulerRecord r;
  r.source = "scontrol show job";
  std::istringstream words{std::string(text)};
  std::string word;
  while (words >> word) {
    const auto eq = word.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "JobId" && r.job_id.empty()) r.job_id = value;
    else if (key == "JobState") r.state = value;
    else if (key == "Reason" && value != "None") r.reason = value;
    else if (key == "ExitCode") exit_code(r, value);
    else if (key == "RunTime") r.elapsed_seconds = duration(value);
    else if (key == "TimeLimit") r.limit_seconds = duration(value);
    else if (key == "NodeList" && value != "(null)") r.nodes = value;
    else if (key == "Restarts") {
      if (const auto n = whole(value); n && *n <= INT_MAX) r.restarts = static_cast<int>(*n);
    }
  }
  if (r.state.empty()) fail(name, "no JobState=: not scontrol show job output");
  return r;
}

}  // namespace

std::optional<int> SchedulerRecord::exit_status() const {
  if (signal && *signal > 0) return -*signal;
  return return_code;
}

std::string SchedulerRecord::render() const {
  std::string s = "slurm record (" + source + "): JobId=" + (job_id.empty() ? "?" : job_id) + " JobState=" + state;
  if (!reason.empty()) s += " Reason=" + reason;
  if (return_code || signal)
    s += " ExitCode=" + std::to_string(return_code.value_or(0)) + ":" + std::to_string(signal.value_or(0));
  if (elapsed_seconds) s += " RunTime=" + clock(*elapsed_seconds);
  if (limit_seconds) s += " TimeLimit=" + clock(*limit_seconds);
  if (!nodes.empty()) s += " NodeList=" + nodes;
  if (restarts) s += " Restarts=" + std::to_string(*restarts);
  return s + "\n";
}

SchedulerRecord parse_scheduler_record(std::string_view text, std::string_view name) {
  const std::string_view body = trim(text);
  if (body.empty()) fail(name, "empty: no scheduler record");
  if (body.front() == '{') return from_sacct_json(body, name);
  if (body.substr(0, body.find('\n')).find('|') != std::string_view::npos) return from_sacct_parsable(body, name);
  if (body.find("JobState=") != std::string_view::npos) return from_scontrol(body, name);
  fail(name, "not a scheduler record: expected sacct --json, sacct -P or scontrol show job output");
}

SchedulerRecord read_scheduler_record(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path.string(), "cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_scheduler_record(text.str(), path.string());
}

}  // namespace gpudiag
