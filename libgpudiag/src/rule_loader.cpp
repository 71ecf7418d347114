#include "rule_loader.hpp"

#include <simdjson.h>

#include <algorithm>
#include <set>
#include <string>

#include "builtin_rules.hpp"
#include "embedded_database.hpp"
#include "rule_compiler.hpp"
#include "rule_snapshot.hpp"

namespace gpudiag::detail {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// Names what is being read, so every error says where it is.
struct Context {
  const std::string& file;
  std::string entity;  // "rule <id>", "class <id>", "define <name>", or empty
  [[noreturn]] void fail(const std::string& problem) const {
    throw RuleError(file, entity, problem);
  }
};

std::string get_string(const Context& ctx, element value, const std::string& what) {
  std::string_view s;
  if (value.get_string().get(s)) ctx.fail(what + " must be a string");
  return std::string(s);
}

bool get_bool(const Context& ctx, element value, const std::string& what) {
  bool b = false;
  if (value.get_bool().get(b)) ctx.fail(what + " must be true or false");
  return b;
}

std::vector<std::string> get_strings(const Context& ctx, element value, const std::string& what) {
  array items;
  if (value.get_array().get(items)) ctx.fail(what + " must be an array of strings");
  std::vector<std::string> out;
  for (element item : items) out.push_back(get_string(ctx, item, "each of " + what));
  return out;
}

template <class Enum, std::size_t N>
Enum parse_enum(const Context& ctx, const std::string& s, const Enum (&values)[N],
                const std::string& what) {
  std::string expected;
  for (Enum v : values) {
    if (to_string(v) == s) return v;
    expected += (expected.empty() ? "" : ", ") + std::string(to_string(v));
  }
  ctx.fail("unknown " + what + " \"" + s + "\" (expected " + expected + ")");
}

constexpr Role kRoles[] = {Role::cause,      Role::context,        Role::progress,
                           Role::completion, Role::resume,         Role::resume_request,
                           Role::launcher_report, Role::exit_status, Role::frame,
                           Role::traceback_start, Role::warning, Role::plan,
                           Role::milestone, Role::checkpoint_name, Role::throughput,
                           Role::checkpoint_save, Role::straggler_report};
constexpr Severity kSeverities[] = {Severity::debug, Severity::info, Severity::warning,
                                     Severity::error, Severity::fatal};
constexpr Outcome kOutcomes[] = {Outcome::none,         Outcome::non_finite_loss,
                                 Outcome::diverging_loss, Outcome::resume_without_load,
                                 Outcome::too_few_steps, Outcome::completed,
                                 Outcome::undetermined};
constexpr Tier kTiers[] = {Tier::specific, Tier::wrapper};

// ---- defines ---------------------------------------------------------------

// Replaces each {{name}} with its define, as a non-capturing group so that an
// alternation inside it stays inside. Defines may use defines.
std::string expand(const Context& ctx, std::string_view text, const Catalog& catalog,
                   const std::string& what, int depth = 0) {
  if (depth > 8) ctx.fail(what + ": {{defines}} nest too deep (a define that uses itself?)");
  std::string out;
  std::size_t pos = 0;
  while (true) {
    std::size_t open = text.find("{{", pos);
    if (open == text.npos) break;
    std::size_t close = text.find("}}", open + 2);
    if (close == text.npos) break;
    std::string_view name = text.substr(open + 2, close - open - 2);
    auto it = catalog.defines.find(name);
    if (it == catalog.defines.end())
      ctx.fail(what + " uses {{" + std::string(name) + "}}, which no \"define\" declares");
    out.append(text.substr(pos, open - pos));
    out += "(?:" + expand(ctx, it->second, catalog, what, depth + 1) + ")";
    pos = close + 2;
  }
  out.append(text.substr(pos));
  return out;
}

// ---- class cards -------------------------------------------------------------

// An array of whole numbers from lo to hi, or a failure naming what they are.
std::vector<int> get_ints(const Context& ctx, element v, const char* key, int lo, int hi,
                          const char* what) {
  const std::string problem = "\"" + std::string(key) + "\" holds " + what + " from " +
                              std::to_string(lo) + " to " + std::to_string(hi);
  array items;
  if (v.get_array().get(items)) ctx.fail(problem);
  std::vector<int> out;
  for (element item : items) {
    int64_t n = 0;
    if (item.get_int64().get(n) || n < lo || n > hi) ctx.fail(problem);
    out.push_back(static_cast<int>(n));
  }
  return out;
}

void parse_behaviour(const Context& ctx, element value, ClassInfo& c) {
  object fields;
  if (value.get_object().get(fields)) ctx.fail("\"behaviour\" must be an object");
  for (auto [key, v] : fields) {
    if (key == "exit_signals") {
      c.exit_signals = get_ints(ctx, v, "exit_signals", 1, 64, "signal numbers");
    } else if (key == "exit_codes") {
      // 128+N and negative statuses are signals: "exit_signals" claims those.
      c.exit_codes = get_ints(ctx, v, "exit_codes", 1, 128, "plain exit statuses");
    } else if (key == "signal_exit_stop") {
      c.signal_exit_stop = get_bool(ctx, v, "\"signal_exit_stop\"");
    } else if (key == "signal_exit_cascade") {
      c.signal_exit_cascade = get_bool(ctx, v, "\"signal_exit_cascade\"");
    } else if (key == "tier") {
      c.tier = parse_enum(ctx, get_string(ctx, v, "\"tier\""), kTiers, "tier");
    } else if (key == "survivable") {
      c.survivable = get_bool(ctx, v, "\"survivable\"");
    } else if (key == "stop") {
      c.stop = get_bool(ctx, v, "\"stop\"");
    } else if (key == "resume_failure") {
      c.resume_failure = get_bool(ctx, v, "\"resume_failure\"");
    } else if (key == "stall") {
      c.stall = get_bool(ctx, v, "\"stall\"");
    } else if (key == "outcome") {
      c.outcome = parse_enum(ctx, get_string(ctx, v, "\"outcome\""), kOutcomes, "outcome");
    } else if (key == "max_steps") {
      double steps = 0;
      if (v.get_double().get(steps) || steps < 0) ctx.fail("\"max_steps\" must be a number >= 0");
      c.max_steps = steps;
    } else {
      ctx.fail("unknown behaviour field \"" + std::string(key) + "\"");
    }
  }
}

ClassInfo parse_class(const std::string& file, element value, std::size_t index) {
  Context ctx{file, "class #" + std::to_string(index + 1)};
  object fields;
  if (value.get_object().get(fields)) ctx.fail("each class must be a JSON object");
  ClassInfo c;
  c.source = file;
  element id;
  if (fields["id"].get(id)) ctx.fail("missing \"id\"");
  c.id = get_string(ctx, id, "\"id\"");
  if (c.id.empty()) ctx.fail("\"id\" is empty");
  ctx.entity = "class " + c.id;
  std::pair<const char*, std::string*> text_fields[] = {
      {"family", &c.family}, {"owner", &c.owner},   {"g15", &c.g15},
      {"title", &c.title},   {"cause", &c.cause},   {"action", &c.action},
      {"rerun", &c.rerun},   {"rerun_note", &c.rerun_note},
      {"cannot_decide", &c.cannot_decide}, {"description", &c.description}};
  for (auto [key, v] : fields) {
    if (key == "id") continue;
    if (key == "behaviour") {
      parse_behaviour(ctx, v, c);
      continue;
    }
    auto it = std::find_if(std::begin(text_fields), std::end(text_fields),
                           [name = key](const auto& f) { return name == f.first; });
    if (it == std::end(text_fields)) ctx.fail("unknown field \"" + std::string(key) + "\"");
    *it->second = get_string(ctx, v, "\"" + std::string(key) + "\"");
  }
  for (const char* required : {"family", "owner", "g15", "title", "cause", "action", "rerun",
                               "cannot_decide"}) {
    auto it = std::find_if(std::begin(text_fields), std::end(text_fields),
                           [&](const auto& f) { return std::string_view(f.first) == required; });
    if (it->second->empty()) ctx.fail("missing \"" + std::string(required) + "\"");
  }
  return c;
}

// The card's references and the taxonomy-wide invariants, once every file's
// declarations are in.
void validate_taxonomy(const Taxonomy& t) {
  std::set<std::string> families;
  for (const auto& f : t.families) families.insert(f.id);
  std::set<Outcome> outcomes;
  std::set<int> signals, codes;
  for (const auto& c : t.classes) {
    Context ctx{c.source, "class " + c.id};
    if (!families.count(c.family))
      ctx.fail("unknown family \"" + c.family + "\" (\"families\" declares the ids)");
    if (c.owner != "job" && c.owner != "infra" && c.owner != "scheduler" && c.owner != "none")
      ctx.fail("unknown owner \"" + c.owner + "\" (expected job, infra, scheduler or none)");
    if (c.g15 != "generic" && !t.is_g15(c.g15)) ctx.fail("unknown g15 class \"" + c.g15 + "\"");
    if (c.rerun != "yes" && c.rerun != "no" && c.rerun != "maybe" && c.rerun != "not_needed" &&
        c.rerun != "unclear")
      ctx.fail("unknown rerun \"" + c.rerun + "\" (expected yes, no, maybe, not_needed or unclear)");
    if (c.outcome != Outcome::none && !outcomes.insert(c.outcome).second)
      ctx.fail("another class already has outcome \"" + std::string(to_string(c.outcome)) + "\"");
    if (c.max_steps.has_value() != (c.outcome == Outcome::too_few_steps))
      ctx.fail("\"max_steps\" goes with outcome \"too_few_steps\", and only with it");
    for (int signo : c.exit_signals)
      if (!signals.insert(signo).second)
        ctx.fail("signal " + std::to_string(signo) + " already points to another class");
    for (int code : c.exit_codes)
      if (!codes.insert(code).second)
        ctx.fail("exit status " + std::to_string(code) + " already points to another class");
  }
  if (!t.for_outcome(Outcome::undetermined))
    throw RuleError("", "", "no class has outcome \"undetermined\": the taxonomy needs one for "
                            "logs that nothing decides");
}

// ---- rules ---------------------------------------------------------------------

std::vector<Pattern> parse_patterns(const Context& ctx, element value,
                                    const std::vector<std::string>& rule_flags,
                                    const Catalog& catalog) {
  array items;
  if (value.get_array().get(items)) ctx.fail("\"patterns\" must be an array");
  std::vector<Pattern> out;
  for (element item : items) {
    const std::string what = "pattern " + std::to_string(out.size() + 1);
    Pattern p;
    p.flags = rule_flags;
    if (item.is_string()) {
      p.regex = get_string(ctx, item, "a pattern");
    } else if (item.is_object()) {
      for (auto [key, v] : object(item)) {
        if (key == "regex") p.regex = get_string(ctx, v, "\"regex\"");
        else if (key == "flags") p.flags = get_strings(ctx, v, "\"flags\"");
        else if (key == "prefilter") p.prefilter = get_string(ctx, v, "\"prefilter\"");
        else ctx.fail("unknown pattern field \"" + std::string(key) + "\"");
      }
      if (p.regex.empty()) ctx.fail("a pattern object needs a non-empty \"regex\"");
    } else {
      ctx.fail("each pattern must be a string or an object with \"regex\"");
    }
    if (p.regex.empty()) ctx.fail("a pattern is empty");
    p.regex = expand(ctx, p.regex, catalog, what);
    if (!p.prefilter.empty()) p.prefilter = expand(ctx, p.prefilter, catalog, what + "'s prefilter");
    out.push_back(std::move(p));
  }
  if (out.empty()) ctx.fail("\"patterns\" is empty: a rule needs at least one");
  return out;
}

std::vector<Extraction> parse_extract(const Context& ctx, element value, const Catalog& catalog) {
  object fields;
  if (value.get_object().get(fields))
    ctx.fail("\"extract\" must be an object of name -> regex with one capture group");
  std::vector<Extraction> out;
  for (auto [name, v] : fields) {
    // Compiled and checked by check_extractions: a rule set the cache already
    // holds was checked when it was stored.
    const std::string what = "extract \"" + std::string(name) + "\"";
    out.push_back({std::string(name), expand(ctx, get_string(ctx, v, what), catalog, what)});
  }
  return out;
}

Example parse_example(const Context& ctx, element item, bool match) {
  Example ex;
  ex.match = match;
  if (item.is_string()) {
    ex.line = get_string(ctx, item, "an example");
  } else if (match && item.is_object()) {
    for (auto [key, v] : object(item)) {
      if (key == "line") {
        ex.line = get_string(ctx, v, "an example's \"line\"");
      } else if (key == "values") {
        object values;
        if (v.get_object().get(values)) ctx.fail("an example's \"values\" must be an object");
        for (auto [name, value] : values)
          ex.values.emplace_back(std::string(name), get_string(ctx, value, "an expected value"));
      } else {
        ctx.fail("unknown example field \"" + std::string(key) + "\"");
      }
    }
  } else {
    ctx.fail(match ? "each \"match\" example must be a line or {\"line\", \"values\"}"
                   : "each \"no_match\" example must be a line");
  }
  if (ex.line.empty()) ctx.fail("an example line is empty");
  if (ex.line.find('\n') != std::string::npos) ctx.fail("an example is one line, without \\n");
  return ex;
}

std::vector<Example> parse_examples(const Context& ctx, element value) {
  object fields;
  if (value.get_object().get(fields))
    ctx.fail("\"examples\" must be an object with \"match\" and \"no_match\" lists");
  std::vector<Example> out;
  for (auto [key, v] : fields) {
    if (key != "match" && key != "no_match")
      ctx.fail("unknown examples field \"" + std::string(key) + "\" (expected match, no_match)");
    array items;
    if (v.get_array().get(items)) ctx.fail("\"" + std::string(key) + "\" must be an array");
    for (element item : items) out.push_back(parse_example(ctx, item, key == "match"));
  }
  return out;
}

// A rule's class as its role requires; the checks name outcomes, not ids.
void validate_rule_class(const Context& ctx, Rule& rule, const Taxonomy& taxonomy) {
  const bool decides = rule.role == Role::cause || rule.role == Role::context;
  if (rule.role == Role::exit_status) {
    if (!rule.cls.empty())
      ctx.fail("an exit_status rule has no \"class\": the signal's class decides");
    auto has = [&](std::string_view name) {
      return std::any_of(rule.extract.begin(), rule.extract.end(),
                         [&](const Extraction& e) { return e.name == name; });
    };
    if (!has("exit_code") && !has("signal"))
      ctx.fail("an exit_status rule must extract \"exit_code\" or \"signal\"");
  } else if (rule.cls.empty()) {
    if (decides) ctx.fail("missing \"class\"");
  }
  if ((rule.role == Role::throughput || rule.role == Role::straggler_report) && !rule.cls.empty())
    ctx.fail("a " + std::string(to_string(rule.role)) + " rule has no \"class\": it slows a run, whatever ended it");
  if (rule.role == Role::straggler_report)
    for (const char* name : {"fastest", "fastest_rank", "slowest", "slowest_rank"})
      if (std::none_of(rule.extract.begin(), rule.extract.end(), [&](const Extraction& e) { return e.name == name; }))
        ctx.fail("a straggler_report rule must extract \"" + std::string(name) + "\"");
  if (rule.cascade && rule.role != Role::cause) ctx.fail("only a cause rule can be a cascade");
  if ((!rule.frames.empty() || !rule.raised_in.empty()) && rule.role != Role::cause)
    ctx.fail("only a cause rule can have \"frames\" or \"raised_in\"");
  if (!rule.phase.empty() && rule.role != Role::cause &&
      !(rule.role == Role::frame && rule.phase == "training"))
    ctx.fail("only a cause rule can have a \"phase\" (and a frame rule \"training\": a frame of a training step)");
  if (rule.cls.empty()) {
    if (!rule.g15.empty()) ctx.fail("\"g15\" needs a \"class\" to project");
    return;
  }
  const ClassInfo* info = taxonomy.find(rule.cls);
  if (!info) ctx.fail("unknown class \"" + rule.cls + "\" (no file declares it in \"classes\")");
  if (decides && info->outcome == Outcome::undetermined)
    ctx.fail("no rule can conclude \"" + rule.cls + "\": its outcome is undetermined");
  if (rule.role == Role::cause && info->outcome == Outcome::completed)
    ctx.fail("a cause rule cannot have class \"" + rule.cls + "\": its outcome is completed");
  if (rule.role == Role::completion && info->outcome != Outcome::completed)
    ctx.fail("a completion rule's class must be the one whose outcome is completed, not \"" +
             rule.cls + "\"");
  if (rule.g15.empty()) rule.g15 = info->g15;
  else if (rule.g15 != "generic" && !taxonomy.is_g15(rule.g15))
    ctx.fail("unknown g15 class \"" + rule.g15 + "\"");
}

Rule parse_rule(const std::string& file, element value, std::size_t index,
                const Catalog& catalog) {
  // Until the id is known, the rule is named by its position in the file.
  Context ctx{file, "rule #" + std::to_string(index + 1)};
  object fields;
  if (value.get_object().get(fields)) ctx.fail("each rule must be a JSON object");

  Rule rule;
  rule.source = file;
  element id_value;
  if (fields["id"].get(id_value)) ctx.fail("missing \"id\"");
  rule.id = get_string(ctx, id_value, "\"id\"");
  if (rule.id.empty()) ctx.fail("\"id\" is empty");
  ctx.entity = "rule " + rule.id;

  std::vector<std::string> rule_flags;
  element flags_value;
  if (!fields["flags"].get(flags_value)) rule_flags = get_strings(ctx, flags_value, "\"flags\"");

  bool has_patterns = false;
  std::string role = "cause";
  for (auto [key, v] : fields) {
    if (key == "id" || key == "flags") continue;
    if (key == "class") rule.cls = get_string(ctx, v, "\"class\"");
    else if (key == "role") role = get_string(ctx, v, "\"role\"");
    else if (key == "g15") rule.g15 = get_string(ctx, v, "\"g15\"");
    else if (key == "description") rule.description = get_string(ctx, v, "\"description\"");
    else if (key == "patterns") {
      rule.patterns = parse_patterns(ctx, v, rule_flags, catalog);
      has_patterns = true;
    } else if (key == "extract") rule.extract = parse_extract(ctx, v, catalog);
    else if (key == "examples") rule.examples = parse_examples(ctx, v);
    else if (key == "cascade") rule.cascade = get_bool(ctx, v, "\"cascade\"");
    else if (key == "frames") rule.frames = get_string(ctx, v, "\"frames\"");
    else if (key == "raised_in") rule.raised_in = get_string(ctx, v, "\"raised_in\"");
    else if (key == "unless") rule.unless = get_string(ctx, v, "\"unless\"");
    else if (key == "phase") {
      rule.phase = get_string(ctx, v, "\"phase\"");
      if (rule.phase != "setup" && rule.phase != "training")
        ctx.fail("unknown phase \"" + rule.phase + "\" (expected setup or training)");
    } else if (key == "severity")
      rule.severity = parse_enum(ctx, get_string(ctx, v, "\"severity\""), kSeverities, "severity");
    else ctx.fail("unknown field \"" + std::string(key) + "\"");
  }
  rule.role = parse_enum(ctx, role, kRoles, "role");
  if (!has_patterns) ctx.fail("missing \"patterns\"");
  validate_rule_class(ctx, rule, catalog.taxonomy);
  for (const auto& p : rule.patterns) pattern_flags(rule, p);  // validates flag names
  return rule;
}

// One file's declarations, merged into `catalog`. `declared` holds the names
// the sources being parsed have declared so far: those may not repeat.
void merge_declarations(const Context& ctx, object top, Catalog& catalog,
                        std::set<std::string>& declared) {
  for (auto [key, v] : top) {
    if (key == "families") {
      array items;
      if (v.get_array().get(items)) ctx.fail("\"families\" must be an array");
      for (element item : items) {
        object f;
        if (item.get_object().get(f)) ctx.fail("each family must be an object {id, title}");
        FamilyInfo family;
        for (auto [fk, fv] : f) {
          if (fk == "id") family.id = get_string(ctx, fv, "a family's \"id\"");
          else if (fk == "title") family.title = get_string(ctx, fv, "a family's \"title\"");
          else ctx.fail("unknown family field \"" + std::string(fk) + "\"");
        }
        if (family.id.empty()) ctx.fail("a family needs an \"id\"");
        if (!declared.insert("family " + family.id).second)
          ctx.fail("family \"" + family.id + "\" is declared twice");
        auto& fams = catalog.taxonomy.families;
        auto it = std::find_if(fams.begin(), fams.end(), [&](auto& x) { return x.id == family.id; });
        if (it != fams.end()) *it = family;
        else fams.push_back(family);
      }
    } else if (key == "g15") {
      if (!declared.insert("g15").second) ctx.fail("\"g15\" is declared twice");
      catalog.taxonomy.g15 = get_strings(ctx, v, "\"g15\"");
    } else if (key == "define") {
      object defs;
      if (v.get_object().get(defs)) ctx.fail("\"define\" must be an object of name -> regex");
      for (auto [name, regex] : defs) {
        std::string n(name);
        if (n.empty() || n.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != n.npos)
          ctx.fail("define \"" + n + "\": names are lower-case letters, digits and _");
        if (!declared.insert("define " + n).second) ctx.fail("define \"" + n + "\" is declared twice");
        catalog.defines[n] = get_string(ctx, regex, "define \"" + n + "\"");
      }
    } else if (key == "classes") {
      array items;
      if (v.get_array().get(items)) ctx.fail("\"classes\" must be an array");
      std::size_t index = 0;
      for (element item : items) {
        ClassInfo c = parse_class(ctx.file, item, index++);
        if (!declared.insert("class " + c.id).second)
          throw RuleError(ctx.file, "class " + c.id, "declared twice");
        auto& classes = catalog.taxonomy.classes;
        auto it = std::find_if(classes.begin(), classes.end(), [&](auto& x) { return x.id == c.id; });
        if (it != classes.end()) *it = std::move(c);
        else classes.push_back(std::move(c));
      }
    } else if (key != "rules" && key != "description") {
      ctx.fail("unknown top-level field \"" + std::string(key) +
               "\" (expected description, rules, classes, families, g15, define)");
    }
  }
}

}  // namespace

