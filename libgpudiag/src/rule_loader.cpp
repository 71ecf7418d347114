#include "rule_loader.hpp"

#include <simdjson.h>

#include <regex>
#include <set>
#include <string>

#include "gpudiag/taxonomy.hpp"
#include "rule_compiler.hpp"

namespace gpudiag::detail {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

struct Context {
  const std::string& file;
  std::string rule_id;
  [[noreturn]] void fail(const std::string& problem) const {
    throw RuleError(file, rule_id, problem);
  }
};

std::string get_string(const Context& ctx, element value, const std::string& what) {
  std::string_view s;
  if (value.get_string().get(s)) ctx.fail(what + " must be a string");
  return std::string(s);
}

std::vector<std::string> get_flags(const Context& ctx, element value) {
  array items;
  if (value.get_array().get(items)) ctx.fail("\"flags\" must be an array of strings");
  std::vector<std::string> out;
  for (element item : items) out.push_back(get_string(ctx, item, "each flag"));
  return out;
}

Role parse_role(const Context& ctx, const std::string& s) {
  for (Role r : {Role::cause, Role::context, Role::progress, Role::completion, Role::resume,
                 Role::resume_request, Role::launcher_report})
    if (to_string(r) == s) return r;
  ctx.fail("unknown role \"" + s +
           "\" (expected cause, context, progress, completion, resume, resume_request or "
           "launcher_report)");
}

std::vector<Pattern> parse_patterns(const Context& ctx, element value,
                                    const std::vector<std::string>& rule_flags) {
  array items;
  if (value.get_array().get(items)) ctx.fail("\"patterns\" must be an array");
  std::vector<Pattern> out;
  for (element item : items) {
    Pattern p;
    if (item.is_string()) {
      p.regex = get_string(ctx, item, "a pattern");
      p.flags = rule_flags;
    } else if (item.is_object()) {
      p.flags = rule_flags;
      for (auto [key, v] : object(item)) {
        if (key == "regex") p.regex = get_string(ctx, v, "\"regex\"");
        else if (key == "flags") p.flags = get_flags(ctx, v);
        else if (key == "prefilter") p.prefilter = get_string(ctx, v, "\"prefilter\"");
        else ctx.fail("unknown pattern field \"" + std::string(key) + "\"");
      }
      if (p.regex.empty()) ctx.fail("a pattern object needs a non-empty \"regex\"");
    } else {
      ctx.fail("each pattern must be a string or an object with \"regex\"");
    }
    if (p.regex.empty()) ctx.fail("a pattern is empty");
    out.push_back(std::move(p));
  }
  if (out.empty()) ctx.fail("\"patterns\" is empty: a rule needs at least one");
  return out;
}

std::vector<Extraction> parse_extract(const Context& ctx, element value) {
  object fields;
  if (value.get_object().get(fields))
    ctx.fail("\"extract\" must be an object of name -> regex with one capture group");
  std::vector<Extraction> out;
  for (auto [name, v] : fields) {
    // Checked by check_extractions: compiling std::regex is slow, and a rule
    // set the cache already holds was checked when it was stored.
    out.push_back({std::string(name), get_string(ctx, v, "extract \"" + std::string(name) + "\"")});
  }
  return out;
}

Rule parse_rule(const std::string& file, element value, std::size_t index) {
  // Until the id is known, the rule is named by its position in the file.
  std::string position = std::to_string(index + 1);
  position.insert(0, 1, '#');
  Context ctx{file, position};
  object fields;
  if (value.get_object().get(fields)) ctx.fail("each rule must be a JSON object");

  Rule rule;
  rule.source = file;
  element id_value;
  if (fields["id"].get(id_value)) ctx.fail("missing \"id\"");
  rule.id = get_string(ctx, id_value, "\"id\"");
  if (rule.id.empty()) ctx.fail("\"id\" is empty");
  ctx.rule_id = rule.id;

  std::vector<std::string> rule_flags;
  element flags_value;
  if (!fields["flags"].get(flags_value)) rule_flags = get_flags(ctx, flags_value);

  bool has_patterns = false;
  std::string role = "cause";
  for (auto [key, v] : fields) {
    if (key == "id" || key == "flags") continue;
    if (key == "class") rule.cls = get_string(ctx, v, "\"class\"");
    else if (key == "role") role = get_string(ctx, v, "\"role\"");
    else if (key == "g15") rule.g15 = get_string(ctx, v, "\"g15\"");
    else if (key == "description") rule.description = get_string(ctx, v, "\"description\"");
    else if (key == "patterns") {
      rule.patterns = parse_patterns(ctx, v, rule_flags);
      has_patterns = true;
    } else if (key == "extract") rule.extract = parse_extract(ctx, v);
    else if (key == "cascade") {
      if (v.get_bool().get(rule.cascade)) ctx.fail("\"cascade\" must be true or false");
    }
    else ctx.fail("unknown field \"" + std::string(key) + "\"");
  }
  rule.role = parse_role(ctx, role);
  if (!has_patterns) ctx.fail("missing \"patterns\"");
  if (rule.cls.empty()) ctx.fail("missing \"class\"");
  const ClassInfo* info = find_class(rule.cls);
  if (!info) ctx.fail("unknown class \"" + rule.cls + "\" (see taxonomy.md for the ids)");
  // A launcher_report rule concludes nothing: its lines are read, not weighed.
  if (rule.cls == "unknown" && rule.role != Role::launcher_report)
    ctx.fail("no rule can conclude \"unknown\"");
  if (rule.role == Role::cause && rule.cls == "healthy")
    ctx.fail("a cause rule cannot have class \"healthy\"");
  if (rule.role == Role::completion && rule.cls != "healthy")
    ctx.fail("a completion rule must have class \"healthy\"");
  if (rule.cascade && rule.role != Role::cause) ctx.fail("only a cause rule can be a cascade");
  if (rule.g15.empty()) rule.g15 = std::string(info->g15);
  else if (rule.g15 != "generic" && !is_g15_class(rule.g15))
    ctx.fail("unknown g15 class \"" + rule.g15 + "\"");
  for (const auto& p : rule.patterns) pattern_flags(rule, p);  // validates flag names
  return rule;
}

}  // namespace

