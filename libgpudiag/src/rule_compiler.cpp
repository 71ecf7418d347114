#include "rule_compiler.hpp"

#include <string>

namespace gpudiag::detail {

unsigned pattern_flags(const Rule& rule, const Pattern& pattern) {
  // Logs are read line by line: ^ and $ always anchor at line boundaries.
  unsigned flags = HS_FLAG_MULTILINE;
  for (const auto& f : pattern.flags) {
    if (f == "caseless") flags |= HS_FLAG_CASELESS;
    else if (f == "dotall") flags |= HS_FLAG_DOTALL;
    else if (f == "utf8") flags |= HS_FLAG_UTF8;
    else if (f == "ucp") flags |= HS_FLAG_UTF8 | HS_FLAG_UCP;
    else
      throw RuleError(rule.source, rule.id,
                      "unknown flag \"" + f + "\" (expected caseless, dotall, utf8 or ucp)");
  }
  return flags;
}

std::vector<unsigned> pattern_rule_map(const std::vector<Rule>& rules) {
  std::vector<unsigned> map;
  for (unsigned r = 0; r < rules.size(); ++r)
    for (std::size_t p = 0; p < rules[r].patterns.size(); ++p) map.push_back(r);
  return map;
}

CompiledRules compile_rules(const std::vector<Rule>& rules) {
  CompiledRules out;
  out.pattern_rule = pattern_rule_map(rules);
  std::vector<const char*> expressions;
  std::vector<unsigned> flags, ids;
  for (const auto& rule : rules) {
    for (const auto& p : rule.patterns) {
      ids.push_back(static_cast<unsigned>(expressions.size()));
      expressions.push_back(p.regex.c_str());
      flags.push_back(pattern_flags(rule, p));
    }
  }
  hs_database_t* db = nullptr;
  hs_compile_error_t* error = nullptr;
  hs_error_t rc = hs_compile_multi(expressions.data(), flags.data(), ids.data(),
                                   static_cast<unsigned>(expressions.size()), HS_MODE_STREAM,
                                   nullptr, &db, &error);
  if (rc != HS_SUCCESS) {
    std::string message = error ? error->message : "unknown Hyperscan error";
    int expression = error ? error->expression : -1;
    hs_free_compile_error(error);
    if (expression >= 0 && static_cast<std::size_t>(expression) < expressions.size()) {
      const Rule& rule = rules[out.pattern_rule[expression]];
      std::size_t first = 0;
      while (out.pattern_rule[first] != out.pattern_rule[expression]) ++first;
      throw RuleError(rule.source, rule.id,
                      "pattern " + std::to_string(expression - first + 1) + " /" +
                          expressions[expression] + "/ does not compile: " + message);
    }
    throw RuleError("", "", "Hyperscan could not compile the rules: " + message);
  }
  out.db.reset(db);
  return out;
}

}  // namespace gpudiag::detail
