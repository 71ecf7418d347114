#include "db_cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
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

// The file mapped rather than read: no buffer to allocate and fill before
// Hyperscan copies the database out of it (a third of loading the rules).
class MappedFile {
 public:
  explicit MappedFile(const std::filesystem::path& file) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const char*>(p);
        size_ = static_cast<std::size_t>(st.st_size);
      }
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view bytes() const { return {data_, size_}; }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace

std::filesystem::path default_cache_dir() {
  if (const char* dir = std::getenv("GPUDIAG_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "gpudiag";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".cache" / "gpudiag";
  return {};
}

std::string platform_tag() {
  hs_platform_info_t platform{};
  if (hs_populate_platform(&platform) != HS_SUCCESS) return "untagged";
  char tag[48];
  std::snprintf(tag, sizeof tag, "t%uf%llu", platform.tune, static_cast<unsigned long long>(platform.cpu_features));
  return tag;
}

HsDatabase load_cached_database(const std::filesystem::path& file, const std::string& key) {
  const MappedFile mapped(file);
  const std::string_view bytes = mapped.bytes();
  Header header;
  if (bytes.size() < sizeof header) return nullptr;
  std::memcpy(&header, bytes.data(), sizeof header);
  char expected_key[32];
  copy_key(expected_key, key);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0 ||
      std::memcmp(header.key, expected_key, sizeof expected_key) != 0 ||
      header.size == 0 || header.size > kMaxPayload || header.size != bytes.size() - sizeof header)
    return nullptr;  // not ours, another rule set's, truncated or with trailing bytes
  const std::string_view payload = bytes.substr(sizeof header);
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
