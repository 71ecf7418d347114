#pragma once

#include <map>
#include <string>
#include <vector>

#include "rule_set_impl.hpp"

namespace gpudiag::detail {

// Runs a rule's extractions over one matched line: only lines a rule flagged
// ever reach a regex engine other than Hyperscan.
std::map<std::string, std::string> extract_values(const std::vector<CompiledExtraction>& fields,
                                                  const std::string& line);

}  // namespace gpudiag::detail
