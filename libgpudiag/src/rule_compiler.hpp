#pragma once

#include <vector>

#include "rule_set_impl.hpp"

namespace gpudiag::detail {

struct CompiledRules {
  HsDatabase db;
  std::vector<unsigned> pattern_rule;
};

// The Hyperscan flags of a pattern; throws RuleError on an unknown flag.
unsigned pattern_flags(const Rule& rule, const Pattern& pattern);

// One streaming database for all patterns; a bad pattern throws RuleError with
// Hyperscan's message.
CompiledRules compile_rules(const std::vector<Rule>& rules);

// Pattern id -> rule index, without compiling (for a database from the cache).
std::vector<unsigned> pattern_rule_map(const std::vector<Rule>& rules);

}  // namespace gpudiag::detail
