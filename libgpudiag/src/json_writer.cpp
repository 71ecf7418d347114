#include "json_writer.hpp"
#include "text_util.hpp"

#include <simdjson.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <charconv>
#include <cmath>

namespace gpudiag::detail {

namespace {

bool is_ascii(std::string_view s) {
  unsigned char any = 0;
  for (char c : s) any |= static_cast<unsigned char>(c);
  return any < 0x80;
}

// A byte JSON lets stand as it is in a string (UTF-8 sequences included).
bool plain(unsigned char c) { return c >= 0x20 && c != '"' && c != '\\' && c != 0x7f; }

// Where the next byte at or after `pos` that is not plain lies (s.size() if
// none): sixteen bytes at a time, as most of a diagnosis's text is plain.
std::size_t next_special(std::string_view s, std::size_t pos) {
#if defined(__SSE2__)
  const __m128i space = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'),
                del = _mm_set1_epi8(0x7f), zero = _mm_setzero_si128();
  for (; s.size() - pos >= 16; pos += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + pos));
    // Below 0x20 as an unsigned byte: below it and not negative as a signed one.
    const __m128i control = _mm_andnot_si128(_mm_cmplt_epi8(v, zero), _mm_cmplt_epi8(v, space));
    const __m128i special = _mm_or_si128(_mm_or_si128(control, _mm_cmpeq_epi8(v, quote)),
                                         _mm_or_si128(_mm_cmpeq_epi8(v, backslash), _mm_cmpeq_epi8(v, del)));
    if (const int mask = _mm_movemask_epi8(special)) return pos + static_cast<std::size_t>(__builtin_ctz(mask));
  }
#endif
  while (pos < s.size() && plain(static_cast<unsigned char>(s[pos]))) ++pos;
  return pos;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  // JSON is UTF-8: whatever a field holds (a file name of raw bytes), what is
  // written is valid, each invalid sequence shown as U+FFFD. Most fields are
  // ASCII, which needs no validating.
  if (!is_ascii(s) && !simdjson::validate_utf8(s.data(), s.size())) {
    const std::string valid = to_valid_utf8(s);
    append_json_string(out, valid);
    return;
  }
  static const char hex[] = "0123456789abcdef";
  out += '"';
  // Runs of plain bytes are copied whole, not a byte at a time.
  std::size_t run = 0;
  for (std::size_t i = next_special(s, 0); i < s.size(); i = next_special(s, i + 1)) {
    const auto c = static_cast<unsigned char>(s[i]);
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 0xf];
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

void JsonWriter::newline() {
  if (indent_ <= 0) return;
  out_ += '\n';
  out_.append(static_cast<std::size_t>(depth_ * indent_), ' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ > 0) {
    if (!first_) out_ += ',';
    newline();
  }
  first_ = false;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  ++depth_;
  first_ = true;
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  --depth_;
  if (!first_) newline();
  out_ += '}';
  first_ = false;
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  ++depth_;
  first_ = true;
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  --depth_;
  if (!first_) newline();
  out_ += ']';
  first_ = false;
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
  before_value();
  append_json_string(out_, k);
  out_ += indent_ > 0 ? ": " : ":";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value();
  append_json_string(out_, s);
  return *this;
}

JsonWriter& JsonWriter::value(double d) {
  before_value();
  if (!std::isfinite(d)) {
    out_ += "null";
    return *this;
  }
  // The shortest form that reads back as the same double, always with a '.'
  // or an exponent, so that a reader sees a float (5.0, not 5).
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  std::string_view text(buf, static_cast<std::size_t>(end - buf));
  out_ += text;
  if (text.find_first_of(".e") == std::string_view::npos) out_ += ".0";
  return *this;
}

JsonWriter& JsonWriter::value(long long i) {
  before_value();
  out_ += std::to_string(i);
  return *this;
}

JsonWriter& JsonWriter::value(unsigned long long i) {
  before_value();
  out_ += std::to_string(i);
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  before_value();
  out_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

}  // namespace gpudiag::detail
