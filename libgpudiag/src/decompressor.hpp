#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace gpudiag::detail {

// A compressed log read as the text it holds: gzip, zstd, bzip2 or xz, known
// by its first bytes whatever the file is called (a rotated `train.log.1`
// is often gzip), decoded as it arrives in constant memory. Anything else
// passes through untouched. Concatenated members (pigz, pbzip2, `cat a.gz
// b.gz`) are read one after another.
//
// Damage does not stop the diagnosis: a decoder error or data that ends
// mid-stream ends the text there, and damage() says what broke and where.
class Decompressor {
 public:
  using Output = std::function<void(std::string_view)>;
  explicit Decompressor(Output out);
  ~Decompressor();
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;

  void write(std::string_view in);
  void finish();

  // "gzip", "zstd", "bzip2", "xz"; empty for text.
  std::string_view format() const;
  // Why the text ends early (empty when it does not), and the byte of the
  // stored input where it broke.
  const std::string& damage() const { return damage_; }
  std::uint64_t damage_at() const { return damage_at_; }

  class Codec;  // one compression format's decoder

 private:
  void start(std::string_view head);
  void decode(std::string_view in);

  Output out_;
  std::unique_ptr<Codec> codec_;
  std::string head_;      // the first bytes, held until the format is known
  bool started_ = false;  // the format is known
  bool stopped_ = false;  // damage ended the text
  std::uint64_t consumed_ = 0;  // stored bytes decoded so far
  std::string damage_;
  std::uint64_t damage_at_ = 0;
};

}  // namespace gpudiag::detail
