#include "hash.hpp"

#define XXH_INLINE_ALL  // the implementation compiled in: no library to load
#include <xxhash.h>

#include <new>

namespace gpudiag::detail {

struct Hasher::State {
  XXH3_state_t* xxh = XXH3_createState();
};

Hasher::Hasher() : state_(std::make_unique<State>()) {
  if (!state_->xxh || XXH3_128bits_reset(state_->xxh) != XXH_OK) throw std::bad_alloc();
}

Hasher::~Hasher() { XXH3_freeState(state_->xxh); }

void Hasher::update(std::string_view bytes) { XXH3_128bits_update(state_->xxh, bytes.data(), bytes.size()); }

void Hasher::update_u64(std::uint64_t v) {
  unsigned char le[8];
  for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(v >> (8 * i));
  XXH3_128bits_update(state_->xxh, le, sizeof le);
}

std::string Hasher::hex() const {
  const XXH128_hash_t h = XXH3_128bits_digest(state_->xxh);
  return to_hex(h.high64) + to_hex(h.low64);
}

std::uint64_t checksum(std::string_view bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

std::string to_hex(std::uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[i] = digits[v & 0xf];
  return out;
}

}  // namespace gpudiag::detail
