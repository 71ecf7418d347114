// Reads arbitrary bytes as a diagnosis's JSON (what Python's from_dict and
// unpickling pass on, from any file): a std::invalid_argument is the answer
// to anything that is not one. What reads as one must write back as JSON
// that reads back to the same. Any crash, hang or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "gpudiag/gpudiag.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const std::string json = gpudiag::to_json(gpudiag::from_json(text));
    if (gpudiag::to_json(gpudiag::from_json(json)) != json) std::abort();
    (void)gpudiag::to_text(gpudiag::from_json(json));
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
