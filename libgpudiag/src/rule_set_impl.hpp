#pragma once

#include <hs.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
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

// Scratch space for a stream database and its confirm database (null when
// none: then `confirm_scratch` stays null). Confirming runs inside the
// stream's match callback, while the stream's scratch is in use, so it needs
// scratch of its own. False, with nothing kept, where Hyperscan refuses
// either (allocating is where it checks a database: version, CPU features,
// checksum).
inline bool allocate_scratch(const hs_database_t* db, const hs_database_t* confirm, hs_scratch_t*& scan_scratch,
                             hs_scratch_t*& confirm_scratch) {
  scan_scratch = confirm_scratch = nullptr;
  if (hs_alloc_scratch(db, &scan_scratch) == HS_SUCCESS &&
      (!confirm || hs_alloc_scratch(confirm, &confirm_scratch) == HS_SUCCESS))
    return true;
  hs_free_scratch(scan_scratch);
  hs_free_scratch(confirm_scratch);
  scan_scratch = confirm_scratch = nullptr;
  return false;
}

// Scratch space allocated as a rule set loads, where allocating it is how
// the databases are checked (Hyperscan checks their platform and checksum
// there): the first scan takes it over rather than allocating and checking
// again. Scratch is not tied to a thread, only used by one at a time.
class SpareScratch {
 public:
  SpareScratch() = default;
  SpareScratch(const SpareScratch&) = delete;
  SpareScratch& operator=(const SpareScratch&) = delete;
  ~SpareScratch() {
    if (!taken_) {
      hs_free_scratch(scan_);
      hs_free_scratch(confirm_);
    }
  }
  // Allocates scratch for both databases (confirm may be null); false, with
  // nothing kept, where Hyperscan refuses either.
  bool allocate(const hs_database_t* db, const hs_database_t* confirm) {
    return allocate_scratch(db, confirm, scan_, confirm_);
  }
  // The scratch, to the first caller only (it then owns it); nulls after.
  std::pair<hs_scratch_t*, hs_scratch_t*> take() const {
    if (!scan_ || taken_.exchange(true)) return {nullptr, nullptr};
    return {scan_, confirm_};
  }

 private:
  hs_scratch_t* scan_ = nullptr;
  hs_scratch_t* confirm_ = nullptr;
  mutable std::atomic<bool> taken_{false};
};

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
  std::vector<unsigned> pattern_rule;  // Hyperscan expression id -> rule index (see CompilePlan)
  HsDatabase db;                  // streaming, every pattern
  HsDatabase confirm_db;          // block mode: full forms of confirmed patterns, or null
  std::vector<char> confirm;      // Hyperscan expression id -> confirmed per line
  std::vector<char> line_scope;   // Hyperscan expression id -> where its hits count (kScope*)
  bool line_local = false;        // CompilePlan::line_local: lines may be looked up by layout
  std::string one_stream;         // CompilePlan::one_stream: why not
  SpareScratch spare;             // allocated at load, where that checked the databases
  // The shipped rules' examples are read only when asked for (checking the
  // rules, listing them): most processes never do, and they are most of the
  // rules' bytes. Every reader of `examples` goes through with_examples().
  bool examples_deferred = false;
  mutable std::once_flag examples_read;
  const std::vector<Rule>& with_examples() const;
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
