#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "builtin_rules.hpp"
#include "db_cache.hpp"
#include "gpudiag/rules.hpp"
#include "gpudiag/version.hpp"
#include "hash.hpp"
#include "rule_compiler.hpp"
#include "rule_loader.hpp"
#include "rule_set_impl.hpp"

namespace gpudiag {
namespace {

// Bump when the meaning of a compiled database changes (flags, modes, ids).
constexpr std::uint64_t kCompileSchema = 1;

std::string rules_digest(const std::vector<RuleSet::Source>& sources) {
  detail::Fnv1a a, b(0x84222325cbf29ce4ULL);
  for (auto* h : {&a, &b}) {
    h->update(version());
    h->update(hyperscan_version());
    h->update_u64(kCompileSchema);
    for (const auto& s : sources) {
      h->update_u64(s.text.size());
      h->update(s.text);
    }
  }
  return detail::to_hex(a.value()) + detail::to_hex(b.value());
}

std::string read_rule_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RuleError(path.string(), "", "cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

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
  }
  return "cause";
}

std::string_view to_string(CacheOutcome outcome) {
  switch (outcome) {
    case CacheOutcome::disabled: return "disabled";
    case CacheOutcome::hit: return "hit";
    case CacheOutcome::compiled_and_stored: return "compiled and stored";
    case CacheOutcome::compiled_not_stored: return "compiled, not stored";
  }
  return "disabled";
}

RuleError::RuleError(std::string file, std::string rule_id, std::string problem)
    : std::runtime_error((file.empty() ? std::string("rules") : file) +
                         (rule_id.empty() ? std::string() : ": rule " + rule_id) + ": " +
                         problem),
      file_(std::move(file)),
      rule_id_(std::move(rule_id)),
      problem_(std::move(problem)) {}

RuleSet::RuleSet(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RuleSet::~RuleSet() = default;

const std::vector<Rule>& RuleSet::rules() const { return impl_->rules; }
const std::string& RuleSet::origin() const { return impl_->origin; }
const std::string& RuleSet::digest() const { return impl_->digest; }
CacheOutcome RuleSet::cache_outcome() const { return impl_->cache_outcome; }
const std::filesystem::path& RuleSet::cache_file() const { return impl_->cache_file; }

std::shared_ptr<const RuleSet> RuleSet::load_sources(const std::vector<Source>& sources,
                                                     const CacheOptions& cache) {
  return build(sources, cache, "sources");
}

std::shared_ptr<const RuleSet> RuleSet::build(const std::vector<Source>& sources,
                                              const CacheOptions& cache, std::string origin) {
  auto impl = std::make_unique<Impl>();
  impl->origin = std::move(origin);
  impl->rules = detail::parse_rule_sources(sources);
  impl->digest = rules_digest(sources);
  for (const auto& rule : impl->rules) {
    std::vector<CompiledExtraction> compiled;
    for (const auto& e : rule.extract)
      compiled.push_back({e.name, std::make_unique<LazyRegex>(e.regex)});
    impl->extractions.push_back(std::move(compiled));
  }

  std::filesystem::path dir = cache.dir.empty() ? detail::default_cache_dir() : cache.dir;
  impl->confirm = detail::confirm_map(impl->rules);
  const bool wants_confirm =
      std::find(impl->confirm.begin(), impl->confirm.end(), 1) != impl->confirm.end();
  // The block database of confirmed patterns is cached beside the stream one;
  // both must load, or both are compiled again.
  std::filesystem::path confirm_file;
  if (cache.enabled && !dir.empty()) {
    impl->cache_file = dir / (impl->digest + ".hsdb");
    confirm_file = dir / (impl->digest + ".confirm.hsdb");
    impl->db = detail::load_cached_database(impl->cache_file, impl->digest);
    if (impl->db && wants_confirm) {
      impl->confirm_db = detail::load_cached_database(confirm_file, impl->digest);
      if (!impl->confirm_db) impl->db.reset();
    }
    if (impl->db) {
      impl->pattern_rule = detail::pattern_rule_map(impl->rules);
      impl->cache_outcome = CacheOutcome::hit;
    }
  }
  if (!impl->db) {
    detail::check_extractions(impl->rules);
    auto compiled = detail::compile_rules(impl->rules);
    impl->db = std::move(compiled.db);
    impl->confirm_db = std::move(compiled.confirm_db);
    impl->pattern_rule = std::move(compiled.pattern_rule);
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
  return build(sources, cache, dir.string());
}

std::shared_ptr<const RuleSet> RuleSet::builtin(const CacheOptions& cache) {
  if (const char* dir = std::getenv("GPUDIAG_RULES"); dir && *dir) return load_dir(dir, cache);
  std::vector<Source> sources;
  for (const auto& s : detail::builtin_rule_sources())
    sources.push_back({std::string(s.name), std::string(s.text)});
  return build(sources, cache, "builtin");
}

}  // namespace gpudiag
