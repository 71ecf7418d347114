#pragma once

#include <string>
#include <string_view>

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

// Only its declarations (they come first), for what needs no rules: the
// shipped taxonomy, the base of a rules directory.
Catalog read_snapshot_catalog(std::string_view bytes);

}  // namespace gpudiag::detail
