#include "traceback_reader.hpp"

#include "line_fields.hpp"

namespace gpudiag::detail {
namespace {

// Lines between two lines of one traceback, or between its last frame and
// the exception line: the frame's code, Python 3.11's ^^^ markers, a chained
// exception's banner and blank lines.
constexpr std::uint64_t kGap = 8;
constexpr std::size_t kMaxFrames = 16 * 1024;  // bytes kept per open traceback

// `File "path", line N, in function` -> "path in function".
std::string frame_of(std::string_view message) {
  const std::size_t open = message.find('"');
  const std::size_t close = open == std::string_view::npos ? open : message.find('"', open + 1);
  if (close == std::string_view::npos) return std::string(message);
  std::string out(message.substr(open + 1, close - open - 1));
  const std::size_t in = message.rfind(", in ");
  if (in != std::string_view::npos && in > close) out.append(" in ").append(message.substr(in + 5));
  return out;
}

}  // namespace

// The traceback a line of `rank` belongs to: the open one when the line
// follows it closely (a next frame, a chained exception), else a new one.
TracebackReader::Open& TracebackReader::extend(std::optional<int> rank, std::uint64_t line, bool fresh) {
  Open& o = by_rank_[rank.value_or(-1)];
  if (fresh || o.last_line == 0 || line > o.last_line + kGap) {
    o.start = line;
    o.frames.clear();
    o.in_training_step = false;
    o.severity = Severity::unknown;
  }
  o.last_line = line;
  return o;
}

std::optional<int> TracebackReader::launcher_rank(const LineHit& hit) {
  if (hit.layout == 0 || hit.truncated) return read_line(hit.text, Depth::launcher).rank;
  RankPlace& place = rank_places_[(hit.layout * 0x9E3779B97F4A7C15ull) >> 58];
  if (place.layout != hit.layout) {
    const LineFields f = read_line(hit.text, Depth::launcher);
    place = {hit.layout, f.rank.has_value(), f.rank ? static_cast<std::uint32_t>(f.rank_text.data() - hit.text.data()) : 0,
             static_cast<std::uint32_t>(f.rank_text.size())};
    return f.rank;
  }
  if (!place.has) return std::nullopt;
  int rank = 0;
  for (std::uint32_t i = place.at; i < place.at + place.size; ++i) rank = rank * 10 + (hit.text[i] - '0');
  return rank;  // at most six digits: an int
}

void TracebackReader::on_hit(const LineHit& hit) {
  const Role role = rules_.rules[hit.rule].role;
  if (role == Role::warning) warning_line_[launcher_rank(hit).value_or(-1)] = hit.line;
  if (role == Role::traceback_start) {
    // An ignored exception's report begins a traceback of its own, and its
    // own traceback header follows it at once; any later header, one that
    // continues that traceback's banner aside, is another exception's.
    const std::optional<int> rank = launcher_rank(hit);
    const Severity severity = rules_.rules[hit.rule].severity;
    const auto open = by_rank_.find(rank.value_or(-1));
    const bool after_ignored = open != by_rank_.end() && open->second.severity != Severity::unknown &&
                               hit.line > open->second.start + 1;
    Open& o = extend(rank, hit.line, severity < Severity::error || after_ignored);
    if (severity < Severity::error) o.severity = severity;
  }
  if (role == Role::frame && !rules_.rules[hit.rule].phase.empty()) {
    extend(launcher_rank(hit), hit.line).in_training_step = true;
  } else if (role == Role::frame) {
    const LineFields f = read_line(hit.text);
    Open& o = extend(f.rank, hit.line);
    if (o.frames.size() < kMaxFrames) o.frames.append(frame_of(f.message)).push_back('\n');
  }
}

bool TracebackReader::continues_warning(std::uint64_t line, std::optional<int> rank) const {
  auto it = warning_line_.find(rank.value_or(-1));
  return it != warning_line_.end() && it->second + 1 == line;
}

std::optional<PythonException> TracebackReader::exception_at(std::uint64_t line,
                                                             std::optional<int> rank) const {
  auto it = by_rank_.find(rank.value_or(-1));
  if (it == by_rank_.end()) return std::nullopt;
  const Open& o = it->second;
  if (o.last_line == 0 || line < o.start || line > o.last_line + kGap) return std::nullopt;
  return PythonException{o.start, o.last_line, o.frames, o.in_training_step, o.severity};
}

}  // namespace gpudiag::detail
