#include <gtest/gtest.h>

#include <chrono>

#include <set>

#include "extractor.hpp"
#include "test_util.hpp"

using namespace gpudiag;
using namespace gpudiag::testing;

namespace {

const char* kGoodRule = R"({"id": "x.one", "class": "segfault", "patterns": ["boom"]})";

std::string file_with(const std::string& rules) { return "{\"rules\": [" + rules + "]}"; }

// Loads `json` as the only file of a fresh directory and returns the error.
RuleError load_error(const std::string& json, const std::string& name = "10-test.json") {
  TempDir dir;
  write_file(dir.path() / name, json);
  try {
    RuleSet::load_dir(dir.path(), CacheOptions{false, {}});
  } catch (const RuleError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a RuleError for " << json;
  return RuleError("", "", "");
}

}  // namespace

TEST(Rules, ShippedRulesLoadInFileOrderWithUniqueIds) {
  auto rules = shipped_rules();
  ASSERT_GT(rules->rules().size(), 15u);
  std::set<std::string> ids;
  for (const auto& r : rules->rules()) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    if (r.role == Role::cause || r.role == Role::context) {
      EXPECT_NE(rules->taxonomy().find(r.cls), nullptr) << r.id;
    }
    EXPECT_TRUE(r.cls.empty() || r.g15 == "generic" || rules->taxonomy().is_g15(r.g15)) << r.id;
  }
  // Priority across files follows file names: GPU rules before exceptions.
  auto pos = [&](const std::string& id) {
    for (std::size_t i = 0; i < rules->rules().size(); ++i)
      if (rules->rules()[i].id == id) return i;
    return std::size_t(-1);
  };
  EXPECT_LT(pos("cuda_oom.allocator"), pos("runtime_error.exception"));
  EXPECT_LT(pos("runtime_error.exception"), pos("traceback.uncaught"));
}

TEST(Rules, EveryG15ClassHasACauseRule) {
  std::set<std::string> projected;
  for (const auto& r : shipped_rules()->rules())
    if (r.role == Role::cause) projected.insert(r.g15);
  for (const auto& c : shipped_rules()->taxonomy().g15) EXPECT_TRUE(projected.count(c)) << c;
}

TEST(Rules, BuiltinRulesAreTheSourceTreeRules) {
  auto builtin = RuleSet::builtin(CacheOptions{false, {}});
  ASSERT_EQ(builtin->origin(), "builtin");
  ASSERT_EQ(builtin->rules().size(), shipped_rules()->rules().size());
  for (std::size_t i = 0; i < builtin->rules().size(); ++i)
    EXPECT_EQ(builtin->rules()[i].id, shipped_rules()->rules()[i].id);
  EXPECT_EQ(builtin->digest(), shipped_rules()->digest());
}

