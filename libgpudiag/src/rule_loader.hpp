#pragma once

#include <vector>

#include "gpudiag/rules.hpp"

namespace gpudiag::detail {

// Parses and validates rule files (everything but the Hyperscan compile).
// Throws RuleError naming the file and rule.
std::vector<Rule> parse_rule_sources(const std::vector<RuleSet::Source>& sources);

// Throws RuleError for an extraction that is not a valid ECMAScript regex with
// a capture group. Kept apart from parsing because it is the slow part of
// loading, and a rule set found in the cache has passed it before.
void check_extractions(const std::vector<Rule>& rules);

}  // namespace gpudiag::detail
