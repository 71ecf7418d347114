#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace gpudiag::detail {

// A log written as UTF-16 read as the UTF-8 text it holds. Windows
// PowerShell 5's redirection (`python train.py > train.log`) and `Out-File`
// write UTF-16LE with a byte-order mark; a file that begins with one (FF FE,
// or FE FF for big-endian) is transcoded as it arrives, in pieces of any
// size, its mark dropped. Anything else passes through untouched, without a
// copy. An unpaired surrogate becomes U+FFFD, as an invalid byte does
// elsewhere.
class Utf16Reader {
 public:
  using Output = std::function<void(std::string_view)>;
  explicit Utf16Reader(Output out) : out_(std::move(out)) {}

  void write(std::string_view in);
  void finish();

  // "utf-16le", "utf-16be"; empty for anything else.
  std::string_view format() const;

 private:
  enum class Order { unknown, none, little, big };
  void transcode(std::string_view in);
  void put(std::uint32_t code_point);

  Output out_;
  Order order_ = Order::unknown;
  std::string head_;           // the first bytes, until the mark is known
  int odd_ = -1;               // a unit's first byte, held to the next write
  std::uint32_t high_ = 0;     // a high surrogate waiting for its low one
  std::string text_;           // the UTF-8 of one write
};

}  // namespace gpudiag::detail
