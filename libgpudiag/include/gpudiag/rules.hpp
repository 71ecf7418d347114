#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpudiag {

// What a rule's match means for the resolver.
enum class Role {
  cause,       // evidence of why the run failed
  context,     // worth quoting, decides nothing alone
  progress,    // training advanced
  completion,  // the run finished normally
  resume,      // the run loaded a checkpoint
  resume_request,  // the run was asked to resume from a checkpoint
  launcher_report, // a line of the launcher's failure summary, read per failed rank
};
std::string_view to_string(Role role);

struct Pattern {
  std::string regex;
  std::vector<std::string> flags;  // caseless, dotall, ucp, utf8, line_start
  // A cheaper regex that every line `regex` matches also matches: the scan
  // looks for it, and the lines it hits are confirmed against `regex`.
  std::string prefilter;
};

// A named value pulled from a matched line by an ECMAScript regex whose first
// capture group is the value.
struct Extraction {
  std::string name;
  std::string regex;
};

struct Rule {
  std::string id;
  std::string cls;   // fine class id
  std::string g15;   // projection: the rule's override or the class default
  Role role = Role::cause;
  // A cause that is usually the consequence of a failure elsewhere (a peer
  // rank dying, a launcher reaping its workers): any other cause outranks it.
  bool cascade = false;
  std::vector<Pattern> patterns;
  std::vector<Extraction> extract;
  std::string description;
  std::string source;  // file the rule came from
};

// A rule file that could not be loaded: names the file, the rule and the problem.
class RuleError : public std::runtime_error {
 public:
  RuleError(std::string file, std::string rule_id, std::string problem);
  const std::string& file() const { return file_; }
  const std::string& rule_id() const { return rule_id_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string file_, rule_id_, problem_;
};

struct CacheOptions {
  bool enabled = true;
  // Empty: $GPUDIAG_CACHE_DIR, else $XDG_CACHE_HOME/gpudiag, else ~/.cache/gpudiag.
  std::filesystem::path dir;
};

// How the compiled database was obtained; useful to tests and `rules check`.
enum class CacheOutcome { disabled, hit, compiled_and_stored, compiled_not_stored };
std::string_view to_string(CacheOutcome outcome);

// An ordered, validated, compiled set of rules. Order is priority: earlier wins.
// Immutable once loaded and safe to share between threads.
class RuleSet {
 public:
  // The rules shipped inside the library (rules/*.json at build time), unless
  // $GPUDIAG_RULES names a directory to use instead.
  static std::shared_ptr<const RuleSet> builtin(const CacheOptions& cache = {});
  // Every *.json file of `dir`, in file-name order.
  static std::shared_ptr<const RuleSet> load_dir(const std::filesystem::path& dir,
                                                 const CacheOptions& cache = {});
  struct Source {
    std::string name;
    std::string text;
  };
  static std::shared_ptr<const RuleSet> load_sources(const std::vector<Source>& sources,
                                                     const CacheOptions& cache = {});

  ~RuleSet();
  RuleSet(const RuleSet&) = delete;
  RuleSet& operator=(const RuleSet&) = delete;

  const std::vector<Rule>& rules() const;
  const std::string& origin() const;  // directory or "builtin"
  const std::string& digest() const;  // hex key of rules + library version
  CacheOutcome cache_outcome() const;
  const std::filesystem::path& cache_file() const;  // empty when not cached

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit RuleSet(std::unique_ptr<Impl> impl);
  static std::shared_ptr<const RuleSet> build(const std::vector<Source>& sources,
                                              const CacheOptions& cache, std::string origin);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpudiag
