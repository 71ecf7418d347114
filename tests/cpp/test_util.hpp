#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "gpudiag/gpudiag.hpp"

namespace gpudiag::testing {

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("gpudiag-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The rules of the source tree, compiled once, without touching any cache.
inline std::shared_ptr<const RuleSet> shipped_rules() {
  static auto rules = RuleSet::load_dir(GPUDIAG_RULES_DIR, CacheOptions{false, {}});
  return rules;
}

// A training run whose loss falls as 3/step, one line per `every` steps up to
// `last`, each line behind `prefix`.
inline std::string falling_run(int last, int every = 10, const std::string& prefix = "") {
  std::string log;
  for (int step = every; step <= last; step += every)
    log += prefix + "step " + std::to_string(step) + " loss " + std::to_string(3.0 / step) + "\n";
  return log;
}

inline Diagnosis diagnose_text(const std::string& log, std::optional<int> exit_code = {},
                               std::size_t chunk_size = 1 << 20) {
  DiagnoseOptions o;
  o.exit_code = exit_code;
  o.chunk_size = chunk_size;
  return diagnose_bytes(shipped_rules(), log, o);
}

// A verdict part as one text, to look for a phrase in.
inline std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

inline const Finding* finding(const Diagnosis& d, const std::string& kind) {
  for (const auto& f : d.findings)
    if (f.kind == kind) return &f;
  return nullptr;
}

// Whether the diagnosis holds a finding of `kind` that names `cls`, for
// `reason` when one is given.
inline ::testing::AssertionResult has_finding(const Diagnosis& d, const char* kind, const char* cls,
                                              const char* reason = nullptr) {
  const Finding* f = finding(d, kind);
  if (!f) return ::testing::AssertionFailure() << "no " << kind << " finding";
  if (f->cls != cls) return ::testing::AssertionFailure() << kind << " names " << f->cls;
  if (reason && f->reason != reason)
    return ::testing::AssertionFailure() << kind << " is for " << f->reason;
  return ::testing::AssertionSuccess();
}

}  // namespace gpudiag::testing
