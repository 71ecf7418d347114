#include "resolver.hpp"

#include <cmath>
#include <set>
#include <string>

#include "gpudiag/taxonomy.hpp"
#include "verdict.hpp"

namespace gpudiag::detail {
namespace {

// A class an exit signal alone points to, when the log says nothing better.
std::string_view signal_class(int signo) {
  switch (signo) {
    case 9: return "oom_killer";
    case 11: return "segfault";
    case 6: return "native_abort";
    case 7: return "bus_error";
    default: return {};
  }
}

// runtime_error and traceback mean "an exception no class above explains":
// once a more specific cause matched, their lines are that cause's wrapper.
bool explained_by_any_cause(std::string_view cls) {
  return cls == "runtime_error" || cls == "traceback";
}

// Each independent signal that agrees halves the remaining doubt; a matched
// log line weighs twice an exit code.
double confidence_from(int units) {
  if (units <= 0) return 0.0;
  return std::min(0.99, 1.0 - std::pow(0.5, units));
}

}  // namespace

std::optional<int> signal_of(std::optional<int> exit_code) {
  if (!exit_code) return std::nullopt;
  int c = *exit_code;
  if (c < 0 && c > -65) return -c;
  if (c > 128 && c < 128 + 65) return c - 128;
  return std::nullopt;
}

std::string_view signal_name(int signo) {
  switch (signo) {
    case 1: return "SIGHUP";
    case 2: return "SIGINT";
    case 3: return "SIGQUIT";
    case 4: return "SIGILL";
    case 6: return "SIGABRT";
    case 7: return "SIGBUS";
    case 8: return "SIGFPE";
    case 9: return "SIGKILL";
    case 11: return "SIGSEGV";
    case 13: return "SIGPIPE";
    case 15: return "SIGTERM";
    default: return "";
  }
}

Diagnosis resolve(const RuleSet::Impl& rules, const ScanResult& scan) {
  Diagnosis d;
  d.exit_code = scan.exit_code;
  d.bytes = scan.bytes;
  d.lines = scan.lines;
  const auto& set = rules.rules;
  auto matched = [&](unsigned i) { return scan.per_rule[i].count > 0; };
  auto evidence_of = [&](unsigned i) {
    return make_evidence(rules, i, scan.per_rule[i], scan.per_rule[i].first);
  };

  int primary = -1;
  for (unsigned i = 0; i < set.size(); ++i)
    if (set[i].role == Role::cause && matched(i)) {
      primary = static_cast<int>(i);
      break;
    }

  const std::optional<int> signo = signal_of(scan.exit_code);
  const std::string_view exit_class = signo ? signal_class(*signo) : std::string_view{};
  int units = 0;
  ExitReading exit_reading = ExitReading::none;
  // Two rules matching one line are one signal, not two.
  std::set<std::uint64_t> counted_lines;
  auto weigh = [&](const Evidence& ev, int weight) {
    if (counted_lines.insert(ev.line).second) units += weight;
  };

  if (primary >= 0) {
    d.cls = set[primary].cls;
    d.g15 = set[primary].g15;
    for (unsigned i = 0; i < set.size(); ++i) {
      if (set[i].role != Role::cause || !matched(i)) continue;
      if (set[i].cls == d.cls) {
        d.evidence.push_back(evidence_of(i));
        weigh(d.evidence.back(), 2);
        if (d.evidence.back().count > 1) units += 1;  // more lines agree
      } else if (!explained_by_any_cause(set[i].cls)) {
        Evidence ev = evidence_of(i);
        d.findings.push_back({"also_matched", set[i].cls,
                              "rule " + set[i].id + " (" + set[i].cls + ") also matched at line " +
                                  std::to_string(ev.line) + "; " + set[primary].id +
                                  " comes first in rule order",
                              std::move(ev)});
      }
    }
    if (!exit_class.empty()) {
      if (exit_class == d.cls) {
        units += 1;
        exit_reading = ExitReading::agrees;
      } else {
        d.findings.push_back({"exit_code", std::string(exit_class),
                              "exit code " + std::to_string(*scan.exit_code) + " (" +
                                  std::string(signal_name(*signo)) + ") alone would suggest " +
                                  std::string(exit_class) + "; the log's evidence was preferred",
                              std::nullopt});
        exit_reading = ExitReading::disagrees;
      }
    }
  } else if (!exit_class.empty()) {
    d.cls = std::string(exit_class);
    d.g15 = std::string(find_class(d.cls)->g15);
    units = 1;
    exit_reading = ExitReading::alone;
  } else {
    bool completed = false;
    for (unsigned i = 0; i < set.size(); ++i) {
      if (!matched(i)) continue;
      if (set[i].role == Role::completion) completed = true;
      if (set[i].role == Role::completion || set[i].role == Role::progress) {
        d.evidence.push_back(evidence_of(i));
        weigh(d.evidence.back(), set[i].role == Role::completion ? 2 : 1);
      }
    }
    bool clean_exit = !scan.exit_code || *scan.exit_code == 0;
    if (completed && clean_exit) {
      d.cls = "healthy";
      if (scan.exit_code) units += 1;
      if (scan.exit_code) exit_reading = ExitReading::agrees;
    } else {
      d.evidence.clear();
      units = 0;
      d.cls = "unknown";
      if (scan.exit_code) exit_reading = ExitReading::unexplained;
    }
    d.g15 = "generic";
  }

  for (unsigned i = 0; i < set.size(); ++i)
    if (set[i].role == Role::context && matched(i)) {
      Evidence ev = evidence_of(i);
      d.findings.push_back({"context", set[i].cls,
                            set[i].description.empty() ? "rule " + set[i].id + " matched"
                                                       : set[i].description,
                            std::move(ev)});
    }

  const ClassInfo* info = find_class(d.cls);
  d.family = std::string(info->family);
  d.owner = std::string(info->owner);
  d.confidence = confidence_from(units);
  d.verdict = build_verdict(d, *info, rules.rules.size(), exit_reading);
  return d;
}

}  // namespace gpudiag::detail