std::vector<Rule> parse_rule_sources(const std::vector<RuleSet::Source>& sources) {
  if (sources.empty()) throw RuleError("", "", "no rule files (*.json) found");
  std::vector<Rule> rules;
  std::set<std::string> ids;
  simdjson::dom::parser parser;
  for (const auto& src : sources) {
    Context ctx{src.name, ""};
    simdjson::padded_string json(src.text);
    element doc;
    if (auto err = parser.parse(json).get(doc))
      ctx.fail(std::string("not valid JSON: ") + simdjson::error_message(err));
    object top;
    if (doc.get_object().get(top)) ctx.fail("the top level must be an object with \"rules\"");
    array items;
    bool has_rules = false;
    for (auto [key, v] : top) {
      if (key == "rules") {
        if (v.get_array().get(items)) ctx.fail("\"rules\" must be an array");
        has_rules = true;
      } else if (key != "description") {
        ctx.fail("unknown top-level field \"" + std::string(key) + "\"");
      }
    }
    if (!has_rules) ctx.fail("missing \"rules\" array");
    std::size_t index = 0;
    for (element item : items) {
      Rule rule = parse_rule(src.name, item, index++);
      if (!ids.insert(rule.id).second)
        throw RuleError(src.name, rule.id, "duplicate rule id (ids are unique across all files)");
      rules.push_back(std::move(rule));
    }
  }
  return rules;
}

void check_extractions(const std::vector<Rule>& rules) {
  for (const auto& rule : rules) {
    for (const auto& e : rule.extract) {
      try {
        std::regex re(e.regex);
        if (re.mark_count() < 1)
          throw RuleError(rule.source, rule.id,
                          "extract \"" + e.name + "\" needs a capture group around the value");
      } catch (const std::regex_error& err) {
        throw RuleError(rule.source, rule.id,
                        "extract \"" + e.name + "\" is not a valid ECMAScript regex: " + err.what());
      }
    }
  }
}

}  // namespace gpudiag::detail
