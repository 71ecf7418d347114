#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

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

}  // namespace

Diagnosis diagnose_fd(std::shared_ptr<const RuleSet> rules, int fd, std::string_view name,
                      const DiagnoseOptions& options) {
  Stream stream(std::move(rules), options);
  std::vector<char> buffer(std::max<std::size_t>(options.chunk_size, 4096));
  for (;;) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(name, std::strerror(errno));
    }
    if (n == 0) break;
    stream.write({buffer.data(), static_cast<std::size_t>(n)});
  }
  return stream.finish();
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
    if (::fstat(fd.get(), &st) == 0 && S_ISDIR(st.st_mode)) fail(path.string(), "is a directory");
    d = diagnose_fd(std::move(rules), fd.get(), path.string(), options);
  }
  d.path = path.string();
  return d;
}

}  // namespace gpudiag
