#include "verdict.hpp"

#include <cctype>
#include <cstdint>
#include <set>
#include <string>

#include "resolver.hpp"

namespace gpudiag::detail {
namespace {

std::string sentence(std::string_view s) {
  std::string out(s);
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  if (!out.empty() && out.back() != '.') out += '.';
  return out;
}

std::string describe_exit(int code) {
  std::string s = "exit code " + std::to_string(code);
  if (auto signo = signal_of(code)) {
    std::string_view name = signal_name(*signo);
    s += name.empty() ? " (signal " + std::to_string(*signo) + ")" : " (" + std::string(name) + ")";
  }
  return s;
}

std::string quote(const Evidence& ev) {
  std::string s = "line " + std::to_string(ev.line);
  if (ev.rank) s += " (rank " + std::to_string(*ev.rank) + (ev.host.empty() ? ")" : " on " + ev.host + ")");
  s += ": " + ev.text;
  if (ev.truncated) s += " [excerpt]";
  if (!ev.values.empty()) {
    s += " — ";
    bool first = true;
    for (const auto& [name, value] : ev.values) {
      if (!first) s += ", ";
      s += name + " " + value;
      first = false;
    }
  }
  if (ev.count > 1) s += " (" + std::to_string(ev.count) + " lines match " + ev.rule + ")";
  return s;
}

}  // namespace

Verdict build_verdict(const Diagnosis& d, const ClassInfo& info, std::size_t rule_count,
                      ExitReading exit_reading, const std::vector<std::string>& notes) {
  Verdict v;
  std::set<std::uint64_t> quoted;
  for (const auto& ev : d.evidence)
    if (quoted.insert(ev.line).second) v.shows.push_back(quote(ev));
  for (const auto& n : notes) v.shows.push_back(n);
  if (d.exit_code) {
    std::string exit = describe_exit(*d.exit_code);
    switch (exit_reading) {
      case ExitReading::agrees: v.shows.push_back(exit + ", which agrees"); break;
      case ExitReading::disagrees: v.shows.push_back(exit + ", which the log's evidence outweighs"); break;
      case ExitReading::alone: v.shows.push_back(exit + ", and no log line names a cause"); break;
      default: v.shows.push_back(exit); break;
    }
  }
  if (d.cls == "unknown")
    v.shows.push_back("none of the " + std::to_string(rule_count) + " rules matched a cause in " +
                      std::to_string(d.lines) + (d.lines == 1 ? " line (" : " lines (") +
                      std::to_string(d.bytes) + (d.bytes == 1 ? " byte)" : " bytes)"));

  v.implies.push_back(sentence(info.cause));
  if (d.owner != "none")
    v.implies.push_back("Owner: " + d.owner + ". Next: " + std::string(info.action) + ".");
  else
    v.implies.push_back("Next: " + std::string(info.action) + ".");
  v.implies.push_back("A plain rerun helps: " + std::string(info.rerun) + ".");

  v.cannot_decide.push_back(sentence(info.unknowable));
  if (exit_reading == ExitReading::alone)
    v.cannot_decide.push_back(
        "Who sent the signal: the exit code is the only evidence, and a scheduler or a user can "
        "send it too.");
  if (d.trajectory.shape == "none" && (d.cls == "healthy" || d.cls == "undertrained" ||
                                        d.cls == "resume_from_scratch"))
    v.cannot_decide.push_back(
        "Whether training was correct: no loss trajectory was recognised, so nothing shows the "
        "loss decreasing.");
  if ((d.cls == "timeout" || d.cls == "nccl_timeout") && d.trajectory.last)
    v.cannot_decide.push_back(
        "How long the run went without progress before it was stopped: lines are compared by "
        "position, not by their timestamps.");
  if (!d.exit_code && (d.cls == "unknown" || d.cls == "healthy" || d.family == "signal"))
    v.cannot_decide.push_back("The exit status: it was not given.");
  return v;
}

}  // namespace gpudiag::detail
