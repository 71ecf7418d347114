#pragma once

#include <string>
#include <string_view>

namespace gpudiag::detail {

// Valid UTF-8 with each invalid byte sequence replaced by U+FFFD, so that
// evidence from any input can go into JSON and Python str unchanged.
std::string to_valid_utf8(std::string_view bytes);

// For a terminal: control characters (NUL, ESC, ...) shown as U+FFFD.
std::string printable(std::string_view utf8);

}  // namespace gpudiag::detail
