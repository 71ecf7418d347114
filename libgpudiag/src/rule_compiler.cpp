#include "rule_compiler.hpp"

#include "line_form.hpp"
#include "text_util.hpp"

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
  const unsigned id = plan.source_pattern(d.ids[expression]);
  const unsigned rule_index = plan.pattern_rule[id];
  const Rule& rule = rules[rule_index];
  const unsigned index = id - plan.first_pattern(rule_index);
  const Pattern& p = rule.patterns[index];
  const bool prefilter_failed = mode == HS_MODE_STREAM && !p.prefilter.empty();
  throw RuleError(rule.source, "rule " + rule.id,
                  std::string(prefilter_failed ? "the prefilter of pattern " : "pattern ") +
                      std::to_string(index + 1) + " /" +
                      (prefilter_failed ? p.prefilter : p.regex) + "/ does not compile: " + message);
}

// What the last tokens of an expression are, a token being an escape with
// what it takes (\x41, \101, \cA, \p{L}, \Q...\E), a class, or one
// character: where the last begins, and whether it and the one before are
// plain word characters; `top_bar`: a '|' stood outside every group;
// `options`: a group opened with "(?" other than "(?:" ("(?i)", "(?x)").
struct Tokens {
  std::size_t last = std::string::npos;
  bool last_plain = false, before_last_plain = false;
  bool top_bar = false, options = false, understood = true;
};

Tokens tokenize(const std::string& e) {
  Tokens t;
  int depth = 0;
  std::size_t i = 0;
  while (i < e.size()) {
    const std::size_t start = i;
    bool plain = false;
    const char c = e[i];
    if (c == '\\') {
      if (i + 1 >= e.size()) return t.understood = false, t;
      const char x = e[i + 1];
      i += 2;
      if (x == 'Q') {
        const std::size_t end = e.find("\\E", i);
        i = end == std::string::npos ? e.size() : end + 2;
      } else if (x == 'x' || x == 'p' || x == 'P' || x == 'N' || x == 'o' || x == 'g' || x == 'k') {
        if (i < e.size() && e[i] == '{') {
          const std::size_t end = e.find('}', i);
          if (end == std::string::npos) return t.understood = false, t;
          i = end + 1;
        } else {
          i = std::min(e.size(), i + (x == 'x' ? 2 : 1));
        }
      } else if (x == 'c') {
        i = std::min(e.size(), i + 1);
      } else if (x >= '0' && x <= '9') {
        while (i < e.size() && i < start + 4 && e[i] >= '0' && e[i] <= '9') ++i;
      }
    } else if (c == '[') {
      ++i;
      if (i < e.size() && e[i] == '^') ++i;
      if (i < e.size() && e[i] == ']') ++i;
      while (i < e.size() && e[i] != ']') i += e[i] == '\\' ? 2 : 1;
      if (i >= e.size()) return t.understood = false, t;
      ++i;
    } else {
      ++i;
      if (c == '(') {
        ++depth;
        if (i < e.size() && e[i] == '?' && !(i + 1 < e.size() && e[i + 1] == ':')) t.options = true;
      } else if (c == ')') {
        --depth;
      } else if (c == '|' && depth == 0) {
        t.top_bar = true;
      }
      plain = is_word_char(c);
    }
    t.before_last_plain = t.last_plain;
    t.last = start;
    t.last_plain = plain;
  }
  return t;
}

}  // namespace

std::string without_word_end(const std::string& expression, unsigned flags) {
  if (flags & (HS_FLAG_UTF8 | HS_FLAG_UCP)) return {};
  const Tokens t = tokenize(expression);
  if (!t.understood || t.top_bar || t.options || t.last == std::string::npos ||
      expression.compare(t.last, std::string::npos, "\\b") != 0 || !t.before_last_plain)
    return {};
  return expression.substr(0, t.last);
}

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

