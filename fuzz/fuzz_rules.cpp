// Loads arbitrary bytes as the one rule file of a rule set (beside the
// shipped declarations). A RuleError is the expected answer to bad rules;
// anything else escaping, a crash or a hang is a bug. A set that loads runs
// its examples and diagnoses a few lines.
#include <cstddef>
#include <cstdint>
#include <string>

#include "gpudiag/gpudiag.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto set = gpudiag::RuleSet::load_sources({{"fuzz.json", text}}, gpudiag::CacheOptions{false, {}});
    (void)set->check_examples();
    const auto d = gpudiag::diagnose_bytes(set, "step 1 loss 2.5\nRuntimeError: boom\nKilled\n");
    (void)gpudiag::to_json(d);
  } catch (const gpudiag::RuleError&) {
  }
  return 0;
}