ParsedRules parse_rule_sources(const std::vector<RuleSet::Source>& sources, const Catalog& base) {
  if (sources.empty()) throw RuleError("", "", "no rule files (*.json) found");
  ParsedRules out;
  out.catalog = base;
  simdjson::dom::parser parser;
  // Every file's declarations first, so that a rule may use a class or a
  // define that a later file declares: each file is parsed once into a
  // document of its own, read in both passes.
  std::vector<simdjson::dom::document> docs(sources.size());
  std::set<std::string> declared;
  for (std::size_t f = 0; f < sources.size(); ++f) {
    Context ctx{sources[f].name, ""};
    const simdjson::padded_string text(sources[f].text);
    element doc;
    if (auto err = parser.parse_into_document(docs[f], text.data(), text.size()).get(doc))
      ctx.fail(std::string("not valid JSON: ") + simdjson::error_message(err));
    object top;
    if (doc.get_object().get(top)) ctx.fail("the top level must be an object with \"rules\"");
    merge_declarations(ctx, top, out.catalog, declared);
  }
  validate_taxonomy(out.catalog.taxonomy);

  std::set<std::string> ids;
  for (std::size_t f = 0; f < sources.size(); ++f) {
    Context ctx{sources[f].name, ""};
    element doc = docs[f].root();
    element items_value;
    if (doc["rules"].get(items_value)) continue;  // a file of declarations only
    array items;
    if (items_value.get_array().get(items)) ctx.fail("\"rules\" must be an array");
    std::size_t index = 0;
    for (element item : items) {
      Rule rule = parse_rule(sources[f].name, item, index++, out.catalog);
      if (!ids.insert(rule.id).second)
        throw RuleError(sources[f].name, "rule " + rule.id,
                        "duplicate rule id (ids are unique across all files)");
      out.rules.push_back(std::move(rule));
    }
  }
  if (out.rules.empty()) throw RuleError("", "", "the rule files hold no rules");
  return out;
}

ParsedRules builtin_rules(bool examples) {
  if (const std::string_view snapshot = embedded_database().rules; !snapshot.empty())
    return examples ? read_snapshot(snapshot) : read_snapshot_rules(snapshot);
  std::vector<RuleSet::Source> sources;
  for (const auto& s : builtin_rule_sources())
    sources.push_back({std::string(s.name), std::string(s.text)});
  return parse_rule_sources(sources, Catalog{});
}

void builtin_examples(std::vector<Rule>& rules) { read_snapshot_examples(embedded_database().rules, rules); }

const Catalog& builtin_catalog() {
  static const Catalog catalog = [] {
    if (const std::string_view snapshot = embedded_database().rules; !snapshot.empty())
      return read_snapshot_catalog(snapshot);
    return builtin_rules().catalog;
  }();
  return catalog;
}

}  // namespace gpudiag::detail
