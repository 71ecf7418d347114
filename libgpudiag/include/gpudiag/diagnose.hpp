#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "gpudiag/diagnosis.hpp"
#include "gpudiag/rules.hpp"

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
// Reads until end of file from an open descriptor; `name` appears in errors.
Diagnosis diagnose_fd(std::shared_ptr<const RuleSet> rules, int fd, std::string_view name,
                      const DiagnoseOptions& options = {});

}  // namespace gpudiag
