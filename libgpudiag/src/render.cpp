#include "gpudiag/render.hpp"

#include <cmath>
#include <cstdio>

#include "json_writer.hpp"
#include "series_fields.hpp"
#include "text_util.hpp"

namespace gpudiag {
namespace {

template <class T>
void write_optional(detail::JsonWriter& w, const std::optional<T>& v) {
  if (v) w.value(*v);
  else w.null();
}

void write_optional_string(detail::JsonWriter& w, const std::string& v) {
  if (v.empty()) w.null();
  else w.value(v);
}

void write_optional_line(detail::JsonWriter& w, const std::optional<std::uint64_t>& v) {
  if (v) w.value(static_cast<unsigned long long>(*v));
  else w.null();
}

void write_evidence(detail::JsonWriter& w, const Evidence& ev) {
  w.begin_object();
  w.key("rule").value(ev.rule);
  w.key("class").value(ev.cls);
  w.key("line").value(static_cast<unsigned long long>(ev.line));
  w.key("offset").value(static_cast<unsigned long long>(ev.offset));
  w.key("text").value(ev.text);
  w.key("truncated").value(ev.truncated);
  w.key("count").value(static_cast<unsigned long long>(ev.count));
  w.key("values").begin_object();
  for (const auto& [k, v] : ev.values) w.key(k).value(v);
  w.end_object();
  w.key("rank");
  write_optional(w, ev.rank);
  w.key("host");
  write_optional_string(w, ev.host);
  w.key("severity");
  write_optional_string(w, ev.severity);
  w.end_object();
}

// JSON has no NaN or Infinity: a non-finite loss is written as a string.
void write_loss(detail::JsonWriter& w, double loss) {
  if (std::isfinite(loss)) w.value(loss);
  else w.value(std::isnan(loss) ? "nan" : loss > 0 ? "inf" : "-inf");
}

// A reading as an object: its step, its value under `key` (a loss or the
// value of another series), its line. LossReading and Reading share it.
template <class R>
void write_reading(detail::JsonWriter& w, const std::optional<R>& r, const char* key, double R::*value) {
  if (!r) {
    w.null();
    return;
  }
  w.begin_object();
  w.key("step").value(static_cast<unsigned long long>(r->step));
  w.key(key);
  write_loss(w, (*r).*value);
  w.key("line").value(static_cast<unsigned long long>(r->line));
  w.key("step_reported").value(r->step_reported);
  w.end_object();
}

void write_reading(detail::JsonWriter& w, const std::optional<LossReading>& r) {
  write_reading(w, r, "loss", &LossReading::loss);
}

void write_worker(detail::JsonWriter& w, const FailedWorker& f) {
  w.begin_object();
  w.key("rank");
  write_optional(w, f.rank);
  w.key("local_rank");
  write_optional(w, f.local_rank);
  w.key("host");
  write_optional_string(w, f.host);
  w.key("time");
  write_optional_string(w, f.time);
  w.key("exit_code");
  write_optional(w, f.exit_code);
  w.key("signal");
  write_optional(w, f.signal);
  w.key("signal_name");
  write_optional_string(w, f.signal_name);
  w.key("line").value(static_cast<unsigned long long>(f.line));
  w.end_object();
}

void write_launcher(detail::JsonWriter& w, const std::optional<LauncherReport>& r) {
  if (!r) {
    w.null();
    return;
  }
  w.begin_object();
  w.key("root_cause");
  if (r->root_cause) write_worker(w, *r->root_cause);
  else w.null();
  w.key("other_failures").begin_array();
  for (const auto& f : r->other_failures) write_worker(w, f);
  w.end_array();
  w.key("other_failure_count").value(static_cast<unsigned long long>(r->other_failure_count));
  w.end_object();
}

// [step, value] pairs.
template <class R>
void write_series(detail::JsonWriter& w, const std::vector<R>& series, double R::*value) {
  w.begin_array();
  for (const auto& r : series) {
    w.begin_array();
    w.value(static_cast<unsigned long long>(r.step));
    write_loss(w, r.*value);
    w.end_array();
  }
  w.end_array();
}

void write_value_series(detail::JsonWriter& w, const Series& s) {
  w.begin_object();
  w.key("readings").value(static_cast<unsigned long long>(s.readings));
  const std::pair<const char*, const std::optional<Reading>*> points[] = {
      {"first", &s.first}, {"last", &s.last}, {"lowest", &s.lowest}, {"peak", &s.peak}};
  for (auto [key, point] : points) {
    w.key(key);
    write_reading(w, *point, "value", &Reading::value);
  }
  w.key("series");
  write_series(w, s.series, &Reading::value);
  w.end_object();
}

void write_trajectory(detail::JsonWriter& w, const Trajectory& t) {
  w.begin_object();
  w.key("shape").value(to_string(t.shape));
  w.key("readings").value(static_cast<unsigned long long>(t.readings));
  w.key("rank");
  write_optional(w, t.rank);
  w.key("max_step");
  write_optional_line(w, t.max_step);
  w.key("first_epoch");
  write_optional(w, t.first_epoch);
  w.key("first");
  write_reading(w, t.first);
  w.key("last");
  write_reading(w, t.last);
  w.key("lowest");
  write_reading(w, t.lowest);
  w.key("peak");
  write_reading(w, t.peak);
  w.key("first_non_finite");
  write_reading(w, t.first_non_finite);
  w.key("series");
  write_series(w, t.series, &LossReading::loss);
  for (auto [key, series] : detail::value_series(t)) {
    w.key(key);
    write_value_series(w, *series);
  }
  w.end_object();
}

void write_strings(detail::JsonWriter& w, const std::vector<std::string>& items) {
  w.begin_array();
  for (const auto& s : items) w.value(s);
  w.end_array();
}

struct Palette {
  bool on;
  std::string wrap(std::string_view code, std::string_view s) const {
    if (!on) return std::string(s);
    return "\x1b[" + std::string(code) + "m" + std::string(s) + "\x1b[0m";
  }
};

// No owner with evidence is a healthy run; no owner without any, undecided.
std::string_view owner_color(const Diagnosis& d) {
  const std::string& owner = d.owner;
  if (owner == "none") return d.evidence.empty() ? "1;35" : "1;32";
  if (owner == "infra") return "1;31";
  if (owner == "scheduler") return "1;34";
  return "1;33";
}

void write_input(detail::JsonWriter& w, const InputFormat& in) {
  w.begin_object();
  for (auto [key, value] : {std::pair{"compression", &in.compression}, std::pair{"container", &in.container},
                            std::pair{"encoding", &in.encoding}, std::pair{"damage", &in.damage}}) {
    w.key(key);
    write_optional_string(w, *value);
  }
  w.key("damage_at");
  if (in.damage.empty()) w.null();
  else w.value(static_cast<unsigned long long>(in.damage_at));
  w.end_object();
}

}  // namespace

std::string json_string(std::string_view s) {
  std::string out;
  detail::append_json_string(out, s);
  return out;
}

std::string to_json(const Diagnosis& d, const std::string& path, int indent) {
  detail::JsonWriter w(indent);
  w.begin_object();
  const std::string& p = path.empty() ? d.path : path;
  if (!p.empty()) w.key("path").value(p);
  w.key("class").value(d.cls);
  w.key("title").value(d.title);
  w.key("g15").value(d.g15);
  w.key("family").value(d.family);
  w.key("owner").value(d.owner);
  w.key("confidence").value(d.confidence);
  w.key("verdict").begin_object();
  w.key("shows");
  write_strings(w, d.verdict.shows);
  w.key("implies");
  write_strings(w, d.verdict.implies);
  w.key("cannot_decide");
  write_strings(w, d.verdict.cannot_decide);
  w.end_object();
  w.key("evidence").begin_array();
  for (const auto& ev : d.evidence) write_evidence(w, ev);
  w.end_array();
  w.key("findings").begin_array();
  for (const auto& f : d.findings) {
    w.begin_object();
    w.key("kind").value(f.kind);
    w.key("class");
    write_optional_string(w, f.cls);
    w.key("rule");
    write_optional_string(w, f.rule);
    w.key("line");
    write_optional_line(w, f.line);
    w.key("rank");
    write_optional(w, f.rank);
    w.key("reason").value(f.reason);
    w.key("message").value(f.message);
    w.key("evidence");
    if (f.evidence) write_evidence(w, *f.evidence);
    else w.null();
    w.end_object();
  }
  w.end_array();
  w.key("trajectory");
  write_trajectory(w, d.trajectory);
  w.key("launcher");
  write_launcher(w, d.launcher);
  w.key("exit_code");
  write_optional(w, d.exit_code);
  w.key("bytes").value(static_cast<unsigned long long>(d.bytes));
  w.key("lines").value(static_cast<unsigned long long>(d.lines));
  w.key("input");
  write_input(w, d.input);
  w.end_object();
  return w.str();
}

std::string input_problem(const InputFormat& input) {
  if (input.damage.empty()) return {};
  if (input.compression.empty()) return input.damage;
  return input.compression + " data: " + input.damage + " (byte " + std::to_string(input.damage_at) +
         " of the file)";
}

std::string to_text(const Diagnosis& d, const std::string& path, const TextStyle& style) {
  Palette p{style.color};
  std::string out;
  const std::string& shown = path.empty() ? d.path : path;
  if (!shown.empty()) out += p.wrap("1", detail::printable(shown == "-" ? "<stdin>" : shown)) + "\n";
  char conf[16];
  std::snprintf(conf, sizeof conf, "%.2f", d.confidence);
  out += "  " + p.wrap(owner_color(d), d.cls);
  if (!d.title.empty()) out += " · " + d.title;
  out += "\n";
  out += p.wrap("2", "  owner " + d.owner + " · family " + d.family + " · g15 " + d.g15 +
                         " · confidence " + conf) +
         "\n";
  auto section = [&](std::string_view title, const std::vector<std::string>& items) {
    if (items.empty()) return;
    out += "  " + p.wrap("1", title) + "\n";
    for (const auto& s : items) out += "    " + detail::printable(s) + "\n";
  };
  section("shows", d.verdict.shows);
  section("implies", d.verdict.implies);
  section("cannot decide", d.verdict.cannot_decide);
  std::vector<std::string> also;
  for (const auto& f : d.findings) {
    std::string s = f.message;
    if (f.evidence && f.kind != "also_matched")
      s += ": line " + std::to_string(f.evidence->line) + ": " + f.evidence->text;
    also.push_back(std::move(s));
  }
  section("findings", also);
  if (!d.input.damage.empty())
    out += "  " + p.wrap("1;33", "input") + "\n    " + input_problem(d.input) + "; diagnosed from the " +
           std::to_string(d.lines) + (d.lines == 1 ? " line" : " lines") + " before it\n";
  return out;
}

namespace {

// A line of text cut to `limit` bytes at a character boundary, with "…"
// where it was cut: a brief line stays one terminal line or so.
std::string clipped(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  std::size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "\u2026";
}

}  // namespace

std::string to_brief(const Diagnosis& d, const std::string& path, const TextStyle& style) {
  constexpr std::size_t kTextLimit = 160;
  Palette p{style.color};
  const std::string& shown = path.empty() ? d.path : path;
  std::string out = p.wrap("1", detail::printable(shown.empty() || shown == "-" ? "<stdin>" : shown));
  const Evidence* deciding = d.evidence.empty() ? nullptr : &d.evidence.front();
  if (deciding) out.append(":").append(p.wrap("32", std::to_string(deciding->line)));
  char conf[16];
  std::snprintf(conf, sizeof conf, "%.2f", d.confidence);
  out.append(": ").append(p.wrap(owner_color(d), d.cls)).append(" (").append(d.owner).append(", ").append(conf).append(")");
  if (deciding) out.append(": ").append(detail::printable(clipped(deciding->text, kTextLimit)));
  return out;
}

}  // namespace gpudiag
