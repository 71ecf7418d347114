#pragma once

#include <string>
#include <vector>

#include "rule_set_impl.hpp"

namespace gpudiag::detail {

// What is handed to Hyperscan, expression by expression: the stream database
// looks for every pattern (or its cheaper prefilter) anywhere; the block
// database holds the full forms of the patterns whose hits are confirmed per
// line (line_start patterns, on the line's message, and prefiltered ones).
// kConfirmWordEnd: the expression ended in a letter, digit or underscore and
// a word boundary, `\b`, which the stream database leaves out and the scanner
// checks on the byte after the hit (Hyperscan spends more on a trailing
// boundary, which makes it wait for the next byte, than on the literal).
enum : char { kConfirmNone = 0, kConfirmLine = 1, kConfirmMessage = 2, kConfirmWordEnd = 3 };

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

// The expression without its trailing word boundary, where it ends in one
// after a literal word character at its top level (no alternation there, no
// Unicode word characters): then a match of the rest ends at that character,
// and the boundary holds where the next byte is no word character or there
// is none. Empty otherwise.
std::string without_word_end(const std::string& expression, unsigned flags);

// The plan for `rules`. Cheap: the cache key is a hash of it.
CompilePlan plan_compile(const std::vector<Rule>& rules);

struct CompiledRules {
  HsDatabase db;          // streaming, every pattern
  HsDatabase confirm_db;  // block mode; null when nothing is confirmed
};

// Compiles a plan; a bad pattern throws RuleError with Hyperscan's message.
CompiledRules compile_plan(const std::vector<Rule>& rules, const CompilePlan& plan);

}  // namespace gpudiag::detail
