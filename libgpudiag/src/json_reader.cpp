// Reads a diagnosis back from the JSON object to_json writes: pickling,
// on-disk caches and Python's from_dict go through the one schema rather than
// a second layout of the same fields.
#include <simdjson.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "gpudiag/render.hpp"
#include "series_fields.hpp"

namespace gpudiag {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

[[noreturn]] void wrong(std::string_view field, std::string_view what) {
  throw std::invalid_argument("not a diagnosis: '" + std::string(field) + "' " + std::string(what));
}

element field(object o, std::string_view key) {
  element e;
  if (o[key].get(e)) wrong(key, "is missing");
  return e;
}

bool is_null(object o, std::string_view key) {
  element e;
  return o[key].get(e) || e.is_null();
}

std::string text(object o, std::string_view key) {
  std::string_view s;
  if (field(o, key).get(s)) wrong(key, "is not a string");
  return std::string(s);
}

// A string that to_json writes as null when empty.
std::string text_or_empty(object o, std::string_view key) {
  return is_null(o, key) ? std::string() : text(o, key);
}

std::uint64_t count(object o, std::string_view key) {
  std::uint64_t n = 0;
  if (field(o, key).get(n)) wrong(key, "is not a count");
  return n;
}

bool flag(object o, std::string_view key) {
  bool b = false;
  if (field(o, key).get(b)) wrong(key, "is not true or false");
  return b;
}

std::optional<int> small_int(object o, std::string_view key) {
  if (is_null(o, key)) return std::nullopt;
  std::int64_t n = 0;
  if (field(o, key).get(n) || n < std::numeric_limits<int>::min() || n > std::numeric_limits<int>::max())
    wrong(key, "is not an integer");
  return static_cast<int>(n);
}

// A number, or "nan", "inf", "-inf": JSON has no non-finite numbers.
double number(element e, std::string_view key) {
  double d = 0;
  if (!e.get(d)) return d;
  std::string_view s;
  if (e.get(s)) wrong(key, "is not a number");
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  wrong(key, "is not a number");
}

object member_object(object o, std::string_view key) {
  object inner;
  if (field(o, key).get(inner)) wrong(key, "is not an object");
  return inner;
}

array member_array(object o, std::string_view key) {
  array items;
  if (field(o, key).get(items)) wrong(key, "is not an array");
  return items;
}

object as_object(element e, std::string_view key) {
  object o;
  if (e.get(o)) wrong(key, "holds something that is not an object");
  return o;
}

std::vector<std::string> strings(object o, std::string_view key) {
  std::vector<std::string> out;
  for (element e : member_array(o, key)) {
    std::string_view s;
    if (e.get(s)) wrong(key, "holds something that is not a string");
    out.emplace_back(s);
  }
  return out;
}

Evidence read_evidence(object o) {
  Evidence ev;
  ev.rule = text(o, "rule");
  ev.cls = text(o, "class");
  ev.line = count(o, "line");
  ev.offset = count(o, "offset");
  ev.text = text(o, "text");
  ev.truncated = flag(o, "truncated");
  ev.count = count(o, "count");
  for (auto [k, v] : member_object(o, "values")) {
    std::string_view s;
    if (v.get(s)) wrong("values", "holds something that is not a string");
    ev.values.emplace(std::string(k), std::string(s));
  }
  ev.rank = small_int(o, "rank");
  ev.host = text_or_empty(o, "host");
  ev.severity = text_or_empty(o, "severity");
  return ev;
}

Finding read_finding(object o) {
  Finding f;
  f.kind = text(o, "kind");
  f.cls = text_or_empty(o, "class");
  f.rule = text_or_empty(o, "rule");
  if (!is_null(o, "line")) f.line = count(o, "line");
  f.rank = small_int(o, "rank");
  f.reason = text(o, "reason");
  f.message = text(o, "message");
  if (!is_null(o, "evidence")) f.evidence = read_evidence(member_object(o, "evidence"));
  return f;
}

// A reading: {step, <value_key>, line, step_reported}, or null.
template <class R>
std::optional<R> read_reading(object o, std::string_view key, std::string_view value_key, double R::*value) {
  if (is_null(o, key)) return std::nullopt;
  const object r = member_object(o, key);
  R out;
  out.step = count(r, "step");
  out.*value = number(field(r, value_key), value_key);
  out.line = count(r, "line");
  out.step_reported = flag(r, "step_reported");
  return out;
}

// [step, value] pairs; the line of each point is not part of the schema.
template <class R>
std::vector<R> read_series(object o, double R::*value) {
  std::vector<R> out;
  for (element e : member_array(o, "series")) {
    array pair;
    std::uint64_t step = 0;
    if (e.get(pair) || pair.size() != 2 || pair.at(0).get(step)) wrong("series", "holds something that is not a [step, value] pair");
    R r;
    r.step = step;
    r.*value = number(pair.at(1).value_unsafe(), "series");
    out.push_back(r);
  }
  return out;
}

Series read_value_series(object o) {
  Series s;
  s.readings = count(o, "readings");
  s.first = read_reading(o, "first", "value", &Reading::value);
  s.last = read_reading(o, "last", "value", &Reading::value);
  s.lowest = read_reading(o, "lowest", "value", &Reading::value);
  s.peak = read_reading(o, "peak", "value", &Reading::value);
  s.series = read_series(o, &Reading::value);
  return s;
}

TrajectoryShape shape_named(std::string_view name) {
  for (auto shape : {TrajectoryShape::none, TrajectoryShape::too_short, TrajectoryShape::inconclusive,
                     TrajectoryShape::decreasing, TrajectoryShape::non_finite, TrajectoryShape::diverged,
                     TrajectoryShape::plateau, TrajectoryShape::no_decrease})
    if (to_string(shape) == name) return shape;
  wrong("shape", "is not a trajectory shape");
}

Trajectory read_trajectory(object o) {
  Trajectory t;
  t.shape = shape_named(text(o, "shape"));
  t.readings = count(o, "readings");
  t.rank = small_int(o, "rank");
  if (!is_null(o, "max_step")) t.max_step = count(o, "max_step");
  if (!is_null(o, "first_epoch")) t.first_epoch = number(field(o, "first_epoch"), "first_epoch");
  t.first = read_reading(o, "first", "loss", &LossReading::loss);
  t.last = read_reading(o, "last", "loss", &LossReading::loss);
  t.lowest = read_reading(o, "lowest", "loss", &LossReading::loss);
  t.peak = read_reading(o, "peak", "loss", &LossReading::loss);
  t.first_non_finite = read_reading(o, "first_non_finite", "loss", &LossReading::loss);
  t.series = read_series(o, &LossReading::loss);
  for (auto [key, series] : detail::value_series(t)) *series = read_value_series(member_object(o, key));
  return t;
}

FailedWorker read_worker(object o) {
  FailedWorker f;
  f.rank = small_int(o, "rank");
  f.local_rank = small_int(o, "local_rank");
  f.host = text_or_empty(o, "host");
  f.time = text_or_empty(o, "time");
  f.exit_code = small_int(o, "exit_code");
  f.signal = small_int(o, "signal");
  f.signal_name = text_or_empty(o, "signal_name");
  f.line = count(o, "line");
  return f;
}

std::optional<LauncherReport> read_launcher(object o) {
  if (is_null(o, "launcher")) return std::nullopt;
  const object l = member_object(o, "launcher");
  LauncherReport r;
  if (!is_null(l, "root_cause")) r.root_cause = read_worker(member_object(l, "root_cause"));
  for (element e : member_array(l, "other_failures")) r.other_failures.push_back(read_worker(as_object(e, "other_failures")));
  r.other_failure_count = count(l, "other_failure_count");
  return r;
}

InputFormat read_input(object o) {
  InputFormat in;
  in.compression = text_or_empty(o, "compression");
  in.container = text_or_empty(o, "container");
  in.encoding = text_or_empty(o, "encoding");
  in.damage = text_or_empty(o, "damage");
  if (!is_null(o, "damage_at")) in.damage_at = count(o, "damage_at");
  return in;
}

}  // namespace

