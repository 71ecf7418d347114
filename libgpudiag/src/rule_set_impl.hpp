#pragma once

#include <hs.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "extractor.hpp"
#include "gpudiag/rules.hpp"

namespace gpudiag {

// Frees a database Hyperscan allocated; one used in place (the library's
// embedded images, in read-only memory) is not owned.
struct HsDatabaseDeleter {
  bool owned = true;
  void operator()(hs_database_t* db) const {
    if (owned) hs_free_database(db);
  }
};
using HsDatabase = std::unique_ptr<hs_database_t, HsDatabaseDeleter>;

struct RuleSet::Impl {
  // Unique to each rule set loaded in this process (never reused, as an
  // address may be): it keys the per-thread scratch space.
  std::uint64_t id = next_id();
  std::vector<Rule> rules;
  Taxonomy taxonomy;
  std::vector<detail::RuleExtractors> extractions;  // per rule
  std::vector<std::unique_ptr<detail::Extractor>> frames;     // per rule: its "frames" condition, or null
  std::vector<std::unique_ptr<detail::Extractor>> raised_in;  // per rule: its "raised_in" condition, or null
  std::vector<std::unique_ptr<detail::Extractor>> unless;     // per rule: its "unless" filter, or null
  std::vector<unsigned> pattern_rule;  // Hyperscan expression id -> rule index
  HsDatabase db;                  // streaming, every pattern
  HsDatabase confirm_db;          // block mode: full forms of confirmed patterns, or null
  std::vector<char> confirm;      // Hyperscan expression id -> confirmed per line
  std::string origin;
  std::string digest;
  CacheOutcome cache_outcome = CacheOutcome::disabled;
  std::filesystem::path cache_file;

  static std::uint64_t next_id() {
    static std::atomic<std::uint64_t> last{0};
    return ++last;
  }
};

}  // namespace gpudiag