TEST(Rules, DefaultsAndOverrides) {
  TempDir dir;
  write_file(dir.path() / "a.json",
             file_with(R"({"id": "a", "class": "env_error", "g15": "runtime_error", "patterns": ["x"]},
                          {"id": "b", "class": "env_error", "patterns": [{"regex": "y", "flags": ["caseless"]}], "role": "context"})"));
  auto set = RuleSet::load_dir(dir.path(), CacheOptions{false, {}});
  ASSERT_EQ(set->rules().size(), 2u);
  EXPECT_EQ(set->rules()[0].g15, "runtime_error");
  EXPECT_EQ(set->rules()[1].g15, "missing_module");  // the class default
  EXPECT_EQ(set->rules()[1].role, Role::context);
  EXPECT_EQ(set->rules()[1].patterns[0].flags, std::vector<std::string>{"caseless"});
  EXPECT_EQ(set->origin(), dir.path().string());
}

TEST(RuleErrors, InvalidJsonNamesTheFile) {
  auto e = load_error("{\"rules\": [", "20-broken.json");
  EXPECT_NE(e.file().find("20-broken.json"), std::string::npos);
  EXPECT_NE(e.problem().find("not valid JSON"), std::string::npos);
}

TEST(RuleErrors, MissingIdNamesThePosition) {
  auto e = load_error(file_with(std::string(kGoodRule) + R"(, {"class": "segfault", "patterns": ["x"]})"));
  EXPECT_EQ(e.rule_id(), "#2");
  EXPECT_NE(e.problem().find("missing \"id\""), std::string::npos);
}

TEST(RuleErrors, EachProblemIsNamed) {
  struct Case {
    const char* rule;
    const char* problem;
  } cases[] = {
      {R"({"id": "r", "class": "no_such_class", "patterns": ["x"]})", "unknown class"},
      {R"({"id": "r", "patterns": ["x"]})", "missing \"class\""},
      {R"({"id": "r", "class": "segfault"})", "missing \"patterns\""},
      {R"({"id": "r", "class": "segfault", "patterns": []})", "is empty"},
      {R"({"id": "r", "class": "segfault", "patterns": [""]})", "empty"},
      {R"({"id": "r", "class": "segfault", "patterns": [3]})", "string or an object"},
      {R"({"id": "r", "class": "segfault", "role": "maybe", "patterns": ["x"]})", "unknown role"},
      {R"({"id": "r", "class": "segfault", "g15": "bogus", "patterns": ["x"]})", "unknown g15 class"},
      {R"({"id": "r", "class": "segfault", "patterns": [{"regex": "x", "flags": ["loud"]}]})", "unknown flag"},
      {R"({"id": "r", "class": "segfault", "patterns": ["x"], "extract": {"v": "("}})", "not a valid regex"},
      {R"({"id": "r", "class": "segfault", "patterns": ["x"], "extract": {"v": "abc"}})", "capture group"},
      {R"({"id": "r", "class": "segfault", "patterns": ["x"], "colour": "red"})", "unknown field \"colour\""},
      {R"({"id": "r", "class": "segfault", "role": "completion", "patterns": ["x"]})", "whose outcome is completed"},
      {R"({"id": "r", "class": "healthy", "patterns": ["x"]})", "its outcome is completed"},
      {R"({"id": "r", "class": "unknown", "patterns": ["x"]})", "no rule can conclude"},
      {R"x({"id": "r", "class": "segfault", "patterns": ["x"], "extract": {"v": "(a)|(b)"}})x", "has 2 capture groups"},
      {R"({"id": "r", "class": "segfault", "patterns": ["{{nowhere}}"]})", "which no \"define\" declares"},
      {R"({"id": "r", "role": "exit_status", "patterns": ["x"]})", "must extract \"exit_code\" or \"signal\""},
      {R"({"id": "r", "class": "segfault", "patterns": ["x"], "examples": {"match": [3]}})", "each \"match\" example"},
      {R"({"id": "r", "class": "segfault", "patterns": ["x"], "phase": "later"})", "unknown phase"},
      {R"({"id": "r", "class": "segfault", "patterns": ["x"], "severity": "loud"})", "unknown severity"},
      {R"({"id": "r", "role": "frame", "patterns": ["x"], "raised_in": "y"})", "only a cause rule"},
      {R"({"id": "r", "class": "segfault", "patterns": ["x"], "frames": "(a"})", "\"frames\" is not a regex"},
      {R"x({"id": "r", "class": "segfault", "patterns": ["x"], "unless": "(a)"})x", "\"unless\" is not a regex without capture groups"},
      {R"({"id": "r", "class": "segfault", "role": "throughput", "patterns": ["x"]})", "a throughput rule has no \"class\""},
      {R"x({"id": "r", "role": "straggler_report", "patterns": ["x"], "extract": {"fastest": "(x)"}})x",
       "must extract \"fastest_rank\""},
  };
  for (const auto& c : cases) {
    auto e = load_error(file_with(c.rule));
    EXPECT_EQ(e.rule_id(), "r") << c.rule;
    EXPECT_NE(e.problem().find(c.problem), std::string::npos)
        << c.rule << " gave: " << e.what();
  }
}

TEST(RuleErrors, ABadConditionIsRejectedWithTheCacheOnToo) {
  // Conditions are compiled on first use and checked only when the set is
  // compiled: a set with a bad one must never be stored and found again.
  TempDir rules, cache;
  write_file(rules.path() / "10-test.json",
             file_with(R"({"id": "r", "class": "segfault", "patterns": ["x"], "raised_in": "(a"})"));
  for (int load = 0; load < 2; ++load)
    EXPECT_THROW(RuleSet::load_dir(rules.path(), CacheOptions{true, cache.path()}), RuleError) << load;
}

TEST(RuleErrors, BadPatternCarriesHyperscansMessage) {
  auto e = load_error(file_with(std::string(kGoodRule) +
                                R"(, {"id": "bad.pattern", "class": "nccl", "patterns": ["ok", "(unclosed"]})"));
  EXPECT_EQ(e.rule_id(), "bad.pattern");
  EXPECT_NE(e.file().find("10-test.json"), std::string::npos);
  EXPECT_NE(e.problem().find("pattern 2 /(unclosed/"), std::string::npos) << e.what();
  EXPECT_NE(e.problem().find("Missing close parenthesis"), std::string::npos) << e.what();

  auto p = load_error(file_with(std::string(kGoodRule) + R"(, {"id": "bad.prefilter", "class": "nccl",
      "patterns": [{"regex": "disk full", "prefilter": "disk(", "flags": ["line_start"]}]})"));
  EXPECT_EQ(p.rule_id(), "bad.prefilter");
  EXPECT_NE(p.problem().find("the prefilter of pattern 1 /disk(/"), std::string::npos) << p.what();
}

TEST(RuleErrors, DuplicateIdAcrossFilesNamesTheSecondFile) {
  TempDir dir;
  write_file(dir.path() / "10-a.json", file_with(kGoodRule));
  write_file(dir.path() / "20-b.json", file_with(kGoodRule));
  try {
    RuleSet::load_dir(dir.path(), CacheOptions{false, {}});
    FAIL() << "duplicate id accepted";
  } catch (const RuleError& e) {
    EXPECT_NE(e.file().find("20-b.json"), std::string::npos);
    EXPECT_EQ(e.rule_id(), "x.one");
    EXPECT_NE(e.problem().find("duplicate"), std::string::npos);
  }
}

TEST(RuleErrors, MissingOrEmptyDirectory) {
  TempDir dir;
  EXPECT_THROW(RuleSet::load_dir(dir.path() / "nope", CacheOptions{false, {}}), RuleError);
  try {
    RuleSet::load_dir(dir.path(), CacheOptions{false, {}});
    FAIL();
  } catch (const RuleError& e) {
    EXPECT_NE(std::string(e.what()).find("no rule files"), std::string::npos) << e.what();
  }
}

TEST(RuleErrors, TopLevelShape) {
  EXPECT_NE(load_error("[1, 2]").problem().find("top level must be an object"), std::string::npos);
  EXPECT_NE(load_error("{\"ruels\": []}").problem().find("unknown top-level field"), std::string::npos);
  EXPECT_NE(load_error("{\"rules\": {}}").problem().find("must be an array"), std::string::npos);
}

// Sigma-style: every shipped rule carries lines it must match and lines it
// must not, and they all hold.
TEST(Rules, ShippedRulesCarryExamplesThatPass) {
  auto rules = shipped_rules();
  for (const auto& r : rules->rules()) {
    std::size_t match = 0, no_match = 0;
    for (const auto& ex : r.examples) (ex.match ? match : no_match) += 1;
    EXPECT_GE(match, 1u) << r.id;
    EXPECT_GE(no_match, 1u) << r.id;
  }
  for (const auto& f : rules->check_examples())
    ADD_FAILURE() << f.file << ": rule " << f.rule_id << ": " << f.problem;
}

TEST(Rules, FailingExamplesAreNamed) {
  TempDir dir;
  write_file(dir.path() / "10-x.json", file_with(R"x({"id": "x", "class": "segfault",
      "patterns": ["core (dumped)"], "extract": {"what": "core (\\w+)"},
      "examples": {"match": [{"line": "core dumped", "values": {"what": "saved"}}, "nothing here"],
                   "no_match": ["core dumped again"]}})x"));
  auto set = RuleSet::load_dir(dir.path(), CacheOptions{false, {}});
  auto failures = set->check_examples();
  ASSERT_EQ(failures.size(), 3u);
  EXPECT_EQ(failures[0].rule_id, "x");
  EXPECT_NE(failures[0].problem.find("gives \"dumped\", not \"saved\""), std::string::npos) << failures[0].problem;
  EXPECT_NE(failures[1].problem.find("does not match: nothing here"), std::string::npos) << failures[1].problem;
  EXPECT_NE(failures[2].problem.find("\"no_match\" example matches"), std::string::npos) << failures[2].problem;
}

// A new plain pattern class is one rules file: its card, its rule and the
// rule's examples. The shipped classes stay known beside it.
TEST(Rules, ASiteRulesDirectoryAddsAClass) {
  TempDir dir;
  write_file(dir.path() / "50-site.json", R"({
    "families": [{"id": "storage", "title": "Storage"}],
    "classes": [{"id": "disk_full", "family": "storage", "owner": "infra", "g15": "generic",
                 "title": "disk full", "cause": "a file system the job writes to ran out of space",
                 "action": "free space or write elsewhere", "rerun": "maybe",
                 "rerun_note": "once space is freed", "cannot_decide": "which file system filled up"}],
    "define": {"errno_enospc": "\\[Errno 28\\]"},
    "rules": [{"id": "site.disk_full", "class": "disk_full",
               "patterns": ["{{errno_enospc}} No space left on device"],
               "extract": {"path": "device: '([^']+)'"},
               "examples": {"match": [{"line": "OSError: [Errno 28] No space left on device: '/ckpt/step_900'",
                                       "values": {"path": "/ckpt/step_900"}}],
                            "no_match": ["df: 28% used"]}}]})");
  auto set = RuleSet::load_dir(dir.path(), CacheOptions{false, {}});
  EXPECT_TRUE(set->check_examples().empty());
  ASSERT_NE(set->taxonomy().find("disk_full"), nullptr);
  EXPECT_NE(set->taxonomy().find("cuda_oom"), nullptr);  // the shipped taxonomy is still known
  Diagnosis d = diagnose_bytes(set, "step 900 | loss 2.1\nOSError: [Errno 28] No space left on device: '/ckpt/step_900'\n");
  EXPECT_EQ(d.cls, "disk_full");
  EXPECT_EQ(d.title, "disk full");
  EXPECT_EQ(d.owner, "infra");
  EXPECT_EQ(d.family, "storage");
  EXPECT_EQ(d.evidence.at(0).values.at("path"), "/ckpt/step_900");
  EXPECT_NE(d.verdict.implies.at(0).find("ran out of space"), std::string::npos);
  EXPECT_NE(d.verdict.implies.at(2).find("maybe: once space is freed"), std::string::npos);
}

TEST(RuleErrors, ClassCardsAreValidated) {
  auto card = [](const std::string& extra) {
    return R"({"classes": [{"id": "c1", "family": "cluster", "owner": "infra", "g15": "generic",
               "title": "t", "cause": "c", "action": "a", "rerun": "no", "cannot_decide": "d")" +
           extra + "}], " + R"("rules": [{"id": "r", "class": "c1", "patterns": ["x"]}]})";
  };
  struct Case {
    std::string json;
    const char* problem;
  } cases[] = {
      {card(R"(, "owner": "nobody")"), "unknown owner"},
      {card(R"(, "family": "kitchen")"), "unknown family"},
      {card(R"(, "behaviour": {"outcome": "completed"})"), "already has outcome"},
      {card(R"(, "behaviour": {"exit_signals": [9]})"), "already points to another class"},
      {card(R"(, "behaviour": {"exit_signals": [99]})"), "signal numbers from 1 to 64"},
      {card(R"(, "behaviour": {"max_steps": 3})"), "goes with outcome"},
      {card(R"(, "colour": "red")"), "unknown field"},
  };
  for (const auto& c : cases) {
    auto e = load_error(c.json);
    EXPECT_EQ(e.entity(), "class c1") << c.json;
    EXPECT_NE(e.problem().find(c.problem), std::string::npos) << c.json << " gave: " << e.what();
  }
}

TEST(RuleErrors, ARegexThatBacktracksCatastrophicallyIsBounded) {
  // An `unless` filter or extraction that backtracks without end on a line
  // gives up there, as no match: 2,000 such lines took 35 s before the step
  // limit, and take well under a second with it.
  TempDir dir;
  write_file(dir.path() / "r.json", R"({"rules": [{"id": "x.slow", "class": "segfault", "patterns": ["aaaa"],
      "unless": "(?:(?:a|aa)+)+$", "extract": {"v": "((?:(?:a|aa)+)+)$"}}]})");
  const auto rules = RuleSet::load_dir(dir.path(), CacheOptions{false, {}});
  std::string log;
  for (int i = 0; i < 2000; ++i) log += std::string(28, 'a') + "!\n";
  const auto start = std::chrono::steady_clock::now();
  const Diagnosis d = diagnose_bytes(rules, log);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(d.cls, "segfault");  // the filter gave up: the hit stands
  EXPECT_LT(seconds, 5.0);
}