Diagnosis from_json(std::string_view json) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(json);
  element root;
  if (const auto error = parser.parse(padded).get(root))
    throw std::invalid_argument(std::string("not a diagnosis: the JSON does not parse: ") + simdjson::error_message(error));
  const object o = as_object(root, "the document");
  Diagnosis d;
  d.path = is_null(o, "path") ? std::string() : text(o, "path");
  d.cls = text(o, "class");
  d.title = text(o, "title");
  d.g15 = text(o, "g15");
  d.family = text(o, "family");
  d.owner = text(o, "owner");
  d.confidence = number(field(o, "confidence"), "confidence");
  const object verdict = member_object(o, "verdict");
  d.verdict.shows = strings(verdict, "shows");
  d.verdict.implies = strings(verdict, "implies");
  d.verdict.cannot_decide = strings(verdict, "cannot_decide");
  for (element e : member_array(o, "evidence")) d.evidence.push_back(read_evidence(as_object(e, "evidence")));
  for (element e : member_array(o, "findings")) d.findings.push_back(read_finding(as_object(e, "findings")));
  d.trajectory = read_trajectory(member_object(o, "trajectory"));
  d.launcher = read_launcher(o);
  d.exit_code = small_int(o, "exit_code");
  d.bytes = count(o, "bytes");
  d.lines = count(o, "lines");
  d.input = read_input(member_object(o, "input"));
  return d;
}

}  // namespace gpudiag
