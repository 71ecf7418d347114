#include "exit_status_reader.hpp"

#include <algorithm>
#include <charconv>

#include "extractor.hpp"
#include "gpudiag/diagnose.hpp"
#include "signals.hpp"

namespace gpudiag::detail {
namespace {

std::optional<int> to_int(std::string_view s) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<int> signal_from_values(const std::map<std::string, std::string>& values) {
  if (auto it = values.find("signal"); it != values.end()) {
    if (auto n = to_int(it->second)) return *n > 0 && *n < 65 ? n : std::nullopt;
    return signal_number(it->second);
  }
  if (auto it = values.find("exit_code"); it != values.end())
    if (auto code = gpudiag::parse_exit_status(it->second)) return signal_of(*code);
  return std::nullopt;
}

ExitStatusReader::ExitStatusReader(const RuleSet::Impl& rules) : rules_(rules) {}

void ExitStatusReader::on_hit(const LineHit& hit) {
  if (reads(rules_.rules[hit.rule].role)) {
    const auto signo = signal_from_values(extract_values(rules_.extractions[hit.rule], hit.text));
    const ClassInfo* info = signo ? rules_.taxonomy.for_signal(*signo) : nullptr;
    if (info) {
      auto it = std::find_if(reports_.begin(), reports_.end(), [&](const auto& r) {
        return r.rule == hit.rule && r.cls == info->id;
      });
      if (it == reports_.end()) {
        reports_.push_back({hit.rule, info->id, *signo, {}});
        it = reports_.end() - 1;
      }
      record_hit(it->evidence, hit);
    }
  }
}

}  // namespace gpudiag::detail