namespace {

// What the stream looks for, and how a hit of it is confirmed, as written.
struct StreamForm {
  std::string expression;
  char confirm_by;
};

StreamForm stream_form(const Pattern& p, unsigned flags) {
  if (is_line_start(p)) return {p.prefilter.empty() ? p.regex : p.prefilter, kConfirmMessage};
  if (!p.prefilter.empty()) return {p.prefilter, kConfirmLine};
  if (std::string rest = without_word_end(p.regex, flags); !rest.empty())
    return {std::move(rest), kConfirmWordEnd};
  return {p.regex, kConfirmNone};
}

}  // namespace

CompilePlan plan_compile(const std::vector<Rule>& rules) {
  CompilePlan plan;
  // A line_start pattern is looked for anywhere, which keeps the stream
  // automaton free of a state that restarts at every line, and its hits are
  // confirmed at the start of their line's message (past the prefixes the
  // line model reads); a prefiltered pattern is looked for by its prefilter
  // and confirmed on its one line.
  std::vector<StreamForm> forms;
  std::vector<unsigned> flags;
  std::vector<LineForm> lines;
  plan.line_local = true;
  for (unsigned r = 0; r < rules.size(); ++r)
    for (const auto& p : rules[r].patterns) {
      plan.pattern_rule.push_back(r);
      flags.push_back(pattern_flags(rules[r], p));
      forms.push_back(stream_form(p, flags.back()));
      lines.push_back(line_form(forms.back().expression, flags.back()));
      if (plan.line_local && !lines.back().understood) {
        plan.line_local = false;
        plan.one_stream = "rule " + rules[r].id + ", pattern " + std::to_string(&p - rules[r].patterns.data() + 1) +
                          " /" + forms.back().expression + "/: " + lines.back().problem;
      }
    }
  // Held to lines (see LineScanner's layouts), a pattern that tells digits
  // apart is looked for twice: as written, for the pieces of lines too long
  // to be read whole, and by its skeleton, confirmed on each whole line it
  // finds, as a prefiltered pattern is (a further id, past the patterns').
  const auto patterns = static_cast<unsigned>(forms.size());
  auto add = [&](std::string expression, unsigned pattern_flags, unsigned id, char confirm_by, char scope,
                 const std::string& confirm_form) {
    plan.confirm_map.push_back(confirm_by);
    plan.line_scope.push_back(scope);
    plan.stream.expressions.push_back(std::move(expression));
    plan.stream.flags.push_back(pattern_flags);
    plan.stream.ids.push_back(id);
    if (confirm_by == kConfirmLine || confirm_by == kConfirmMessage) {
      plan.confirm.expressions.push_back(confirm_form);
      plan.confirm.flags.push_back(pattern_flags | HS_FLAG_SINGLEMATCH);
      plan.confirm.ids.push_back(id);
    }
  };
  unsigned id = 0;
  for (unsigned r = 0; r < rules.size(); ++r)
    for (const auto& p : rules[r].patterns) {
      const StreamForm& f = forms[id];
      const std::string confirm_form = f.confirm_by == kConfirmMessage ? "^(?:" + p.regex + ")" : p.regex;
      const bool split = plan.line_local && !lines[id].digit_blind();
      add(plan.line_local ? lines[id].exact : f.expression, flags[id], id, f.confirm_by,
          split ? kScopePart : kScopeAny, confirm_form);
      if (split) plan.skeleton_of.push_back(id);
      ++id;
    }
  for (unsigned k = 0; k < plan.skeleton_of.size(); ++k) {
    const unsigned source = plan.skeleton_of[k];
    const char confirm_by = forms[source].confirm_by == kConfirmMessage ? kConfirmMessage : kConfirmLine;
    const Pattern& p = rules[plan.pattern_rule[source]].patterns[source - plan.first_pattern(plan.pattern_rule[source])];
    plan.pattern_rule.push_back(plan.pattern_rule[source]);
    add(std::move(lines[source].skeleton), flags[source], patterns + k, confirm_by, kScopeWhole,
        confirm_by == kConfirmMessage ? "^(?:" + p.regex + ")" : p.regex);
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
