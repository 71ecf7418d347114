#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "gpudiag/diagnosis.hpp"
#include "gpudiag/rules.hpp"
#include "gpudiag/scheduler.hpp"

namespace gpudiag {

struct DiagnoseOptions {
  // The job's exit status, as subprocess reports it (negative = signal) or as
  // a shell does (128 + signal). It counts as evidence.
  std::optional<int> exit_code;
  // Upper bound on one scanned piece; lines longer than this are scanned in
  // pieces. Memory use is a small multiple of it whatever the input size.
  std::size_t chunk_size = 1 << 20;
  // Evidence text is cut to this many bytes.
  std::size_t text_cap = 1024;
  // What the scheduler recorded of the job (sacct, scontrol): read as one
  // more line after the log's last, and its exit status stands in for an
  // exit_code not given.
  std::optional<SchedulerRecord> scheduler;
  // Reads no more than this many bytes of the input as stored (compressed,
  // wrapped); 0 for no limit. The diagnosis is of what was read, and its
  // input says where it stopped (damage). Files that are character devices
  // but no terminal (/dev/zero, /dev/urandom) are read up to kDeviceLimit
  // when no limit is given: they never end. (diagnose_file reads a regular
  // file up to the size it had when opened, whatever is appended meanwhile.)
  std::uint64_t max_bytes = 0;
  static constexpr std::uint64_t kDeviceLimit = 1ull << 30;
  // diagnose_file reads a regular file of 8 MiB or more on a second thread,
  // a few pieces ahead of the scan, where the process may run on two CPUs
  // or more: the kernel's copy of the file then overlaps the scan. A pool
  // that keeps every CPU busy with files of its own turns it off.
  bool read_ahead = true;
};

// An input that could not be read; what() names it and says why.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Incremental diagnosis: write() the log in pieces of any size, then finish().
// Memory stays bounded by the options, not by the log.
class Stream {
 public:
  Stream(std::shared_ptr<const RuleSet> rules, DiagnoseOptions options = {});
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  void write(std::string_view bytes);
  // Whether the size limit (max_bytes) was reached: later writes are ignored.
  bool full() const;
  // The job's exit status when it is known only after its log (a wrapper
  // learns it when the command exits), as DiagnoseOptions::exit_code.
  void set_exit_code(std::optional<int> exit_code);
  Diagnosis finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

Diagnosis diagnose_bytes(std::shared_ptr<const RuleSet> rules, std::string_view log,
                         const DiagnoseOptions& options = {});
// Reads the file in constant memory; "-" reads standard input.
Diagnosis diagnose_file(std::shared_ptr<const RuleSet> rules, const std::filesystem::path& path,
                        const DiagnoseOptions& options = {});
// One job from many files (per-rank or per-node logs): their lines merged
// into one timeline, by the times the lines state (a line without one goes
// with the line before it; files whose times are of different forms, or
// none, follow in the order given), each line that carries no rank tagged
// with the rank the file's name gives (rank_from_path), and diagnosed as one
// log. Each file is read as diagnose_file reads it, in constant memory.
Diagnosis diagnose_job(std::shared_ptr<const RuleSet> rules, const std::vector<std::filesystem::path>& files,
                       const DiagnoseOptions& options = {});

// The rank a log's file name gives, where it gives one: `rank3.log`,
// `rank_03.out`, Slurm's `%j-%t.out` (`4714782-3.out`: job id, task id), a
// torchrun --log-dir file (`attempt_0/3/stderr.log`: the local rank).
std::optional<int> rank_from_path(const std::filesystem::path& path);

// An exit status written in decimal ("-9", "137", "3221225477"): a number in
// the int range, or a Windows status written unsigned (3221225477 is
// 0xC0000005, an access violation), taken as the signed 32-bit value Windows
// keeps (-1073741819); nullopt for anything else.
std::optional<int> parse_exit_status(std::string_view text);

// Reads until end of file from an open descriptor; `name` appears in errors.
Diagnosis diagnose_fd(std::shared_ptr<const RuleSet> rules, int fd, std::string_view name,
                      const DiagnoseOptions& options = {});

}  // namespace gpudiag
