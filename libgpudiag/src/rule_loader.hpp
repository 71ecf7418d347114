#pragma once

#include <vector>

#include "gpudiag/rules.hpp"

namespace gpudiag::detail {

// Parses and validates rule files (everything but the Hyperscan compile).
// Throws RuleError naming the file and rule.
std::vector<Rule> parse_rule_sources(const std::vector<RuleSet::Source>& sources);

}  // namespace gpudiag::detail
