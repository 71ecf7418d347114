#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpudiag/rules.hpp"

namespace gpudiag::detail {

// One extraction, compiled with PCRE2 (the patterns' own syntax) on first
// use: most rules never match, and a rule set loaded from the cache compiles
// none. Thread-safe.
class Extractor {
 public:
  Extractor(std::string name, std::string regex);
  ~Extractor();
  Extractor(const Extractor&) = delete;
  Extractor& operator=(const Extractor&) = delete;

  const std::string& name() const { return name_; }
  // The value in `line`, if the regex finds it.
  std::optional<std::string> find(std::string_view line) const;
  // Empty when the regex compiles and says which group is the value (exactly
  // one group, or a group named like the value); else the problem.
  std::string problem() const;

 private:
  struct Compiled;
  const Compiled& compiled() const;
  std::string name_, regex_;
  mutable std::once_flag once_;
  mutable std::unique_ptr<Compiled> compiled_;
};

// Every extraction of one rule.
using RuleExtractors = std::vector<std::unique_ptr<Extractor>>;

// Runs a rule's extractions over one matched line: only lines a rule flagged
// ever reach a regex engine other than Hyperscan.
std::map<std::string, std::string> extract_values(const RuleExtractors& fields,
                                                  std::string_view line);

// Throws RuleError for an extraction that does not compile or does not say
// which group is the value. Kept apart from parsing because compiling is the
// slow part of loading, and a rule set found in the cache has passed it.
void check_extractions(const std::vector<Rule>& rules,
                       const std::vector<RuleExtractors>& extractors);

}  // namespace gpudiag::detail
