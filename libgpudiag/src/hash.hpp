#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace gpudiag::detail {

// XXH3 (xxHash), 128 bits, streamed. Not cryptographic: it keys a cache.
class Hasher {
 public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  void update(std::string_view bytes);
  void update_u64(std::uint64_t v);
  std::string hex() const;  // 32 hex digits

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// XXH3, 64 bits, of a whole buffer: it checks a cached payload at memory speed.
std::uint64_t checksum(std::string_view bytes);

std::string to_hex(std::uint64_t v);

}  // namespace gpudiag::detail
