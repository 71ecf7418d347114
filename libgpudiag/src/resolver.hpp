#pragma once

#include <optional>

#include "evidence_collector.hpp"
#include "gpudiag/diagnosis.hpp"
#include "rule_set_impl.hpp"

namespace gpudiag::detail {

struct ScanResult {
  const std::vector<RuleEvidence>& per_rule;
  Trajectory trajectory;
  std::optional<LauncherReport> launcher;
  std::optional<int> exit_code;
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
};

// Ordered rules + context -> one primary class, its evidence and findings.
Diagnosis resolve(const RuleSet::Impl& rules, const ScanResult& scan);

// The signal number an exit status reports: -N (subprocess) or 128+N (shell).
std::optional<int> signal_of(std::optional<int> exit_code);
std::string_view signal_name(int signo);

}  // namespace gpudiag::detail
