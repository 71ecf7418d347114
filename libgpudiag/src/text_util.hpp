#pragma once

#include <string>
#include <string_view>

namespace gpudiag::detail {

// Valid UTF-8 with each invalid byte sequence replaced by U+FFFD, so that
// evidence from any input can go into JSON and Python str unchanged.
std::string to_valid_utf8(std::string_view bytes);

// For a terminal: control characters (NUL, ESC, ...) shown as U+FFFD.
std::string printable(std::string_view utf8);

// An ASCII letter, digit or underscore: a word character, as `\b` takes it
// without Unicode.
inline bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace gpudiag::detail
