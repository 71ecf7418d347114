#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpudiag::detail {

// FNV-1a, 64 bits. Not cryptographic: it keys a cache and checks a payload.
class Fnv1a {
 public:
  explicit Fnv1a(std::uint64_t seed = 0xcbf29ce484222325ULL) : h_(seed) {}
  void update(std::string_view bytes);
  void update_u64(std::uint64_t v);
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_;
};

std::string to_hex(std::uint64_t v);

}  // namespace gpudiag::detail
