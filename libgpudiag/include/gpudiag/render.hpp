#pragma once

#include <string>
#include <string_view>

#include "gpudiag/diagnosis.hpp"

namespace gpudiag {

// The JSON object of a diagnosis: the one serializer, whose fields
// docs/diagnosis.schema.json describes. `path`, when given, stands for the
// diagnosis's own; a diagnosis with neither has no "path". Numbers keep full
// precision (integers as integers, floats round-trip). Compact when indent is 0.
std::string to_json(const Diagnosis& d, const std::string& path = {}, int indent = 0);

// The diagnosis a JSON object of that schema describes: to_json read back
// (the points of a series come back without their lines, which the schema
// does not hold). Throws std::invalid_argument naming the field that is
// missing or of the wrong type.
Diagnosis from_json(std::string_view json);

// A JSON string literal for `s` (quotes and escapes included).
std::string json_string(std::string_view s);

struct TextStyle {
  bool color = false;
};
// Why the input was read only in part ("gzip data: truncated (byte 8192 of
// the file)", "stopped at the size limit of 1048576 bytes"); empty when it
// was read whole.
std::string input_problem(const InputFormat& input);

// A diagnosis laid out for a terminal; `path` as for to_json.
std::string to_text(const Diagnosis& d, const std::string& path = {}, const TextStyle& style = {});

// One line for a diagnosis, laid out as grep lays out a match so that an
// editor can jump to the deciding line and a script can cut the fields:
//   PATH:LINE: CLASS (OWNER, CONFIDENCE): TEXT
// without ":LINE" and ": TEXT" when no line decided. No newline at the end.
std::string to_brief(const Diagnosis& d, const std::string& path = {}, const TextStyle& style = {});

}  // namespace gpudiag
