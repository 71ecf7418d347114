#include "counter_reader.hpp"

#include <charconv>

#include "extractor.hpp"
#include "line_fields.hpp"

namespace gpudiag::detail {
namespace {

// Only a counter that had got far says that a run started over: short runs
// and test runs repeated into one log go back to zero every time.
constexpr double kFarAlong = 1000;
// Back to near zero: below 1% of the highest. A directory listing sorted by
// name puts `step=2000` after `step=10000`, never this far below it.
constexpr double kNearZero = 0.01;

std::optional<double> to_number(const std::string& s) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

void keep(RecordedHit& out, const LineHit& hit) {
  out.line = hit.line;
  out.offset = hit.offset;
  out.text.assign(hit.text);
  out.truncated = hit.truncated;
}

}  // namespace

void CounterReader::on_hit(const LineHit& hit) {
  if (reads(rules_.rules[hit.rule].role)) {
    auto values = extract_values(rules_.extractions[hit.rule], hit.text);
    auto step = values.count("step") ? to_number(values["step"]) : std::nullopt;
    if (step) {
      // The same place is the same run's: a sweep saves each trial elsewhere.
      auto key = std::make_tuple(read_line(hit.text, Depth::launcher).rank, hit.rule, values["place"]);
      auto [it, added] = highest_.try_emplace(key);
      Highest& h = it->second;
      if (!reset_ && !added && h.step >= kFarAlong && *step < kNearZero * h.step) {
        CounterReset r;
        r.rule = hit.rule;
        r.from = h.step;
        r.to = *step;
        r.highest = h.hit;
        keep(r.after, hit);
        reset_ = std::move(r);
      }
      if (added || *step > h.step) {
        h.step = *step;
        keep(h.hit, hit);
      }
    }
  }
}

}  // namespace gpudiag::detail
