#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "db_cache.hpp"
#include "embedded_database.hpp"
#include "gpudiag/rules.hpp"
#include "gpudiag/version.hpp"
#include "hash.hpp"
#include "rule_compiler.hpp"
#include "rule_loader.hpp"
#include "rule_set_impl.hpp"
#include "line_scanner.hpp"
#include "match_sink.hpp"
#include <set>

namespace gpudiag {
namespace {

// The cache key: everything that makes the compiled database what it is, so
// that no constant has to be bumped by hand when the compile logic changes.
std::string compile_digest(const detail::CompilePlan& plan, const std::vector<Rule>& rules) {
  detail::Hasher h;
  h.update(version());
  h.update(hyperscan_version());
  for (const auto* db : {&plan.stream, &plan.confirm}) {
    h.update_u64(db->expressions.size());
    for (std::size_t i = 0; i < db->expressions.size(); ++i) {
      h.update_u64(db->expressions[i].size());
      h.update(db->expressions[i]);
      h.update_u64(db->flags[i]);
      h.update_u64(db->ids[i]);
    }
  }
  // A cached set skips the extraction and condition checks: they were run
  // when it was stored.
  auto text = [&](const std::string& t) {
    h.update_u64(t.size());
    h.update(t);
  };
  for (const auto& rule : rules) {
    for (const auto& e : rule.extract) {
      text(e.name);
      text(e.regex);
    }
    text(rule.frames);
    text(rule.raised_in);
    text(rule.unless);
  }
  return h.hex();
}

// The databases compiled into the library with the shipped rules, and their
// plan's tables, where this CPU can run them: Hyperscan says so as scratch
// space is allocated for them (it checks the version, the CPU features the
// databases were compiled for and their checksum there), and that scratch
// serves the first scan. Only for the shipped rules as the library carries
// them: compiled from the same files by the same build.
bool load_embedded(RuleSet::Impl& impl) {
  const detail::EmbeddedDatabase e = detail::embedded_database();
  if (e.stream.empty()) return false;
  // The databases are Hyperscan's in-memory images, used where they lie: no
  // copy, and their checksum is read once, by hs_alloc_scratch (Hyperscan
  // checks there a database mapped from elsewhere).
  auto in_place = [](std::string_view image) {
    if (reinterpret_cast<std::uintptr_t>(image.data()) % 64 != 0) return HsDatabase();
    auto* db = reinterpret_cast<hs_database_t*>(const_cast<char*>(image.data()));
    std::size_t size = 0;
    if (hs_database_size(db, &size) != HS_SUCCESS || size != image.size()) return HsDatabase();
    return HsDatabase(db, HsDatabaseDeleter{false});
  };
  const bool has_confirm = !e.confirm.empty();
  HsDatabase db = in_place(e.stream);
  HsDatabase confirm = has_confirm ? in_place(e.confirm) : HsDatabase();
  if (!db || (has_confirm && !confirm)) return false;
  if (!impl.spare.allocate(db.get(), confirm.get())) return false;
  impl.db = std::move(db);
  impl.confirm_db = std::move(confirm);
  impl.digest = e.digest;
  impl.pattern_rule.assign(e.pattern_rule.begin(), e.pattern_rule.end());
  impl.confirm.assign(e.confirm_map.begin(), e.confirm_map.end());
  impl.line_local = e.line_local;
  impl.line_scope.assign(e.line_scope.begin(), e.line_scope.end());
  return true;
}

// Throws RuleError for a frame condition that does not compile or holds a
// capture group of its own.
void check_conditions(const RuleSet::Impl& impl) {
  for (std::size_t r = 0; r < impl.rules.size(); ++r)
    for (const auto* condition : {&impl.frames[r], &impl.raised_in[r], &impl.unless[r]})
      if (*condition && !(*condition)->problem().empty())
        throw RuleError(impl.rules[r].source, "rule " + impl.rules[r].id,
                        "\"" + (*condition)->name() + "\" is not a regex without capture groups: " +
                            (*condition)->problem());
}

// Hyperscan's compile time grows faster than the pattern count (10,000
// literal patterns: half a second; 200,000: nine minutes): a set past these
// bounds is refused with a reason rather than left compiling.
constexpr std::uintmax_t kMaxRuleFileBytes = 16u << 20;
constexpr std::size_t kMaxPatterns = 10'000;

std::string read_rule_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (const auto size = std::filesystem::file_size(path, ec); !ec && size > kMaxRuleFileBytes)
    throw RuleError(path.string(), "", "is " + std::to_string(size >> 20) + " MiB: a rule file may be 16 MiB at most");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RuleError(path.string(), "", "cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Records which rules hit an example line.
class HitRecorder : public detail::MatchSink {
 public:
  void on_hit(const detail::LineHit& hit) override { rules.insert(hit.rule); }
  std::set<unsigned> rules;
};

}  // namespace

std::string_view to_string(Role role) {
  switch (role) {
    case Role::cause: return "cause";
    case Role::context: return "context";
    case Role::progress: return "progress";
    case Role::completion: return "completion";
    case Role::resume: return "resume";
    case Role::resume_request: return "resume_request";
    case Role::launcher_report: return "launcher_report";
    case Role::exit_status: return "exit_status";
    case Role::frame: return "frame";
    case Role::traceback_start: return "traceback_start";
    case Role::warning: return "warning";
    case Role::plan: return "plan";
    case Role::milestone: return "milestone";
    case Role::checkpoint_name: return "checkpoint_name";
    case Role::throughput: return "throughput";
    case Role::checkpoint_save: return "checkpoint_save";
    case Role::straggler_report: return "straggler_report";
  }
  return "cause";
}

std::string_view to_string(Severity severity) {
  switch (severity) {
    case Severity::unknown: return "unstated";
    case Severity::debug: return "debug";
    case Severity::info: return "info";
    case Severity::warning: return "warning";
    case Severity::error: return "error";
    case Severity::fatal: return "fatal";
  }
  return "unstated";
}

std::string_view to_string(CacheOutcome outcome) {
  switch (outcome) {
    case CacheOutcome::disabled: return "disabled";
    case CacheOutcome::hit: return "hit";
    case CacheOutcome::compiled_and_stored: return "compiled and stored";
    case CacheOutcome::compiled_not_stored: return "compiled, not stored";
    case CacheOutcome::built_in: return "built in";
  }
  return "disabled";
}

RuleError::RuleError(std::string file, std::string entity, std::string problem)
    : std::runtime_error((file.empty() ? std::string("rules") : file) +
                         (entity.empty() ? std::string() : ": " + entity) + ": " + problem),
      file_(std::move(file)),
      entity_(std::move(entity)),
      problem_(std::move(problem)) {}

std::string RuleError::rule_id() const {
  return entity_.rfind("rule ", 0) == 0 ? entity_.substr(5) : std::string();
}

RuleSet::RuleSet(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RuleSet::~RuleSet() = default;

const std::vector<Rule>& RuleSet::Impl::with_examples() const {
  std::call_once(examples_read, [this] {
    // Only the examples are written, each a member no other reader touches;
    // the Impl was built non-const.
    if (examples_deferred) detail::builtin_examples(const_cast<std::vector<Rule>&>(rules));
  });
  return rules;
}

const std::vector<Rule>& RuleSet::rules() const { return impl_->with_examples(); }
const Taxonomy& RuleSet::taxonomy() const { return impl_->taxonomy; }
const std::string& RuleSet::origin() const { return impl_->origin; }
const std::string& RuleSet::digest() const { return impl_->digest; }
CacheOutcome RuleSet::cache_outcome() const { return impl_->cache_outcome; }
const std::filesystem::path& RuleSet::cache_file() const { return impl_->cache_file; }
const std::string& RuleSet::one_stream_reason() const { return impl_->one_stream; }

std::shared_ptr<const RuleSet> RuleSet::load_sources(const std::vector<Source>& sources,
                                                     const CacheOptions& cache) {
  // The shipped declarations are the base of every set but the shipped one,
  // which declares them itself.
  return build(detail::parse_rule_sources(sources, detail::builtin_catalog()), cache, "sources");
}

std::shared_ptr<const RuleSet> RuleSet::build(detail::ParsedRules parsed, const CacheOptions& cache,
                                              std::string origin) {
  auto impl = std::make_unique<Impl>();
  impl->origin = std::move(origin);
  impl->rules = std::move(parsed.rules);
  impl->examples_deferred = parsed.examples_deferred;
  std::size_t patterns = 0;
  for (const auto& rule : impl->rules) patterns += rule.patterns.size();
  if (patterns > kMaxPatterns)
    throw RuleError("", "", "the rule files hold " + std::to_string(patterns) + " patterns: a rule set may hold " +
                                std::to_string(kMaxPatterns) + " at most (compiling more takes minutes)");
  impl->taxonomy = std::move(parsed.catalog.taxonomy);
  for (const auto& rule : impl->rules) {
    detail::RuleExtractors compiled;
    for (const auto& e : rule.extract)
      compiled.push_back(std::make_unique<detail::Extractor>(e.name, e.regex));
    impl->extractions.push_back(std::move(compiled));
    // A frame condition is a search, not a value: wrapped in one group so the
    // extractor reports whether it matched.
    // Compiled on first use, and checked with the extractions.
    auto condition = [&](const std::string& regex, const char* name) {
      if (regex.empty()) return std::unique_ptr<detail::Extractor>();
      return std::make_unique<detail::Extractor>(name, "(" + regex + ")");
    };
    impl->frames.push_back(condition(rule.frames, "frames"));
    impl->raised_in.push_back(condition(rule.raised_in, "raised_in"));
    impl->unless.push_back(condition(rule.unless, "unless"));
  }
  if (impl->origin == "builtin" && load_embedded(*impl)) {
    impl->cache_outcome = CacheOutcome::built_in;
    return std::shared_ptr<const RuleSet>(new RuleSet(std::move(impl)));
  }
  const detail::CompilePlan plan = detail::plan_compile(impl->rules);
  impl->digest = compile_digest(plan, impl->rules);
  impl->pattern_rule = plan.pattern_rule;
  impl->confirm = plan.confirm_map;
  impl->line_local = plan.line_local;
  impl->one_stream = plan.one_stream;
  impl->line_scope = plan.line_scope;

  const bool wants_confirm = !plan.confirm.expressions.empty();
  std::filesystem::path dir = cache.dir.empty() ? detail::default_cache_dir() : cache.dir;
  // The block database of confirmed patterns is cached beside the stream one;
  // both must load, or both are compiled again.
  std::filesystem::path confirm_file;
  if (cache.enabled && !dir.empty()) {
    const std::string name = impl->digest + "-" + detail::platform_tag();
    impl->cache_file = dir / (name + ".hsdb");
    confirm_file = dir / (name + ".confirm.hsdb");
    impl->db = detail::load_cached_database(impl->cache_file, impl->digest);
    if (impl->db && wants_confirm) {
      impl->confirm_db = detail::load_cached_database(confirm_file, impl->digest);
      if (!impl->confirm_db) impl->db.reset();
    }
    if (impl->db) impl->cache_outcome = CacheOutcome::hit;
  }
  if (!impl->db) {
    detail::check_extractions(impl->rules, impl->extractions);
    check_conditions(*impl);
    auto compiled = detail::compile_plan(impl->rules, plan);
    impl->db = std::move(compiled.db);
    impl->confirm_db = std::move(compiled.confirm_db);
    if (!impl->cache_file.empty()) {
      bool stored = detail::store_cached_database(impl->cache_file, impl->digest, impl->db.get()) &&
                    (!impl->confirm_db || detail::store_cached_database(confirm_file, impl->digest,
                                                                        impl->confirm_db.get()));
      impl->cache_outcome =
          stored ? CacheOutcome::compiled_and_stored : CacheOutcome::compiled_not_stored;
      if (!stored) impl->cache_file.clear();
    }
  }
  return std::shared_ptr<const RuleSet>(new RuleSet(std::move(impl)));
}

std::size_t RuleSet::example_count() const {
  std::size_t n = 0;
  for (const auto& r : impl_->with_examples()) n += r.examples.size();
  return n;
}

std::vector<RuleSet::ExampleFailure> RuleSet::check_examples() const {
  std::vector<ExampleFailure> failures;
  const auto& rules = impl_->with_examples();
  for (unsigned r = 0; r < rules.size(); ++r) {
    for (const auto& ex : rules[r].examples) {
      HitRecorder hits;
      {
        detail::LineScanner scanner(*impl_, hits, ex.line.size() + 16);
        scanner.scan(ex.line + "\n");
        scanner.finish();
      }
      auto fail = [&](const std::string& what) {
        failures.push_back({rules[r].source, rules[r].id, what + ": " + ex.line});
      };
      const bool hit = hits.rules.count(r) > 0 && !(impl_->unless[r] && impl_->unless[r]->find(ex.line));
      if (ex.match && !hit) fail("a \"match\" example does not match");
      if (!ex.match && hit) fail("a \"no_match\" example matches");
      if (!ex.match || !hit) continue;
      const auto values = detail::extract_values(impl_->extractions[r], ex.line);
      for (const auto& [name, expected] : ex.values) {
        auto it = values.find(name);
        if (it == values.end())
          fail("extract \"" + name + "\" finds nothing (expected \"" + expected + "\")");
        else if (it->second != expected)
          fail("extract \"" + name + "\" gives \"" + it->second + "\", not \"" + expected + "\"");
      }
    }
  }
  return failures;
}

std::shared_ptr<const RuleSet> RuleSet::load_dir(const std::filesystem::path& dir,
                                                 const CacheOptions& cache) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw RuleError(dir.string(), "", "is not a directory of rule files");
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  if (ec) throw RuleError(dir.string(), "", "cannot be listed: " + ec.message());
  if (files.empty()) throw RuleError(dir.string(), "", "holds no rule files (*.json)");
  std::sort(files.begin(), files.end());
  std::vector<Source> sources;
  for (const auto& f : files) sources.push_back({f.string(), read_rule_file(f)});
  return build(detail::parse_rule_sources(sources, detail::builtin_catalog()), cache, dir.string());
}

std::shared_ptr<const RuleSet> RuleSet::builtin(const CacheOptions& cache) {
  if (const char* dir = std::getenv("GPUDIAG_RULES"); dir && *dir) return load_dir(dir, cache);
  return build(detail::builtin_rules(false), cache, "builtin");
}

}  // namespace gpudiag
