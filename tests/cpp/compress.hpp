#pragma once

// Compressing a log as the tools that store logs do, to test and measure
// reading it back: gzip, zstd, bzip2 (level 1: 100 KiB blocks) and xz.
#include <bzlib.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <stdexcept>
#include <string>

namespace gpudiag::testing {

inline std::string gzip(const std::string& text) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, text.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate failed");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

inline std::string zstd(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3));
  return out;
}

inline std::string bzip2(const std::string& text) {
  std::string out(text.size() + text.size() / 100 + 600, '\0');
  unsigned size = static_cast<unsigned>(out.size());
  if (BZ2_bzBuffToBuffCompress(out.data(), &size, const_cast<char*>(text.data()),
                               static_cast<unsigned>(text.size()), 1, 0, 0) != BZ_OK)
    throw std::runtime_error("bzip2 failed");
  out.resize(size);
  return out;
}

inline std::string xz(const std::string& text) {
  std::string out(lzma_stream_buffer_bound(text.size()), '\0');
  std::size_t size = 0;
  if (lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const uint8_t*>(text.data()),
                              text.size(), reinterpret_cast<uint8_t*>(out.data()), &size, out.size()) != LZMA_OK)
    throw std::runtime_error("xz failed");
  out.resize(size);
  return out;
}

}  // namespace gpudiag::testing
