#pragma once

#include <string_view>
#include <vector>

namespace gpudiag::detail {

struct RuleSource {
  std::string_view name;
  std::string_view text;
};

// The rule files of rules/ as they were at build time, in file-name order.
std::vector<RuleSource> builtin_rule_sources();

}  // namespace gpudiag::detail
