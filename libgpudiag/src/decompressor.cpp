#include "decompressor.hpp"

#include <bzlib.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <array>
#include <cstring>
#include <stdexcept>

namespace gpudiag::detail {

using Output = Decompressor::Output;

class Decompressor::Codec {
 public:
  virtual ~Codec() = default;
  virtual const char* name() const = 0;
  // Decodes all of `in`, passing the text on. On damage returns why, with
  // `taken` the bytes of `in` read before it broke.
  virtual std::string decode(std::string_view in, const Output& out, std::size_t& taken) = 0;
  // At the end of the input: why the data is incomplete, or nothing.
  virtual std::string finish(const Output& out) = 0;

 protected:
  static constexpr std::size_t kBuffer = 1 << 16;
  std::array<char, kBuffer> buffer_;
  void emit(const Output& out, std::size_t left) {
    if (left < kBuffer) out({buffer_.data(), kBuffer - left});
  }
};

namespace {

const std::string kTruncated = "the data ends mid-stream: the file is truncated";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

std::string trailing(const char* format) {
  return std::string("bytes after the ") + format + " data that are not " + format + ": not read";
}

class Gzip final : public Decompressor::Codec {
 public:
  Gzip() {
    if (inflateInit2(&z_, 15 + 16) != Z_OK) throw std::bad_alloc();
  }
  ~Gzip() override { inflateEnd(&z_); }
  const char* name() const override { return "gzip"; }

  std::string decode(std::string_view in, const Output& out, std::size_t& taken) override {
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z_.avail_in = static_cast<uInt>(in.size());
    bool full = false;
    while (z_.avail_in > 0 || full) {
      taken = in.size() - z_.avail_in;
      if (!in_member_) {
        if (z_.avail_in == 0) break;  // a member ended with the output buffer full
        // A member follows a member only where the magic says so.
        if (z_.avail_in >= 2 && !(z_.next_in[0] == 0x1f && z_.next_in[1] == 0x8b)) return trailing("gzip");
        in_member_ = true;
      }
      z_.next_out = reinterpret_cast<Bytef*>(buffer_.data());
      z_.avail_out = kBuffer;
      const int rc = inflate(&z_, Z_NO_FLUSH);
      emit(out, z_.avail_out);
      full = z_.avail_out == 0;
      if (rc == Z_STREAM_END) {
        inflateReset(&z_);
        in_member_ = false;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        taken = in.size() - z_.avail_in;
        return std::string("corrupt gzip data (") + (z_.msg ? z_.msg : "zlib error") + ")";
      } else if (rc == Z_BUF_ERROR && !full) {
        break;
      }
    }
    taken = in.size();
    return {};
  }

  std::string finish(const Output&) override { return in_member_ ? kTruncated : std::string(); }

 private:
  z_stream z_{};
  bool in_member_ = false;
};

class Zstd final : public Decompressor::Codec {
 public:
  Zstd() : d_(ZSTD_createDStream()) {
    if (!d_) throw std::bad_alloc();
    ZSTD_initDStream(d_);
  }
  ~Zstd() override { ZSTD_freeDStream(d_); }
  const char* name() const override { return "zstd"; }

  std::string decode(std::string_view in, const Output& out, std::size_t& taken) override {
    ZSTD_inBuffer input{in.data(), in.size(), 0};
    bool full = false;
    while (input.pos < input.size || full) {
      ZSTD_outBuffer output{buffer_.data(), kBuffer, 0};
      const std::size_t before = input.pos;
      const std::size_t rc = ZSTD_decompressStream(d_, &output, &input);
      if (ZSTD_isError(rc)) {
        taken = input.pos;
        return std::string("corrupt zstd data (") + ZSTD_getErrorName(rc) + ")";
      }
      emit(out, kBuffer - output.pos);
      full = output.pos == output.size;
      // 0: a frame ended here. A call that moved nothing says nothing new.
      if (rc == 0 || input.pos > before || output.pos > 0) pending_ = rc != 0;
    }
    taken = in.size();
    return {};
  }

  std::string finish(const Output&) override { return pending_ ? kTruncated : std::string(); }

 private:
  ZSTD_DStream* d_;
  bool pending_ = true;
};

class Bzip2 final : public Decompressor::Codec {
 public:
  Bzip2() { init(); }
  ~Bzip2() override { BZ2_bzDecompressEnd(&s_); }
  const char* name() const override { return "bzip2"; }

  std::string decode(std::string_view in, const Output& out, std::size_t& taken) override {
    s_.next_in = const_cast<char*>(in.data());
    s_.avail_in = static_cast<unsigned>(in.size());
    bool full = false;
    while (s_.avail_in > 0 || full) {
      taken = in.size() - s_.avail_in;
      if (!in_member_) {
        if (s_.avail_in == 0) break;  // a member ended with the output buffer full
        if (s_.avail_in >= 3 && std::memcmp(s_.next_in, "BZh", 3) != 0) return trailing("bzip2");
        if (members_++ > 0) restart();  // the decoder is fresh for the first
        in_member_ = true;
      }
      s_.next_out = buffer_.data();
      s_.avail_out = kBuffer;
      const int rc = BZ2_bzDecompress(&s_);
      emit(out, s_.avail_out);
      full = s_.avail_out == 0;
      if (rc == BZ_STREAM_END) {
        in_member_ = false;
      } else if (rc != BZ_OK) {
        taken = in.size() - s_.avail_in;
        return rc == BZ_DATA_ERROR_MAGIC ? "corrupt bzip2 data (bad magic)"
                                         : "corrupt bzip2 data (a block fails its check)";
      } else if (s_.avail_in == 0 && !full) {
        break;
      }
    }
    taken = in.size();
    return {};
  }

