// Diagnoses arbitrary bytes with the shipped rules, fed in pieces whose sizes
// the input chooses, so line and piece boundaries fall everywhere; renders
// the diagnosis every way, and reads its JSON back: it must give the same
// JSON again. Any crash, hang, sanitizer report or round-trip difference is
// a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "gpudiag/gpudiag.hpp"
#include "shipped_rules.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  // The first three bytes choose the sizes: a piece of 16 to 4,111 bytes,
  // writes of 1 to 256, and whether an exit code is given.
  gpudiag::DiagnoseOptions options;
  options.chunk_size = 16 + ((std::size_t{data[0]} << 4) | (data[1] & 15));
  options.text_cap = 64 + (data[1] >> 4) * 64;
  const std::size_t write = 1 + data[2];
  if (data[2] & 1) options.exit_code = static_cast<int>(data[2]) - 128;
  const std::string_view log(reinterpret_cast<const char*>(data) + 3, size - 3);

  gpudiag::Stream stream(shipped_rules(), options);
  for (std::size_t i = 0; i < log.size(); i += write) stream.write(log.substr(i, write));
  const gpudiag::Diagnosis d = stream.finish();
  const std::string json = gpudiag::to_json(d, "fuzz.log");
  (void)gpudiag::to_text(d, "fuzz.log");
  (void)gpudiag::to_brief(d, "fuzz.log");
  if (gpudiag::to_json(gpudiag::from_json(json)) != json) std::abort();
  return 0;
}
