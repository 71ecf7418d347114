#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpudiag/taxonomy.hpp"

namespace gpudiag {
namespace detail {
struct ParsedRules;
}

// What a rule's match means for the resolver.
enum class Role {
  cause,       // evidence of why the run failed
  context,     // worth quoting, decides nothing alone
  progress,    // training advanced
  completion,  // the run finished normally
  resume,      // the run loaded a checkpoint
  resume_request,  // the run was asked to resume from a checkpoint
  launcher_report, // a line of the launcher's failure summary, read per failed rank
  // A launcher's or shell's report of a process's exit status: the class is
  // the one whose card claims the signal (extract "exit_code" or "signal").
  exit_status,
  frame,  // a Python traceback's frame line: read into the traceback it belongs to
  // A Python traceback's first line, or a chained exception's banner: where
  // the exception's event begins.
  traceback_start,
  warning,    // a Python warning's first line: the line after it continues it
  plan,       // the run's planned length (extract "epochs" or "steps")
  milestone,  // how far the run got ("epochs", "steps", and "of" when the line states the total)
  // A checkpoint's name that carries the run's global step (extract "step",
  // and "place", the directory, where the line names it).
  checkpoint_name,
  // A line that shows the run's setup slowing every step (synchronous kernel
  // launches, collectives over TCP sockets): a `throughput` finding whose
  // reason is the rule id's last part. No class.
  throughput,
  checkpoint_save,  // a checkpoint was written: many, one per step or so, make a save storm
  // A report of the fastest and the slowest rank's step time (extract
  // `fastest`, `fastest_rank`, `slowest`, `slowest_rank`): the slowest far
  // behind makes a `throughput` finding named after the rule id's last part.
  straggler_report,  // the last role: tests read every role up to it
};
std::string_view to_string(Role role);

// How grave a line says it is, as its logging prefix states it (NCCL INFO or
// WARN, glog I/W/E/F, Python logging levels, "UserWarning:"). `unknown`: the
// line states none, as a traceback or a bare print does.
enum class Severity { unknown, debug, info, warning, error, fatal };
std::string_view to_string(Severity severity);

struct Pattern {
  std::string regex;
  std::vector<std::string> flags;  // caseless, dotall, ucp, utf8, line_start
  // A cheaper regex that every line `regex` matches also matches: the scan
  // looks for it, and the lines it hits are confirmed against `regex`.
  std::string prefilter;

  bool operator==(const Pattern&) const = default;
};

// A named value pulled from a matched line by a regex (PCRE syntax, like the
// patterns) with exactly one capture group, or a group named after the value.
struct Extraction {
  std::string name;
  std::string regex;

  bool operator==(const Extraction&) const = default;
};

// A line a rule must match (with the values it must extract) or must not.
struct Example {
  std::string line;
  bool match = true;
  std::vector<std::pair<std::string, std::string>> values;  // name, expected value

  bool operator==(const Example&) const = default;
};

struct Rule {
  std::string id;
  std::string cls;   // fine class id; empty for an exit_status rule (decided per line)
  std::string g15;   // projection: the rule's override or the class default
  Role role = Role::cause;
  // A cause that is usually the consequence of a failure elsewhere (a peer
  // rank dying, a launcher reaping its workers): any other cause outranks it.
  bool cascade = false;
  // A cause rule's line is a cause only at this severity or above, or when
  // the line states none; below it (an INFO line naming an error, a caught
  // exception logged as a warning) it is context.
  Severity severity = Severity::error;
  // Conditions on the exception a cause line closes (see TracebackReader):
  // one of its traceback's frames ("path in function") matches `frames`, a
  // PCRE regex; the frame that raised it (the innermost) matches `raised_in`;
  // `phase` is "setup" (training had not begun: no loss reading came before
  // the line, and the traceback passes through no frame of a training step)
  // or "training". Empty: no condition. On a frame rule, "training" says its
  // frames are a training step's (an optimisation step, a backward pass).
  std::string frames;
  std::string raised_in;
  std::string phase;
  // A line the patterns matched that also matches this PCRE regex is not the
  // rule's (a more specific rule reads it): Sigma's filter.
  std::string unless;
  std::vector<Pattern> patterns;
  std::vector<Extraction> extract;
  std::vector<Example> examples;
  std::string description;
  std::string source;  // file the rule came from

  bool operator==(const Rule&) const = default;
};

// A rule file that could not be loaded: names the file, what in it (a rule,
// a class, a define) and the problem.
class RuleError : public std::runtime_error {
 public:
  // `entity` is "rule <id>", "class <id>", "define <name>" or empty.
  RuleError(std::string file, std::string entity, std::string problem);
  const std::string& file() const { return file_; }
  const std::string& entity() const { return entity_; }
  std::string rule_id() const;  // the id when the entity is a rule, else empty
  const std::string& problem() const { return problem_; }

 private:
  std::string file_, entity_, problem_;
};

struct CacheOptions {
  bool enabled = true;
  // Empty: $GPUDIAG_CACHE_DIR, else $XDG_CACHE_HOME/gpudiag, else ~/.cache/gpudiag.
  std::filesystem::path dir;
};

// How the compiled database was obtained; useful to tests and `rules check`.
// built_in: the shipped rules' databases, compiled into the library when it
// was built (used where this CPU can run them; the cache otherwise).
enum class CacheOutcome { disabled, hit, compiled_and_stored, compiled_not_stored, built_in };
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
  // The shipped classes plus those the rule files declare.
  const Taxonomy& taxonomy() const;
  const std::string& origin() const;  // directory or "builtin"
  // Hex key of everything that makes the compiled database: the expressions
  // and flags handed to Hyperscan, the extractions, the library and
  // Hyperscan versions. It names the cache file.
  const std::string& digest() const;
  CacheOutcome cache_outcome() const;
  const std::filesystem::path& cache_file() const;  // empty when not cached
  // Why logs are scanned as one stream rather than whole lines looked up by
  // their layout (README, Scanning): the first pattern that could not be held
  // to one line, and what in it. Empty where lines are looked up.
  const std::string& one_stream_reason() const;

  // Runs every rule's examples; an empty result means they all pass.
  struct ExampleFailure {
    std::string file, rule_id;
    std::string problem;  // what went wrong, quoting the line
  };
  std::vector<ExampleFailure> check_examples() const;
  std::size_t example_count() const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit RuleSet(std::unique_ptr<Impl> impl);
  static std::shared_ptr<const RuleSet> build(detail::ParsedRules parsed, const CacheOptions& cache,
                                              std::string origin);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpudiag
