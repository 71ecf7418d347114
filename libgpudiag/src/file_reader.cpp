#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <thread>

#include "file_reader.hpp"
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

constexpr std::size_t kPage = 4096;

struct Free {
  void operator()(char* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<char, Free>;

// `size` rounded up to whole pages.
std::size_t in_pages(std::size_t size) { return (size + kPage - 1) / kPage * kPage; }

// A page-aligned buffer of `size` bytes, whole pages (not zero-filled): the
// kernel copies into an aligned buffer several times faster than into one a
// few bytes past a page boundary.
Buffer aligned_buffer(std::size_t size) {
  Buffer buffer(static_cast<char*>(std::aligned_alloc(kPage, size)));
  if (!buffer) throw std::bad_alloc();
  return buffer;
}

// The read buffer, one per thread, and kept: a fresh zero-filled buffer per
// input cost page faults on every call. `size` bytes of it, in whole pages.
std::span<char> read_buffer(std::size_t size) {
  thread_local Buffer buffer;
  thread_local std::size_t capacity = 0;
  size = in_pages(size);
  if (capacity < size) {
    buffer = aligned_buffer(size);
    capacity = size;
  }
  return {buffer.get(), size};
}

constexpr std::uint64_t kToTheEnd = UINT64_MAX;

std::atomic<std::uint64_t> read_ahead_count{0};

// A large file is read on a thread of its own, a few blocks ahead of the
// scan, where the process may run on two CPUs or more: the kernel's copy of
// the file (a fifth of the time of a log read in turn) then overlaps the
// scan. A block is the scan's piece; the scan hands each back when it is
// done with it (Stream::write keeps no view of what it was given).
class ReadAhead {
 public:
  // Reads `fd` to its end or `until` bytes, in blocks of `block` bytes.
  ReadAhead(int fd, std::uint64_t until, std::size_t block) : fd_(fd), until_(until), block_(in_pages(block)) {
    for (Buffer& b : buffers_) b = aligned_buffer(block_);
    thread_ = std::thread([this] { run(); });
  }
  ~ReadAhead() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // The next block, handing back the one before; empty at the end, with
  // `error` set where a read failed.
  std::string_view next(std::string& error) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (handed_) {
      handed_ = false;
      head_ = (head_ + 1) % kBlocks;
      --filled_;
      changed_.notify_all();
    }
    changed_.wait(lock, [&] { return filled_ > 0 || done_; });
    if (filled_ == 0) {
      error = error_;
      return {};
    }
    handed_ = true;
    return {buffers_[head_].get(), sizes_[head_]};
  }

  // Whether a file of `size` bytes is read so.
  static bool worth_it(std::uint64_t size) {
    if (size < kFrom) return false;
    cpu_set_t cpus;
    return sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) >= 2;
  }

 private:
  void run() {
    std::uint64_t read = 0;
    for (std::size_t tail = 0;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || filled_ < kBlocks; });
        if (stop_) return;
      }
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(block_, until_ - read));
      const ssize_t n = want == 0 ? 0 : ::read(fd_, buffers_[tail].get(), want);
      if (n < 0 && errno == EINTR) continue;
      const int why = errno;
      std::lock_guard<std::mutex> lock(mutex_);
      if (n <= 0) {
        if (n < 0) error_ = std::strerror(why);
        done_ = true;
      } else {
        read += static_cast<std::uint64_t>(n);
        sizes_[tail] = static_cast<std::size_t>(n);
        tail = (tail + 1) % kBlocks;
        ++filled_;
      }
      changed_.notify_all();
      if (done_) return;
    }
  }

  static constexpr std::uint64_t kFrom = 8 << 20;  // a thread costs less than reading this much
  static constexpr std::size_t kBlocks = 3;         // one scanned, two read ahead
  int fd_;
  std::uint64_t until_;
  std::size_t block_;
  std::array<Buffer, kBlocks> buffers_;
  std::array<std::size_t, kBlocks> sizes_{};
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t head_ = 0, filled_ = 0;  // the block scanned (or next), and the blocks read, it among them
  bool handed_ = false, done_ = false, stop_ = false;
  std::string error_;
  std::thread thread_;
};

// Reads `fd` into a diagnosis, to its end or `until` bytes, whichever is first.
Diagnosis read_all(std::shared_ptr<const RuleSet> rules, int fd, std::string_view name,
                   const DiagnoseOptions& options, std::uint64_t until) {
  Stream stream(std::move(rules), options);
  const std::size_t block = std::max<std::size_t>(options.chunk_size, kPage);
  if (options.read_ahead && until != kToTheEnd && ReadAhead::worth_it(until)) {
    ReadAhead ahead(fd, until, block);
    read_ahead_count.fetch_add(1, std::memory_order_relaxed);
    std::string error;
    for (std::string_view piece; !(piece = ahead.next(error)).empty();) {
      stream.write(piece);
      if (stream.full()) break;
    }
    if (!error.empty()) fail(name, error);
    return stream.finish();
  }
  const std::span<char> buffer = read_buffer(block);
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

std::uint64_t detail::files_read_ahead() { return read_ahead_count.load(std::memory_order_relaxed); }

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
