// Arbitrary bytes as a scheduler record (sacct --json, sacct -P, scontrol
// show job). An InputError is the expected answer to what is none of them; a
// record that reads is rendered and diagnosed beside a log.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gpudiag/gpudiag.hpp"
#include "shipped_rules.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const gpudiag::SchedulerRecord record = gpudiag::parse_scheduler_record(text, "fuzz.sacct");
    (void)record.render();
    (void)record.exit_status();
    gpudiag::DiagnoseOptions options;
    options.scheduler = record;
    (void)gpudiag::to_json(gpudiag::diagnose_bytes(shipped_rules(), "step 1 loss 2.5\n", options));
  } catch (const gpudiag::InputError&) {
  }
  return 0;
}
