#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "builtin_rules.hpp"
#include "embedded_database.hpp"
#include "rule_compiler.hpp"
#include "rule_loader.hpp"
#include "rule_set_impl.hpp"
#include "rule_snapshot.hpp"
#include "test_util.hpp"

using namespace gpudiag;
using namespace gpudiag::detail;

namespace {

ParsedRules parsed_from_json() {
  std::vector<RuleSet::Source> sources;
  for (const auto& s : builtin_rule_sources()) sources.push_back({std::string(s.name), std::string(s.text)});
  return parse_rule_sources(sources, Catalog{});
}

// A rule set whose every field holds something other than its default, with
// the values a codec gets wrong: empty and long strings, a NUL byte, negative
// numbers, the last value of each enum.
ParsedRules unusual() {
  ParsedRules p;
  ClassInfo c;
  c.id = "x";
  c.family = std::string(300, 'f');
  c.owner = std::string("a\0b", 3);
  c.g15 = "generic";
  c.title = c.cause = c.action = c.rerun = c.rerun_note = c.cannot_decide = c.description = "t";
  c.exit_signals = {9, 15};
  c.exit_codes = {-1, 2, 255, 1 << 30};
  c.signal_exit_cascade = c.signal_exit_stop = c.survivable = c.stall = c.stop = c.resume_failure = true;
  c.tier = Tier::wrapper;
  c.outcome = Outcome::undetermined;
  c.max_steps = 0.25;
  c.source = "s.json";
  p.catalog.taxonomy.classes = {c, ClassInfo{}};
  p.catalog.taxonomy.families = {{"f", "F"}};
  p.catalog.taxonomy.g15 = {"a", ""};
  p.catalog.defines = {{"d", "\\d+"}, {"", ""}};
  Rule r;
  r.id = "x.one";
  r.cls = "x";
  r.g15 = "generic";
  r.role = Role::straggler_report;
  r.cascade = true;
  r.severity = Severity::fatal;
  r.frames = "f";
  r.raised_in = "r";
  r.phase = "training";
  r.unless = "u";
  r.patterns = {{"boom", {"caseless", "line_start"}, "bo"}, {"b", {}, ""}};
  r.extract = {{"n", "(\\d+)"}};
  r.examples = {{"boom 1", true, {{"n", "1"}}}, {"no", false, {}}};
  r.description = std::string(70000, 'd');
  r.source = "10-x.json";
  p.rules = {r, Rule{}};
  return p;
}

}  // namespace

TEST(RuleSnapshot, TheLibraryCarriesTheShippedRuleFilesAsParsedAndPlanned) {
  ASSERT_FALSE(embedded_database().rules.empty());
  const ParsedRules json = parsed_from_json();
  const ParsedRules carried = builtin_rules();
  ASSERT_EQ(carried.rules.size(), json.rules.size());
  for (std::size_t i = 0; i < json.rules.size(); ++i)
    EXPECT_TRUE(carried.rules[i] == json.rules[i]) << json.rules[i].id;
  ASSERT_EQ(carried.catalog.taxonomy.classes.size(), json.catalog.taxonomy.classes.size());
  for (std::size_t i = 0; i < json.catalog.taxonomy.classes.size(); ++i)
    EXPECT_TRUE(carried.catalog.taxonomy.classes[i] == json.catalog.taxonomy.classes[i])
        << json.catalog.taxonomy.classes[i].id;
  EXPECT_TRUE(carried.catalog == json.catalog);
  EXPECT_TRUE(builtin_catalog() == json.catalog);
  // What the library loads by default is what it carries.
  const auto builtin = RuleSet::builtin(CacheOptions{false, {}});
  EXPECT_TRUE(builtin->rules() == json.rules);
  EXPECT_TRUE(builtin->taxonomy() == json.catalog.taxonomy);
  EXPECT_TRUE(taxonomy() == json.catalog.taxonomy);
  EXPECT_EQ(builtin->cache_outcome(), CacheOutcome::built_in);
  // Its databases are the images the library carries, used where they lie.
  EXPECT_EQ(static_cast<const void*>(builtin->impl().db.get()), embedded_database().stream.data());
  // And the compile plan's tables it carries are the plan of those rules.
  const CompilePlan plan = plan_compile(json.rules);
  EXPECT_EQ(builtin->impl().pattern_rule, plan.pattern_rule);
  EXPECT_EQ(builtin->impl().confirm, plan.confirm_map);
}

