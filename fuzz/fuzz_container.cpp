// Arbitrary bytes after a valid first record of a container log (Docker's
// json-file or a CRI log, as the first byte chooses), so the container reader
// stays engaged: records split, joined, broken or not records at all.
#include <cstddef>
#include <cstdint>
#include <string>

#include "gpudiag/gpudiag.hpp"
#include "shipped_rules.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  std::string log = data[0] & 1
      ? "{\"log\":\"starting\\n\",\"stream\":\"stdout\",\"time\":\"2026-11-23T10:00:00.000000000Z\"}\n"
      : "2026-11-23T10:00:00.000000000Z stdout F starting\n";
  log.append(reinterpret_cast<const char*>(data) + 1, size - 1);
  gpudiag::DiagnoseOptions options;
  options.chunk_size = 64 + (data[0] >> 1) * 16;
  const auto d = gpudiag::diagnose_bytes(shipped_rules(), log, options);
  (void)gpudiag::to_json(d);
  return 0;
}
