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

// Where a stream expression's hits count, in a line-local plan: anywhere; on
// whole lines only (a skeleton); on the pieces of a line too long to be read
// whole only (the exact form of a pattern that has a skeleton).
enum : char { kScopeAny = 0, kScopeWhole = 1, kScopePart = 2 };

struct CompilePlan {
  struct Database {
    std::vector<std::string> expressions;
    std::vector<unsigned> flags;
    std::vector<unsigned> ids;  // pattern ids
  };
  Database stream, confirm;
  // Per stream id: the patterns' ids first, then their skeletons'.
  std::vector<unsigned> pattern_rule;  // stream id -> rule index
  std::vector<char> confirm_map;       // stream id -> kConfirm*: how a hit is confirmed
  std::vector<char> line_scope;        // stream id -> kScope*
  std::vector<unsigned> skeleton_of;   // skeleton k (stream id patterns + k) -> its pattern
  // Every stream expression is held to one line (see line_form.hpp), and
  // those that count on whole lines are blind to digits: the scanner may
  // then look a whole line up by its layout.
  bool line_local = false;
  std::string one_stream;  // why not: the first pattern not held to lines, and what in it

  // The pattern a stream id looks for.
  unsigned source_pattern(unsigned id) const {
    const std::size_t patterns = pattern_rule.size() - skeleton_of.size();
    return id < patterns ? id : skeleton_of[id - patterns];
  }
  // The id of a rule's first pattern.
  unsigned first_pattern(unsigned rule) const {
    unsigned id = 0;
    while (pattern_rule[id] != rule) ++id;
    return id;
  }
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