TEST(Rules, AnExtractionReadsTheSameInterpretedAndCompiled) {
  // The first matches of an extraction are interpreted, the later ones run
  // JIT-compiled code: both read the same value out of the same line.
  const detail::Extractor plain("n", "Tried to allocate ([0-9.]+ [KMGT]?i?B)");
  const detail::Extractor named("v", "(?:x=(?<v>\\d+)|y=(?<v>[a-z]+))");
  std::vector<std::string> lines;
  for (int i = 0; i < 40; ++i) {
    lines.push_back("Tried to allocate " + std::to_string(i * 7) + "." + std::to_string(i) + " MiB");
    lines.push_back(i % 2 ? "x=" + std::to_string(i) : "y=" + std::string(1 + i % 5, 'q'));
    lines.push_back("no value here " + std::to_string(i));
  }
  auto read = [&] {
    std::vector<std::optional<std::string>> out;
    for (const auto& line : lines) {
      out.push_back(plain.find(line));
      out.push_back(named.find(line));
    }
    return out;
  };
  const auto first = read();  // 120 lines: past the interpreted ones
  EXPECT_EQ(first[0], "0.0 MiB");
  EXPECT_EQ(first[3], "q");
  EXPECT_EQ(first[5], std::nullopt);
  for (int pass = 0; pass < 3; ++pass) EXPECT_EQ(read(), first);
}

TEST(RuleErrors, SetsTooLargeToCompileInTimeAreRefused) {
  // Hyperscan took nine minutes over 200,000 patterns: past 10,000 a set is
  // refused with the count, and a file past 16 MiB before it is read.
  std::string rules;
  for (int i = 0; i <= 10'000; ++i)
    rules += std::string(i ? "," : "") + R"({"id": "x.r)" + std::to_string(i) + R"(", "class": "segfault", "patterns": ["boom )" +
             std::to_string(i) + R"("]})";
  auto e = load_error(file_with(rules));
  EXPECT_NE(std::string(e.what()).find("hold 10001 patterns: a rule set may hold 10000 at most"), std::string::npos)
      << e.what();
  auto big = load_error(std::string(17u << 20, ' '));
  EXPECT_NE(std::string(big.what()).find("10-test.json: is 17 MiB: a rule file may be 16 MiB at most"), std::string::npos)
      << big.what();
}
