#include "db_cache.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <system_error>

#include "hash.hpp"

namespace gpudiag::detail {
namespace {

constexpr char kMagic[8] = {'G', 'P', 'D', 'G', 'H', 'S', 'D', '2'};  // 2: XXH3 checksums
constexpr std::uint64_t kMaxPayload = 256ull << 20;

struct Header {
  char magic[8];
  char key[32];
  std::uint64_t size;
  std::uint64_t checksum;
};

void copy_key(char (&dst)[32], const std::string& key) {
  std::memset(dst, 0, sizeof dst);
  std::memcpy(dst, key.data(), std::min(key.size(), sizeof dst));
}

}  // namespace

std::filesystem::path default_cache_dir() {
  if (const char* dir = std::getenv("GPUDIAG_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "gpudiag";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".cache" / "gpudiag";
  return {};
}

HsDatabase load_cached_database(const std::filesystem::path& file, const std::string& key) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return nullptr;
  Header header;
  if (!in.read(reinterpret_cast<char*>(&header), sizeof header)) return nullptr;
  char expected_key[32];
  copy_key(expected_key, key);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0 ||
      std::memcmp(header.key, expected_key, sizeof expected_key) != 0 ||
      header.size == 0 || header.size > kMaxPayload)
    return nullptr;
  std::string payload(header.size, '\0');
  if (!in.read(payload.data(), static_cast<std::streamsize>(payload.size()))) return nullptr;
  if (in.peek() != std::char_traits<char>::eof()) return nullptr;  // trailing bytes
  if (checksum(payload) != header.checksum) return nullptr;
  hs_database_t* db = nullptr;
  if (hs_deserialize_database(payload.data(), payload.size(), &db) != HS_SUCCESS) return nullptr;
  return HsDatabase(db);
}

bool store_cached_database(const std::filesystem::path& file, const std::string& key,
                           const hs_database_t* db) {
  char* bytes = nullptr;
  std::size_t length = 0;
  if (hs_serialize_database(db, &bytes, &length) != HS_SUCCESS) return false;
  std::unique_ptr<char, decltype(&std::free)> owned(bytes, &std::free);

  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) return false;
  // Written under a private name and renamed, so a reader never sees half a file.
  auto tmp = file;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    Header header;
    std::memcpy(header.magic, kMagic, sizeof kMagic);
    copy_key(header.key, key);
    header.size = length;
    header.checksum = checksum({bytes, length});
    out.write(reinterpret_cast<const char*>(&header), sizeof header);
    out.write(bytes, static_cast<std::streamsize>(length));
    if (!out.flush()) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return false;
  }
  return true;
}

}  // namespace gpudiag::detail
