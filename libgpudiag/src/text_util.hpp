#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpudiag::detail {

// Valid UTF-8 with each invalid byte sequence replaced by U+FFFD, so that
// evidence from any input can go into JSON and Python str unchanged.
std::string to_valid_utf8(std::string_view bytes);

// For a terminal: control characters (NUL, ESC, ...) shown as U+FFFD.
std::string printable(std::string_view utf8);

// ASCII, whatever the locale: the same bytes read the same everywhere.
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// An ASCII letter, digit or underscore: a word character, as `\b` takes it
// without Unicode.
inline bool is_word_char(char c) { return is_alpha(c) || is_digit(c) || c == '_'; }

// std::from_chars for a double (chars_format::general), the same value and
// end, sooner for what logs print most: a decimal of at most 19 digits with
// an exponent of at most 22 either way, read as an exact integer and an
// exact power of ten, one rounded product or quotient (Clinger's fast path,
// the first that std::from_chars tries too). Anything else goes to
// std::from_chars.
std::from_chars_result read_double(const char* first, const char* last, double& value);

// `digits` times 10^`exponent`, correctly rounded, where one product or
// quotient of exact doubles gives it (digits up to 2^53, exponents within
// +-22): read_double()'s own path; false elsewhere. Inline: both of its
// callers read every number of a progress line through it.
inline bool exact_decimal(std::uint64_t digits, int exponent, double& value) {
  static constexpr double kPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                            1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                            1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  if (digits > (std::uint64_t{1} << 53) || exponent < -22 || exponent > 22) return false;
  const auto exact = static_cast<double>(digits);
  value = exponent < 0 ? exact / kPowersOfTen[-exponent] : exact * kPowersOfTen[exponent];
  return true;
}

}  // namespace gpudiag::detail
