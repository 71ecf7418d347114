#pragma once

#include <vector>

#include "rule_set_impl.hpp"

namespace gpudiag::detail {

struct CompiledRules {
  HsDatabase db;          // streaming, every pattern
  HsDatabase confirm_db;  // block mode, the full forms of confirmed patterns; may be null
  std::vector<unsigned> pattern_rule;
  std::vector<char> confirm;  // per pattern id: a stream hit is only a candidate
};

// The Hyperscan flags of a pattern; throws RuleError on an unknown flag.
unsigned pattern_flags(const Rule& rule, const Pattern& pattern);

// Pattern id -> whether a stream hit must be confirmed on its line
// (line_start patterns and patterns with a prefilter).
std::vector<char> confirm_map(const std::vector<Rule>& rules);

// One streaming database for all patterns; a bad pattern throws RuleError with
// Hyperscan's message.
CompiledRules compile_rules(const std::vector<Rule>& rules);

// Pattern id -> rule index, without compiling (for a database from the cache).
std::vector<unsigned> pattern_rule_map(const std::vector<Rule>& rules);

}  // namespace gpudiag::detail
