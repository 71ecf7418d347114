#pragma once

#include <map>
#include <string>
#include <vector>

#include "gpudiag/rules.hpp"

namespace gpudiag::detail {

// What rule files declare besides rules: the taxonomy (families, the g15
// label space, class cards) and named regex pieces.
struct Catalog {
  Taxonomy taxonomy;
  std::map<std::string, std::string, std::less<>> defines;  // name -> regex piece

  bool operator==(const Catalog&) const = default;
};

struct ParsedRules {
  Catalog catalog;
  std::vector<Rule> rules;  // patterns and extracts with their {{defines}} expanded
  bool examples_deferred = false;  // the rules' examples not read yet (builtin_examples reads them)

  bool operator==(const ParsedRules&) const = default;
};

// Parses and validates rule files (everything but the Hyperscan compile and
// the extraction regexes). Their declarations go over `base` (a class or
// define of the same name replaces the base one; declaring one twice among
// `sources` is an error); then their rules are read against the result.
// Throws RuleError naming the file and the rule or class.
ParsedRules parse_rule_sources(const std::vector<RuleSet::Source>& sources, const Catalog& base);

// The rule files built into the library, parsed: read back from the snapshot
// taken when it was built, or parsed from their JSON where it carries none
// (the tool that takes it). Without `examples`, the examples may be left
// unread (examples_deferred), for builtin_examples to read when asked for.
ParsedRules builtin_rules(bool examples = true);

// Reads the shipped rules' examples into `rules` (builtin_rules(false)'s).
void builtin_examples(std::vector<Rule>& rules);

// Their declarations, read once.
const Catalog& builtin_catalog();


}  // namespace gpudiag::detail
