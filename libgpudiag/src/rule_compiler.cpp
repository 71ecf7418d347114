#include "rule_compiler.hpp"

#include <algorithm>
#include <string>

namespace gpudiag::detail {
namespace {

bool is_line_start(const Pattern& pattern) {
  return std::find(pattern.flags.begin(), pattern.flags.end(), "line_start") != pattern.flags.end();
}

HsDatabase compile_database(const std::vector<Rule>& rules, const CompilePlan& plan,
                            const CompilePlan::Database& d, unsigned mode) {
  std::vector<const char*> c_expressions;
  for (const auto& e : d.expressions) c_expressions.push_back(e.c_str());
  hs_database_t* db = nullptr;
  hs_compile_error_t* error = nullptr;
  hs_error_t rc = hs_compile_multi(c_expressions.data(), d.flags.data(), d.ids.data(),
                                   static_cast<unsigned>(d.expressions.size()), mode, nullptr, &db,
                                   &error);
  if (rc == HS_SUCCESS) return HsDatabase(db);
  std::string message = error ? error->message : "unknown Hyperscan error";
  int expression = error ? error->expression : -1;
  hs_free_compile_error(error);
  if (expression < 0 || static_cast<std::size_t>(expression) >= d.expressions.size())
    throw RuleError("", "", "Hyperscan could not compile the rules: " + message);
  const unsigned id = d.ids[expression];
  const unsigned rule_index = plan.pattern_rule[id];
  const Rule& rule = rules[rule_index];
  const auto first = static_cast<unsigned>(
      std::find(plan.pattern_rule.begin(), plan.pattern_rule.end(), rule_index) -
      plan.pattern_rule.begin());
  const Pattern& p = rule.patterns[id - first];
  const bool prefilter_failed = mode == HS_MODE_STREAM && !p.prefilter.empty();
  throw RuleError(rule.source, "rule " + rule.id,
                  std::string(prefilter_failed ? "the prefilter of pattern " : "pattern ") +
                      std::to_string(id - first + 1) + " /" +
                      (prefilter_failed ? p.prefilter : p.regex) + "/ does not compile: " + message);
}

}  // namespace

unsigned pattern_flags(const Rule& rule, const Pattern& pattern) {
  // Logs are read line by line: ^ and $ always anchor at line boundaries.
  unsigned flags = HS_FLAG_MULTILINE;
  for (const auto& f : pattern.flags) {
    if (f == "caseless") flags |= HS_FLAG_CASELESS;
    else if (f == "dotall") flags |= HS_FLAG_DOTALL;
    else if (f == "utf8") flags |= HS_FLAG_UTF8;
    else if (f == "ucp") flags |= HS_FLAG_UTF8 | HS_FLAG_UCP;
    else if (f == "line_start") continue;  // confirmed per line, see plan_compile
    else
      throw RuleError(rule.source, "rule " + rule.id,
                      "unknown flag \"" + f +
                          "\" (expected caseless, dotall, utf8, ucp or line_start)");
  }
  return flags;
}

CompilePlan plan_compile(const std::vector<Rule>& rules) {
  CompilePlan plan;
  // A line_start pattern is looked for anywhere, which keeps the stream
  // automaton free of a state that restarts at every line, and its hits are
  // confirmed at the start of their line's message (past the prefixes the
  // line model reads); a prefiltered pattern is looked for by its prefilter
  // and confirmed on its one line.
  unsigned id = 0;
  for (unsigned r = 0; r < rules.size(); ++r) {
    for (const auto& p : rules[r].patterns) {
      const unsigned flags = pattern_flags(rules[r], p);
      const bool line_start = is_line_start(p);
      const bool confirm = line_start || !p.prefilter.empty();
      plan.pattern_rule.push_back(r);
      plan.confirm_map.push_back(line_start ? kConfirmMessage : confirm ? kConfirmLine : kConfirmNone);
      plan.stream.expressions.push_back(p.prefilter.empty() ? p.regex : p.prefilter);
      plan.stream.flags.push_back(flags);
      plan.stream.ids.push_back(id);
      if (confirm) {
        plan.confirm.expressions.push_back(
            line_start ? "^(?:" + p.regex + ")" : p.regex);
        plan.confirm.flags.push_back(flags | HS_FLAG_SINGLEMATCH);
        plan.confirm.ids.push_back(id);
      }
      ++id;
    }
  }
  return plan;
}

CompiledRules compile_plan(const std::vector<Rule>& rules, const CompilePlan& plan) {
  CompiledRules out;
  // The confirm forms first: a pattern's own error is clearer than its
  // prefilter's.
  if (!plan.confirm.expressions.empty())
    out.confirm_db = compile_database(rules, plan, plan.confirm, HS_MODE_BLOCK);
  out.db = compile_database(rules, plan, plan.stream, HS_MODE_STREAM);
  return out;
}

}  // namespace gpudiag::detail
