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
    else if (f == "line_start") continue;  // checked per line, see compile_rules
    else
      throw RuleError(rule.source, rule.id, "unknown flag \"" + f +
                                                "\" (expected caseless, dotall, utf8, ucp or line_start)");
  }
  return flags;
}

static bool is_line_start(const Pattern& pattern) {
  for (const auto& f : pattern.flags)
    if (f == "line_start") return true;
  return false;
}

std::vector<char> confirm_map(const std::vector<Rule>& rules) {
  std::vector<char> map;
  for (const auto& rule : rules)
    for (const auto& p : rule.patterns) map.push_back(is_line_start(p) || !p.prefilter.empty());
  return map;
}

std::vector<unsigned> pattern_rule_map(const std::vector<Rule>& rules) {
  std::vector<unsigned> map;
  for (unsigned r = 0; r < rules.size(); ++r)
    for (std::size_t p = 0; p < rules[r].patterns.size(); ++p) map.push_back(r);
  return map;
}

namespace {

// What may stand before a message on its line: bracketed tags such as
// `[rank3]:` or `[2024-05-01 10:00:00]`, and srun --label's `3: `.
constexpr const char* kLinePrefix = R"(^(?:\[[^\]\n]*\]:?\s*|\s*\d+: )*)";

// What the scan looks for, and what a hit line is confirmed against.
std::string stream_form(const Pattern& p) { return p.prefilter.empty() ? p.regex : p.prefilter; }
std::string confirm_form(const Pattern& p) {
  return is_line_start(p) ? std::string(kLinePrefix) + "(?:" + p.regex + ")" : p.regex;
}

HsDatabase compile_database(const std::vector<Rule>& rules,
                            const std::vector<unsigned>& pattern_rule,
                            const std::vector<std::string>& expressions,
                            const std::vector<unsigned>& flags, const std::vector<unsigned>& ids,
                            unsigned mode) {
  std::vector<const char*> c_expressions;
  for (const auto& e : expressions) c_expressions.push_back(e.c_str());
  hs_database_t* db = nullptr;
  hs_compile_error_t* error = nullptr;
  hs_error_t rc = hs_compile_multi(c_expressions.data(), flags.data(), ids.data(),
                                   static_cast<unsigned>(expressions.size()), mode, nullptr, &db,
                                   &error);
  if (rc != HS_SUCCESS) {
    std::string message = error ? error->message : "unknown Hyperscan error";
    int expression = error ? error->expression : -1;
    hs_free_compile_error(error);
    if (expression >= 0 && static_cast<std::size_t>(expression) < expressions.size()) {
      unsigned id = ids[expression];
      const Rule& rule = rules[pattern_rule[id]];
      std::size_t first = 0;
      while (pattern_rule[first] != pattern_rule[id]) ++first;
      const Pattern& p = rule.patterns[id - first];
      const bool prefilter_failed = mode == HS_MODE_STREAM && !p.prefilter.empty();
      throw RuleError(rule.source, rule.id,
                      std::string(prefilter_failed ? "the prefilter of pattern " : "pattern ") +
                          std::to_string(id - first + 1) + " /" +
                          (prefilter_failed ? p.prefilter : p.regex) +
                          "/ does not compile: " + message);
    }
    throw RuleError("", "", "Hyperscan could not compile the rules: " + message);
  }
  return HsDatabase(db);
}

}  // namespace

CompiledRules compile_rules(const std::vector<Rule>& rules) {
  CompiledRules out;
  out.pattern_rule = pattern_rule_map(rules);
  out.confirm = confirm_map(rules);
  // The stream database looks for a line_start pattern anywhere, which keeps
  // its automaton free of a state that restarts at every line, and for a
  // pattern's prefilter instead of the pattern. A hit is then confirmed on
  // its one line against the full form, in a block database.
  std::vector<std::string> stream_expr, confirm_expr;
  std::vector<unsigned> stream_flags, stream_ids, confirm_flags, confirm_ids;
  unsigned id = 0;
  for (const auto& rule : rules) {
    for (const auto& p : rule.patterns) {
      unsigned flags = pattern_flags(rule, p);
      stream_expr.push_back(stream_form(p));
      stream_flags.push_back(flags);
      stream_ids.push_back(id);
      if (out.confirm[id]) {
        confirm_expr.push_back(confirm_form(p));
        confirm_flags.push_back(flags | HS_FLAG_SINGLEMATCH);
        confirm_ids.push_back(id);
      }
      ++id;
    }
  }
  // The confirm forms first: a pattern's own error is clearer than its
  // prefilter's.
  if (!confirm_expr.empty())
    out.confirm_db = compile_database(rules, out.pattern_rule, confirm_expr, confirm_flags,
                                      confirm_ids, HS_MODE_BLOCK);
  out.db = compile_database(rules, out.pattern_rule, stream_expr, stream_flags, stream_ids,
                            HS_MODE_STREAM);
  return out;
}

}  // namespace gpudiag::detail
