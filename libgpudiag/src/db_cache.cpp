#include "db_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
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

// The whole file, read into a buffer that is not zero-filled first (that,
// and an ifstream, were a third of loading the rules). Read, not mapped: a
// file truncated while mapped would kill the process; a short read is a
// failed check.
std::optional<std::string_view> read_whole(const std::filesystem::path& file, std::unique_ptr<char[]>& buffer) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  std::size_t size = 0, got = 0;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      static_cast<std::uint64_t>(st.st_size) <= kMaxPayload + sizeof(Header)) {
    size = static_cast<std::size_t>(st.st_size);
    buffer.reset(new char[size]);
    while (got < size) {
      const ssize_t n = ::read(fd, buffer.get() + got, size - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
  }
  ::close(fd);
  if (size == 0 || got != size) return std::nullopt;
  return std::string_view(buffer.get(), size);
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

std::string platform_tag() {
  hs_platform_info_t platform{};
  if (hs_populate_platform(&platform) != HS_SUCCESS) return "untagged";
  char tag[48];
  std::snprintf(tag, sizeof tag, "t%uf%llu", platform.tune, static_cast<unsigned long long>(platform.cpu_features));
  return tag;
}

HsDatabase load_cached_database(const std::filesystem::path& file, const std::string& key) {
  std::unique_ptr<char[]> buffer;
  const auto read = read_whole(file, buffer);
  if (!read) return nullptr;
  const std::string_view bytes = *read;
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
  // A file in use is spared by prune_cache: its time moves on, once a day at most.
  std::error_code ec;
  const auto now = std::filesystem::file_time_type::clock::now();
  if (std::filesystem::last_write_time(file, ec) < now - std::chrono::hours(24) && !ec)
    std::filesystem::last_write_time(file, now, ec);
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
  prune_cache(file.parent_path());
  return true;
}

void prune_cache(const std::filesystem::path& dir, std::chrono::hours unused_for) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto cutoff = fs::file_time_type::clock::now() - unused_for;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    // Only what this cache writes: databases and the temporaries of a store
    // that was killed midway.
    if (!(name.ends_with(".hsdb") || name.find(".hsdb.tmp.") != std::string::npos)) continue;
    std::error_code stat_ec;
    if (it->is_regular_file(stat_ec) && it->last_write_time(stat_ec) < cutoff && !stat_ec)
      fs::remove(it->path(), stat_ec);
  }
}

}  // namespace gpudiag::detail
