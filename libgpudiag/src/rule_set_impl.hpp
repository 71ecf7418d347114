#pragma once

#include <hs.h>

#include <filesystem>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "gpudiag/rules.hpp"

namespace gpudiag {

struct HsDatabaseDeleter {
  void operator()(hs_database_t* db) const { hs_free_database(db); }
};
using HsDatabase = std::unique_ptr<hs_database_t, HsDatabaseDeleter>;

struct CompiledExtraction {
  std::string name;
  std::regex regex;
};

struct RuleSet::Impl {
  std::vector<Rule> rules;
  std::vector<std::vector<CompiledExtraction>> extractions;  // per rule
  std::vector<unsigned> pattern_rule;  // Hyperscan expression id -> rule index
  HsDatabase db;                  // streaming, every pattern
  HsDatabase confirm_db;          // block mode: anchored forms of line_start patterns, or null
  std::vector<char> line_start;   // Hyperscan expression id -> confirmed per line
  std::string origin;
  std::string digest;
  CacheOutcome cache_outcome = CacheOutcome::disabled;
  std::filesystem::path cache_file;
};

}  // namespace gpudiag
