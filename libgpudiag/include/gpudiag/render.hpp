#pragma once

#include <string>
#include <string_view>

#include "gpudiag/diagnosis.hpp"

namespace gpudiag {

// The JSON object of a diagnosis (field names documented in the README);
// `path` is added when not empty. Compact when indent is 0.
std::string to_json(const Diagnosis& d, const std::string& path = {}, int indent = 0);

// A JSON string literal for `s` (quotes and escapes included).
std::string json_string(std::string_view s);

struct TextStyle {
  bool color = false;
};
// A diagnosis laid out for a terminal.
std::string to_text(const Diagnosis& d, const std::string& path, const TextStyle& style = {});

}  // namespace gpudiag
