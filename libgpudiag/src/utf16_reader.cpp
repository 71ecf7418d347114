#include "utf16_reader.hpp"

namespace gpudiag::detail {

void Utf16Reader::write(std::string_view in) {
  if (order_ == Order::unknown) {
    // The mark is two bytes: hold the first write's bytes until there are two.
    head_.append(in);
    if (head_.size() < 2) return;
    const std::string held = std::move(head_);
    head_.clear();
    if (held.compare(0, 2, "\xFF\xFE") == 0) order_ = Order::little;
    else if (held.compare(0, 2, "\xFE\xFF") == 0) order_ = Order::big;
    else order_ = Order::none;
    if (order_ == Order::none) return out_(held);
    return transcode(std::string_view(held).substr(2));
  }
  if (order_ == Order::none) return out_(in);
  transcode(in);
}

void Utf16Reader::finish() {
  if (order_ == Order::unknown && !head_.empty()) out_(head_);  // a one-byte input
  head_.clear();
  if (order_ != Order::little && order_ != Order::big) return;
  text_.clear();
  if (high_ != 0 || odd_ >= 0) put(0xFFFD);  // the data ended inside a character
  high_ = 0;
  odd_ = -1;
  if (!text_.empty()) out_(text_);
}

std::string_view Utf16Reader::format() const {
  switch (order_) {
    case Order::little: return "utf-16le";
    case Order::big: return "utf-16be";
    default: return {};
  }
}

void Utf16Reader::transcode(std::string_view in) {
  text_.clear();
  text_.reserve(in.size() + in.size() / 2);
  std::size_t i = 0;
  auto unit = [&](unsigned char a, unsigned char b) -> std::uint32_t {
    return order_ == Order::little ? (std::uint32_t{b} << 8 | a) : (std::uint32_t{a} << 8 | b);
  };
  auto take = [&](std::uint32_t u) {
    if (high_ != 0) {
      if (u >= 0xDC00 && u <= 0xDFFF) {
        put(0x10000 + ((high_ - 0xD800) << 10) + (u - 0xDC00));
        high_ = 0;
        return;
      }
      put(0xFFFD);  // a high surrogate with no low one after it
      high_ = 0;
    }
    if (u >= 0xD800 && u <= 0xDBFF) high_ = u;
    else if (u >= 0xDC00 && u <= 0xDFFF) put(0xFFFD);
    else put(u);
  };
  if (odd_ >= 0 && !in.empty()) {
    take(unit(static_cast<unsigned char>(odd_), static_cast<unsigned char>(in[0])));
    odd_ = -1;
    i = 1;
  }
  for (; i + 1 < in.size(); i += 2) take(unit(static_cast<unsigned char>(in[i]), static_cast<unsigned char>(in[i + 1])));
  if (i < in.size()) odd_ = static_cast<unsigned char>(in[i]);
  if (!text_.empty()) out_(text_);
}

void Utf16Reader::put(std::uint32_t c) {
  if (c < 0x80) {
    text_.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    text_.push_back(static_cast<char>(0xC0 | c >> 6));
    text_.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    text_.push_back(static_cast<char>(0xE0 | c >> 12));
    text_.push_back(static_cast<char>(0x80 | (c >> 6 & 0x3F)));
    text_.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    text_.push_back(static_cast<char>(0xF0 | c >> 18));
    text_.push_back(static_cast<char>(0x80 | (c >> 12 & 0x3F)));
    text_.push_back(static_cast<char>(0x80 | (c >> 6 & 0x3F)));
    text_.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace gpudiag::detail
