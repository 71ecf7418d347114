#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <cstdint>
#include <new>
#include <span>

#include "gpudiag/diagnose.hpp"

namespace gpudiag {
namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void fail(std::string_view name, const std::string& why) {
  throw InputError(std::string(name) + ": " + why);
}

// The read buffer, one per thread, page-aligned and kept: a fresh zero-filled
// buffer per input cost page faults on every call, and the kernel copies into
// an aligned buffer several times faster than into one a few bytes past a
// page boundary.
std::span<char> read_buffer(std::size_t size) {
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<char, Free> buffer;
  thread_local std::size_t capacity = 0;
  constexpr std::size_t kPage = 4096;
  size = (size + kPage - 1) / kPage * kPage;
  if (capacity < size) {
    buffer.reset(static_cast<char*>(std::aligned_alloc(kPage, size)));
    if (!buffer) throw std::bad_alloc();
    capacity = size;
  }
  return {buffer.get(), size};
}

constexpr std::uint64_t kToTheEnd = UINT64_MAX;

// Reads `fd` into a diagnosis, to its end or `until` bytes, whichever is first.
Diagnosis read_all(std::shared_ptr<const RuleSet> rules, int fd, std::string_view name,
                   const DiagnoseOptions& options, std::uint64_t until) {
  Stream stream(std::move(rules), options);
  const std::span<char> buffer = read_buffer(std::max<std::size_t>(options.chunk_size, 4096));
  std::uint64_t read = 0;
  while (read < until) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), until - read));
    ssize_t n = ::read(fd, buffer.data(), want);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(name, std::strerror(errno));
    }
    if (n == 0) break;
    read += static_cast<std::uint64_t>(n);
    stream.write({buffer.data(), static_cast<std::size_t>(n)});
    if (stream.full()) break;
  }
  return stream.finish();
}

}  // namespace

Diagnosis diagnose_fd(std::shared_ptr<const RuleSet> rules, int fd, std::string_view name,
                      const DiagnoseOptions& options) {
  return read_all(std::move(rules), fd, name, options, kToTheEnd);
}

Diagnosis diagnose_file(std::shared_ptr<const RuleSet> rules, const std::filesystem::path& path,
                        const DiagnoseOptions& options) {
  Diagnosis d;
  if (path == "-") {
    d = diagnose_fd(std::move(rules), STDIN_FILENO, "<stdin>", options);
  } else {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) fail(path.string(), std::strerror(errno));
    struct stat st;
    const bool known = ::fstat(fd.get(), &st) == 0;
    if (known && S_ISDIR(st.st_mode)) fail(path.string(), "is a directory");
    DiagnoseOptions o = options;
    if (known && S_ISCHR(st.st_mode) && !::isatty(fd.get()) && o.max_bytes == 0)
      o.max_bytes = DiagnoseOptions::kDeviceLimit;  // /dev/zero never ends
    // A file is read up to the size it had when opened: one a running job
    // still writes to, faster than it is read, would never end. Lines written
    // after are the next diagnosis's. (/proc's files say they are empty.)
    const bool sized = known && S_ISREG(st.st_mode) && st.st_size > 0;
    const std::uint64_t until = sized ? static_cast<std::uint64_t>(st.st_size) : kToTheEnd;
    d = read_all(std::move(rules), fd.get(), path.string(), o, until);
  }
  d.path = path.string();
  return d;
}

}  // namespace gpudiag
