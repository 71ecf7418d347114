#include "gpudiag/inputs.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <unistd.h>

#include <cerrno>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

namespace gpudiag {
namespace {

namespace fs = std::filesystem;

// The magic numbers of the archives the decompressor reads, and the
// byte-order marks of UTF-16 text (a Windows PowerShell redirect's): their
// bytes are binary, their text is not.
bool compressed(std::string_view head) {
  for (std::string_view magic : {std::string_view("\x1f\x8b"), std::string_view("\x28\xb5\x2f\xfd"),
                                 std::string_view("BZh"), std::string_view("\xfd" "7zXZ", 5),
                                 std::string_view("\xff\xfe"), std::string_view("\xfe\xff")})
    if (head.substr(0, magic.size()) == magic) return true;
  return false;
}

// The control bytes a text log may hold: tabs, line ends, form feeds,
// backspaces, ANSI escapes.
constexpr char kAllowedControl[] = {'\t', '\n', '\r', '\f', '\v', '\b', 0x1b};

bool allowed_control(char c) {
  return std::find(std::begin(kAllowedControl), std::end(kAllowedControl), c) != std::end(kAllowedControl);
}

// The other control bytes of `s`. Sixteen bytes at a time, the matches summed
// in byte lanes: a byte at a time cost as much as opening the file.
std::size_t control_bytes(std::string_view s) {
  std::size_t n = 0, pos = 0;
#if defined(__SSE2__)
  while (s.size() - pos >= 16) {
    const std::size_t blocks = std::min<std::size_t>((s.size() - pos) / 16, 255);
    __m128i lanes = _mm_setzero_si128();
    for (std::size_t i = 0; i < blocks; ++i, pos += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + pos));
      // Below 0x20 as unsigned bytes: not negative as signed ones, and below 0x20.
      __m128i control = _mm_and_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                                      _mm_cmpgt_epi8(v, _mm_set1_epi8(-1)));
      for (const char a : kAllowedControl) control = _mm_andnot_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(a)), control);
      lanes = _mm_sub_epi8(lanes, control);  // a control byte is -1
    }
    const __m128i sums = _mm_sad_epu8(lanes, _mm_setzero_si128());
    n += static_cast<std::size_t>(_mm_cvtsi128_si64(sums)) +
         static_cast<std::size_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums)));
  }
#endif
  for (; pos < s.size(); ++pos) {
    n += static_cast<unsigned char>(s[pos]) < 0x20 && !allowed_control(s[pos]);
  }
  return n;
}

// A checkpoint, an executable, a core dump: an eighth of the first 8 KiB or
// more are control bytes. Not any NUL byte, as ripgrep has it: a process
// that crashes mid-write leaves NULs in its log, and those logs matter most.
bool binary(const fs::path& file) {
  std::array<char, 8192> head;
  // POSIX reads: a stream's set-up cost as much as the check (every file of
  // a folder of small logs comes through here).
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // the diagnosis will say why it cannot be read
  ssize_t n;
  do n = ::read(fd, head.data(), head.size());
  while (n < 0 && errno == EINTR);
  ::close(fd);
  const std::string_view read(head.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
  if (compressed(read)) return false;
  return control_bytes(read) * 8 >= read.size() && !read.empty();
}

// Which files are binary, the heads read on a few threads where there are
// many: opening and reading each file's head is most of listing a folder of
// small logs, and it waits on the kernel, not on other files.
std::vector<char> each_binary(const std::vector<fs::path>& files) {
  std::vector<char> out(files.size());
  constexpr std::size_t kPerThread = 256;
  const std::size_t threads = std::min<std::size_t>(
      {files.size() / kPerThread, std::max(1u, std::thread::hardware_concurrency()), 8});
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t start; (start = next.fetch_add(kPerThread)) < files.size();)
      for (std::size_t i = start; i < std::min(files.size(), start + kPerThread); ++i) out[i] = binary(files[i]);
  };
  std::vector<std::thread> helpers;
  try {
    for (std::size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  } catch (const std::system_error&) {
    // No more threads to be had: the ones started and this one do it all.
  }
  work();
  for (auto& h : helpers) h.join();
  return out;
}

bool hidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.size() > 1 && name[0] == '.' && name != "..";
}

// What the globs say of a file: the last one it matches decides.
bool admitted(const std::vector<std::string>& globs, const fs::path& relative) {
  bool any_keep = false, keep = false, decided = false;
  for (const std::string& g : globs) {
    const bool drop = !g.empty() && g[0] == '!';
    any_keep = any_keep || !drop;
    if (glob_matches(drop ? g.substr(1) : g, relative)) keep = !drop, decided = true;
  }
  return decided ? keep : !any_keep;
}

// Component by component: "**" stands for any number of directories.
bool components_match(const std::vector<std::string>& pattern, std::size_t i,
                      const std::vector<std::string>& path, std::size_t j) {
  if (i == pattern.size()) return j == path.size();
  if (pattern[i] == "**") {
    for (std::size_t k = j; k <= path.size(); ++k)
      if (components_match(pattern, i + 1, path, k)) return true;
    return false;
  }
  return j < path.size() && ::fnmatch(pattern[i].c_str(), path[j].c_str(), 0) == 0 &&
         components_match(pattern, i + 1, path, j + 1);
}

}  // namespace

bool glob_matches(const std::string& glob, const fs::path& relative) {
  if (glob.find('/') == std::string::npos)
    return ::fnmatch(glob.c_str(), relative.filename().c_str(), 0) == 0;
  std::vector<std::string> pattern, path;
  for (const fs::path& part : fs::path(glob)) pattern.push_back(part.string());
  for (const fs::path& part : relative) path.push_back(part.string());
  return components_match(pattern, 0, path, 0);
}

FileListing list_logs(const fs::path& dir, const FileFilter& filter) {
  FileListing out;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) {
    out.problems.push_back(dir.string() + ": " + ec.message());
    return out;
  }
  std::vector<fs::path> candidates;
  for (; it != end; it.increment(ec)) {
    if (ec) {
      out.problems.push_back(it->path().string() + ": " + ec.message());
      ec.clear();
      continue;
    }
    const fs::path& p = it->path();
    if (!filter.hidden && hidden(p)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    if (!admitted(filter.globs, p.lexically_relative(dir))) continue;
    candidates.push_back(p);
  }
  const std::vector<char> binaries = each_binary(candidates);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (binaries[i]) ++out.skipped_binary;
    else out.files.push_back(std::move(candidates[i]));
  }
  std::sort(out.files.begin(), out.files.end());
  return out;
}

}  // namespace gpudiag
