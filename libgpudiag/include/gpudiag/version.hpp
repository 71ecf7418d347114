#pragma once

#include <string_view>

namespace gpudiag {

// The library version; part of the rule-database cache key.
std::string_view version();

// Hyperscan's own version string, as the linked library reports it.
std::string_view hyperscan_version();

}  // namespace gpudiag
