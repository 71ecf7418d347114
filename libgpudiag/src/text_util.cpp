#include "text_util.hpp"

#include <cstdint>

namespace gpudiag::detail {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
std::size_t valid_sequence(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) { n = 3; lo = 0xA0; }
  else if (c >= 0xE1 && c <= 0xEC) n = 3;
  else if (c == 0xED) { n = 3; hi = 0x9F; }
  else if (c >= 0xEE && c <= 0xEF) n = 3;
  else if (c == 0xF0) { n = 4; lo = 0x90; }
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) { n = 4; hi = 0x8F; }
  else return 0;
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return n;
}

}  // namespace

std::string to_valid_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  // Valid bytes are copied in runs, not a sequence at a time: most text is
  // valid, and every evidence line comes through here.
  std::size_t run = 0;
  for (std::size_t i = 0; i < bytes.size();) {
    if (const std::size_t n = valid_sequence(bytes, i)) {
      i += n;
      continue;
    }
    out.append(bytes.substr(run, i - run));
    out += kReplacement;
    run = ++i;
  }
  out.append(bytes.substr(run));
  return out;
}

std::string printable(std::string_view utf8) {
  std::string out;
  out.reserve(utf8.size());
  for (char ch : utf8) {
    auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t') || c == 0x7f) out += kReplacement;
    else out += ch;
  }
  return out;
}

std::from_chars_result read_double(const char* first, const char* last, double& value) {
  const char* p = first;
  std::uint64_t digits_value = 0;  // wraps past 19 digits, which are not read here
  int digits = 0, exponent = 0;
  for (; p != last && is_digit(*p); ++p, ++digits) digits_value = digits_value * 10 + static_cast<unsigned>(*p - '0');
  if (p != last && *p == '.')
    for (++p; p != last && is_digit(*p); ++p, ++digits, --exponent)
      digits_value = digits_value * 10 + static_cast<unsigned>(*p - '0');
  if (digits == 0 || digits > 19) return std::from_chars(first, last, value);
  // An exponent only where digits follow its `e` and sign; "2e" is 2.
  if (p != last && (*p == 'e' || *p == 'E')) {
    const char* q = p + 1;
    const bool negative = q != last && *q == '-';
    if (q != last && (*q == '-' || *q == '+')) ++q;
    if (q != last && is_digit(*q)) {
      int written = 0;
      for (int n = 0; q != last && is_digit(*q); ++q, ++n) {
        if (n == 4) return std::from_chars(first, last, value);
        written = written * 10 + (*q - '0');
      }
      exponent += negative ? -written : written;
      p = q;
    }
  }
  if (!exact_decimal(digits_value, exponent, value)) return std::from_chars(first, last, value);
  return {p, std::errc()};
}

}  // namespace gpudiag::detail