TEST(RuleSnapshot, ACarriedDatabaseIsCheckedAsItsScratchIsAllocated) {
  // The check the library relies on before using a carried image in place:
  // Hyperscan refuses scratch for a database whose bytes were changed.
  const std::string_view image = embedded_database().stream;
  struct alignas(64) Line {
    char b[64];
  };
  std::vector<Line> copy((image.size() + 63) / 64);
  char* bytes = reinterpret_cast<char*>(copy.data());
  std::memcpy(bytes, image.data(), image.size());
  auto* db = reinterpret_cast<hs_database_t*>(bytes);
  {
    SpareScratch spare;
    ASSERT_TRUE(spare.allocate(db, nullptr));
    const auto [scan, confirm] = spare.take();
    EXPECT_NE(scan, nullptr);
    EXPECT_EQ(confirm, nullptr);
    EXPECT_EQ(spare.take().first, nullptr);  // taken once
    hs_free_scratch(scan);
  }
  bytes[image.size() / 2] ^= 0x5a;
  SpareScratch spare;
  EXPECT_FALSE(spare.allocate(db, nullptr));
  EXPECT_EQ(spare.take().first, nullptr);
}

TEST(RuleSnapshot, EveryFieldReadsBackAsWritten) {
  const ParsedRules p = unusual();
  const std::string bytes = write_snapshot(p);
  const ParsedRules back = read_snapshot(bytes);
  EXPECT_TRUE(back == p);
  EXPECT_TRUE(read_snapshot_catalog(bytes) == p.catalog);
  // Each field is written: changing any one changes the bytes.
  ParsedRules q = p;
  q.rules[0].examples[0].values[0].second = "2";
  EXPECT_NE(write_snapshot(q), bytes);
  q = p;
  q.catalog.taxonomy.classes[0].max_steps.reset();
  EXPECT_NE(write_snapshot(q), bytes);
}

TEST(RuleSnapshot, TheExamplesAreReadOnlyWhenAskedFor) {
  const ParsedRules p = unusual();
  const std::string bytes = write_snapshot(p);
  ParsedRules head = read_snapshot_rules(bytes);
  EXPECT_TRUE(head.examples_deferred);
  ASSERT_EQ(head.rules.size(), p.rules.size());
  EXPECT_TRUE(head.rules[0].examples.empty());
  read_snapshot_examples(bytes, head.rules);
  head.examples_deferred = false;
  EXPECT_TRUE(head == p);
  std::vector<Rule> fewer(1);
  EXPECT_THROW(read_snapshot_examples(bytes, fewer), std::runtime_error);

  // The shipped rules load without them; the first look at the rules reads
  // them, and they are those of the rule files.
  const auto builtin = RuleSet::builtin(CacheOptions{false, {}});
  EXPECT_TRUE(builtin->impl().examples_deferred);
  std::size_t unread = 0;
  for (const Rule& r : builtin->impl().rules) unread += r.examples.size();
  EXPECT_EQ(unread, 0u);
  const ParsedRules json = parsed_from_json();
  std::size_t in_files = 0;
  for (const Rule& r : json.rules) in_files += r.examples.size();
  EXPECT_GT(in_files, 0u);
  EXPECT_EQ(builtin->example_count(), in_files);
  EXPECT_TRUE(builtin->impl().rules == json.rules);
  EXPECT_TRUE(builtin->check_examples().empty());
}

TEST(RuleSnapshot, OtherBytesAreRefusedNotRead) {
  const std::string bytes = write_snapshot(unusual());
  // Every cut of it, and it with a byte more, is refused with a reason.
  for (std::size_t n = 0; n < bytes.size(); n += (n < 4096 ? 1 : 97)) {
    try {
      read_snapshot(std::string_view(bytes).substr(0, n));
      ADD_FAILURE() << "a snapshot cut to " << n << " bytes was read";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("not a rule snapshot"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(read_snapshot(bytes + "x"), std::runtime_error);
  EXPECT_THROW(read_snapshot("{\"rules\": []}"), std::runtime_error);
  // A count far past the end is refused before anything is allocated for it.
  std::string huge = write_snapshot(ParsedRules{});
  huge.resize(huge.size() - 1);  // the rule count, 0
  huge += "\xff\xff\xff\xff\xff\xff\xff\xff\x7f";
  EXPECT_THROW(read_snapshot(huge), std::runtime_error);
}
