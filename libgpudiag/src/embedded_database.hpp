#pragma once

#include <span>
#include <string_view>

namespace gpudiag::detail {

// The shipped rules' Hyperscan databases, compiled when the library was
// built, so that the first run on a machine compiles nothing and writes no
// cache. Used only where Hyperscan accepts them on this CPU (it checks the
// CPU features they were compiled for); empty in the tool that compiles them.
// `rules`: the rule files themselves, parsed then (write_snapshot); and the
// compile plan's tables, so that a process neither plans nor hashes them.
struct EmbeddedDatabase {
  std::string_view digest;
  // In-memory images (as hs_deserialize_database_at leaves them), 64-byte
  // aligned, used in place; confirm empty when none.
  std::string_view stream, confirm;
  std::string_view rules;
  std::span<const unsigned> pattern_rule;  // CompilePlan::pattern_rule
  std::string_view confirm_map;            // CompilePlan::confirm_map
  std::string_view line_scope;             // CompilePlan::line_scope
  bool line_local = false;                 // CompilePlan::line_local
};
EmbeddedDatabase embedded_database();

}  // namespace gpudiag::detail
