#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rule_loader.hpp"

namespace gpudiag::detail {

// Parsed rule files as bytes. The shipped rules are parsed and checked once,
// when the library is built, and every process reads them back from these
// bytes instead of parsing their JSON again: in a new process the rule
// files' JSON cost more than diagnosing a small log.
std::string write_snapshot(const ParsedRules& parsed);

// Throws std::runtime_error where `bytes` are not a whole snapshot written by
// this build of the library.
ParsedRules read_snapshot(std::string_view bytes);

// Without the rules' examples (they come last: only checking the rules
// reads them, and they are most of the bytes); examples_deferred is set.
ParsedRules read_snapshot_rules(std::string_view bytes);

// Reads every rule's examples into `rules`, which read_snapshot_rules gave.
void read_snapshot_examples(std::string_view bytes, std::vector<Rule>& rules);

// Only its declarations (they come first), for what needs no rules: the
// shipped taxonomy, the base of a rules directory.
Catalog read_snapshot_catalog(std::string_view bytes);

}  // namespace gpudiag::detail