  std::string finish(const Output&) override { return in_member_ ? kTruncated : std::string(); }

 private:
  void init() {
    s_ = bz_stream{};
    if (BZ2_bzDecompressInit(&s_, 0, 0) != BZ_OK) throw std::bad_alloc();
  }
  // A new decoder for the next member, reading on where the last one stopped.
  void restart() {
    char* next = s_.next_in;
    const unsigned avail = s_.avail_in;
    BZ2_bzDecompressEnd(&s_);
    init();
    s_.next_in = next;
    s_.avail_in = avail;
  }
  bz_stream s_{};
  bool in_member_ = false;
  unsigned members_ = 0;
};

std::string lzma_problem(lzma_ret rc) {
  switch (rc) {
    case LZMA_BUF_ERROR: return kTruncated;
    case LZMA_FORMAT_ERROR: return "corrupt xz data (not an xz stream)";
    case LZMA_OPTIONS_ERROR: return "corrupt xz data (unsupported options)";
    case LZMA_MEM_ERROR: return "xz data needs more memory than is available";
    default: return "corrupt xz data (a block fails its check)";
  }
}

class Xz final : public Decompressor::Codec {
 public:
  Xz() {
    if (lzma_stream_decoder(&s_, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) throw std::bad_alloc();
  }
  ~Xz() override { lzma_end(&s_); }
  const char* name() const override { return "xz"; }

  std::string decode(std::string_view in, const Output& out, std::size_t& taken) override {
    s_.next_in = reinterpret_cast<const uint8_t*>(in.data());
    s_.avail_in = in.size();
    if (auto why = run(LZMA_RUN, out); !why.empty()) {
      taken = in.size() - s_.avail_in;
      return why;
    }
    taken = in.size();
    return {};
  }

  std::string finish(const Output& out) override {
    s_.avail_in = 0;
    return run(LZMA_FINISH, out);
  }

 private:
  std::string run(lzma_action action, const Output& out) {
    bool full = false;
    while (s_.avail_in > 0 || full || action == LZMA_FINISH) {
      s_.next_out = reinterpret_cast<uint8_t*>(buffer_.data());
      s_.avail_out = kBuffer;
      const lzma_ret rc = lzma_code(&s_, action);
      emit(out, s_.avail_out);
      full = s_.avail_out == 0;
      if (rc == LZMA_STREAM_END) return {};
      if (rc != LZMA_OK) return lzma_problem(rc);
      if (action == LZMA_FINISH && !full) return kTruncated;
    }
    return {};
  }
  lzma_stream s_ = LZMA_STREAM_INIT;
};

// The format the first bytes name, or none.
std::unique_ptr<Decompressor::Codec> codec_for(std::string_view head) {
  if (starts_with(head, "\x1f\x8b")) return std::make_unique<Gzip>();
  if (starts_with(head, "\x28\xb5\x2f\xfd")) return std::make_unique<Zstd>();
  if (starts_with(head, "BZh") && head.size() > 3 && head[3] >= '1' && head[3] <= '9')
    return std::make_unique<Bzip2>();
  if (starts_with(head, std::string_view("\xfd" "7zXZ\0", 6))) return std::make_unique<Xz>();
  return nullptr;
}

constexpr std::size_t kMagic = 6;  // the longest magic above

}  // namespace

Decompressor::Decompressor(Output out) : out_(std::move(out)) {}
Decompressor::~Decompressor() = default;

std::string_view Decompressor::format() const { return codec_ ? codec_->name() : ""; }

void Decompressor::write(std::string_view in) {
  if (started_) return decode(in);
  // Only the magic is held: the rest is decoded (or passed on) where it lies.
  const std::size_t need = kMagic - head_.size();
  head_.append(in.substr(0, need));
  if (head_.size() < kMagic) return;
  start(head_);
  decode(in.substr(need));
}

void Decompressor::start(std::string_view head) {
  started_ = true;
  codec_ = codec_for(head);
  std::string held = std::move(head_);
  head_.clear();
  decode(held);
}

void Decompressor::decode(std::string_view in) {
  if (stopped_ || in.empty()) return;
  if (!codec_) return out_(in);
  std::size_t taken = 0;
  std::string why = codec_->decode(in, out_, taken);
  if (!why.empty()) {
    stopped_ = true;
    damage_ = std::move(why);
    damage_at_ = consumed_ + taken;
  }
  consumed_ += in.size();
}

void Decompressor::finish() {
  if (!started_) start(head_);
  if (!codec_ || stopped_) return;
  if (std::string why = codec_->finish(out_); !why.empty()) {
    damage_ = std::move(why);
    damage_at_ = consumed_;
  }
}

}  // namespace gpudiag::detail
