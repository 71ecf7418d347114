#pragma once

#include <memory>

#include "gpudiag/gpudiag.hpp"

// The shipped rules, loaded once per fuzzing process (without the on-disk
// cache: a fuzzer should not write into the user's home).
inline const std::shared_ptr<const gpudiag::RuleSet>& shipped_rules() {
  static const auto set = gpudiag::RuleSet::builtin(gpudiag::CacheOptions{false, {}});
  return set;
}
