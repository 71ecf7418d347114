#pragma once

#include <string>
#include <vector>

#include "rule_set_impl.hpp"

namespace gpudiag::detail {

// What is handed to Hyperscan, expression by expression: the stream database
// looks for every pattern (or its cheaper prefilter) anywhere; the block
// database holds the full forms of the patterns whose hits are confirmed per
// line (line_start patterns, on the line's message, and prefiltered ones).
enum : char { kConfirmNone = 0, kConfirmLine = 1, kConfirmMessage = 2 };

struct CompilePlan {
  struct Database {
    std::vector<std::string> expressions;
    std::vector<unsigned> flags;
    std::vector<unsigned> ids;  // pattern ids
  };
  Database stream, confirm;
  std::vector<unsigned> pattern_rule;  // pattern id -> rule index
  std::vector<char> confirm_map;       // pattern id -> kConfirm*: how a stream hit is confirmed
};

// The Hyperscan flags of a pattern; throws RuleError on an unknown flag.
unsigned pattern_flags(const Rule& rule, const Pattern& pattern);

// The plan for `rules`. Cheap: the cache key is a hash of it.
CompilePlan plan_compile(const std::vector<Rule>& rules);

struct CompiledRules {
  HsDatabase db;          // streaming, every pattern
  HsDatabase confirm_db;  // block mode; null when nothing is confirmed
};

// Compiles a plan; a bad pattern throws RuleError with Hyperscan's message.
CompiledRules compile_plan(const std::vector<Rule>& rules, const CompilePlan& plan);

}  // namespace gpudiag::detail
