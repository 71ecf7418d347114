#pragma once

#include <hs.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "gpudiag/rules.hpp"

namespace gpudiag {

struct HsDatabaseDeleter {
  void operator()(hs_database_t* db) const { hs_free_database(db); }
};
using HsDatabase = std::unique_ptr<hs_database_t, HsDatabaseDeleter>;

// An extraction regex compiled on first use (thread-safe): most rules never
// match, and compiling every std::regex would be most of loading a rule set.
class LazyRegex {
 public:
  explicit LazyRegex(std::string source) : source_(std::move(source)) {}
  const std::regex& get() const {
    std::call_once(once_, [this] { regex_.emplace(source_); });
    return *regex_;
  }

 private:
  std::string source_;
  mutable std::once_flag once_;
  mutable std::optional<std::regex> regex_;
};

struct CompiledExtraction {
  std::string name;
  std::unique_ptr<LazyRegex> regex;
};

struct RuleSet::Impl {
  std::vector<Rule> rules;
  std::vector<std::vector<CompiledExtraction>> extractions;  // per rule
  std::vector<unsigned> pattern_rule;  // Hyperscan expression id -> rule index
  HsDatabase db;                  // streaming, every pattern
  HsDatabase confirm_db;          // block mode: full forms of confirmed patterns, or null
  std::vector<char> confirm;      // Hyperscan expression id -> confirmed per line
  std::string origin;
  std::string digest;
  CacheOutcome cache_outcome = CacheOutcome::disabled;
  std::filesystem::path cache_file;
};

}  // namespace gpudiag
