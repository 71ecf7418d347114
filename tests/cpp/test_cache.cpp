#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "db_cache.hpp"
#include "test_util.hpp"

using namespace gpudiag;
using namespace gpudiag::testing;

namespace {

const char* kRules = R"({"rules": [{"id": "a", "class": "segfault", "patterns": ["boom"]}]})";

std::shared_ptr<const RuleSet> load(const TempDir& rules, const std::filesystem::path& cache) {
  return RuleSet::load_dir(rules.path(), CacheOptions{true, cache});
}

bool still_works(const std::shared_ptr<const RuleSet>& set) {
  return diagnose_bytes(set, "x\nboom\n").cls == "segfault";
}

}  // namespace

TEST(Cache, StoredThenReused) {
  TempDir rules, cache;
  write_file(rules.path() / "r.json", kRules);
  auto first = load(rules, cache.path());
  EXPECT_EQ(first->cache_outcome(), CacheOutcome::compiled_and_stored);
  ASSERT_TRUE(std::filesystem::exists(first->cache_file()));
  EXPECT_EQ(first->cache_file().parent_path(), cache.path());
  auto second = load(rules, cache.path());
  EXPECT_EQ(second->cache_outcome(), CacheOutcome::hit);
  EXPECT_TRUE(still_works(second));
}

TEST(Cache, ConfirmDatabaseIsCachedBesideTheStreamOne) {
  TempDir rules, cache;
  write_file(rules.path() / "r.json", R"({"rules": [{"id": "a", "class": "segfault", "patterns": [
      {"regex": "boom", "flags": ["line_start"]}]}]})");
  auto first = load(rules, cache.path());
  EXPECT_EQ(first->cache_outcome(), CacheOutcome::compiled_and_stored);
  auto confirm_file = first->cache_file();
  confirm_file.replace_extension(".confirm.hsdb");
  ASSERT_TRUE(std::filesystem::exists(confirm_file));
  auto second = load(rules, cache.path());
  EXPECT_EQ(second->cache_outcome(), CacheOutcome::hit);
  EXPECT_TRUE(still_works(second));
  EXPECT_NE(diagnose_bytes(second, "no boom here\n").cls, "segfault");
  // Either half missing means both are compiled again.
  std::filesystem::remove(confirm_file);
  auto third = load(rules, cache.path());
  EXPECT_EQ(third->cache_outcome(), CacheOutcome::compiled_and_stored);
  EXPECT_TRUE(still_works(third));
  EXPECT_TRUE(std::filesystem::exists(confirm_file));
}

TEST(Cache, CorruptFileIsRebuiltNotTrusted) {
  TempDir rules, cache;
  write_file(rules.path() / "r.json", kRules);
  auto first = load(rules, cache.path());
  const auto file = first->cache_file();
  std::string bytes = read_file(file);
  ASSERT_GT(bytes.size(), 100u);

  std::string flipped = bytes;
  flipped[bytes.size() - 20] ^= 0x5a;  // inside the serialized database
  write_file(file, flipped);
  auto rebuilt = load(rules, cache.path());
  EXPECT_EQ(rebuilt->cache_outcome(), CacheOutcome::compiled_and_stored);
  EXPECT_TRUE(still_works(rebuilt));
  EXPECT_EQ(read_file(file), bytes);  // rewritten whole

  write_file(file, bytes.substr(0, bytes.size() / 2));  // truncated
  EXPECT_EQ(load(rules, cache.path())->cache_outcome(), CacheOutcome::compiled_and_stored);
  write_file(file, "");
  EXPECT_EQ(load(rules, cache.path())->cache_outcome(), CacheOutcome::compiled_and_stored);
  write_file(file, bytes + "trailing");
  EXPECT_EQ(load(rules, cache.path())->cache_outcome(), CacheOutcome::compiled_and_stored);
  EXPECT_EQ(load(rules, cache.path())->cache_outcome(), CacheOutcome::hit);
}

TEST(Cache, ChangedRulesGetANewKey) {
  TempDir rules, cache;
  write_file(rules.path() / "r.json", kRules);
  auto before = load(rules, cache.path());
  write_file(rules.path() / "r.json",
             R"({"rules": [{"id": "a", "class": "segfault", "patterns": ["bang"]}]})");
  auto after = load(rules, cache.path());
  EXPECT_NE(before->digest(), after->digest());
  EXPECT_EQ(after->cache_outcome(), CacheOutcome::compiled_and_stored);
  EXPECT_EQ(diagnose_bytes(after, "bang\n").cls, "segfault");
  EXPECT_EQ(diagnose_bytes(after, "boom\n").cls, "unknown");
}

TEST(Cache, StaleFileUnderTheRightNameIsRejected) {
  // A database stored for other rules, renamed to this rule set's file name.
  TempDir rules_a, rules_b, cache;
  write_file(rules_a.path() / "r.json", kRules);
  write_file(rules_b.path() / "r.json",
             R"({"rules": [{"id": "a", "class": "segfault", "patterns": ["other"]}]})");
  auto a = load(rules_a, cache.path());
  auto b = load(rules_b, cache.path());
  std::filesystem::copy_file(b->cache_file(), a->cache_file(),
                             std::filesystem::copy_options::overwrite_existing);
  auto again = load(rules_a, cache.path());
  EXPECT_EQ(again->cache_outcome(), CacheOutcome::compiled_and_stored);
  EXPECT_TRUE(still_works(again));
}

TEST(Cache, UnwritableDirectoryIsHarmless) {
  TempDir rules, scratch;
  write_file(rules.path() / "r.json", kRules);
  write_file(scratch.path() / "a-file", "x");
  // A directory cannot be created under a regular file, even by root.
  auto set = load(rules, scratch.path() / "a-file" / "cache");
  EXPECT_EQ(set->cache_outcome(), CacheOutcome::compiled_not_stored);
  EXPECT_TRUE(set->cache_file().empty());
  EXPECT_TRUE(still_works(set));
}

TEST(Cache, DisabledAndEnvironmentOverride) {
  TempDir rules, cache;
  write_file(rules.path() / "r.json", kRules);
  EXPECT_EQ(RuleSet::load_dir(rules.path(), CacheOptions{false, {}})->cache_outcome(), CacheOutcome::disabled);
  ::setenv("GPUDIAG_CACHE_DIR", cache.path().c_str(), 1);
  auto set = RuleSet::load_dir(rules.path());
  ::unsetenv("GPUDIAG_CACHE_DIR");
  EXPECT_EQ(set->cache_file().parent_path(), cache.path());
}

// The cache key is derived from what is compiled: a flag that changes how a
// pattern is confirmed (a compile input, not a constant bumped by hand) gives
// a new key, and the database is rebuilt, not served stale.
TEST(Cache, KeyFollowsWhatIsCompiled) {
  TempDir cache;
  CacheOptions options{true, cache.path()};
  auto with_flags = [&](const std::string& flags) {
    return std::vector<RuleSet::Source>{
        {"10-r.json", R"({"rules": [{"id": "r", "class": "segfault", "patterns": [{"regex": "boom", "flags": [)" +
                          flags + "]}]}]}"}};
  };
  auto a = RuleSet::load_sources(with_flags(""), options);
  auto again = RuleSet::load_sources(with_flags(""), options);
  auto b = RuleSet::load_sources(with_flags(R"("line_start")"), options);
  EXPECT_EQ(a->cache_outcome(), CacheOutcome::compiled_and_stored);
  EXPECT_EQ(again->cache_outcome(), CacheOutcome::hit);
  EXPECT_NE(a->digest(), b->digest());
  EXPECT_EQ(b->cache_outcome(), CacheOutcome::compiled_and_stored);
  // The two databases really differ: only b wants "boom" to start the message.
  EXPECT_EQ(diagnose_bytes(a, "a boom\n").cls, "segfault");
  EXPECT_EQ(diagnose_bytes(b, "a boom\n").cls, "unknown");
  EXPECT_EQ(diagnose_bytes(b, "[rank1]: boom\n").cls, "segfault");
  // A description or an example changes nothing that is compiled.
  auto described = RuleSet::load_sources(
      {{"10-r.json", R"({"description": "same rules", "rules": [{"id": "r", "class": "segfault", "patterns": [{"regex": "boom", "flags": []}]}]})"}},
      options);
  EXPECT_EQ(described->digest(), a->digest());
}

TEST(Cache, ShippedRulesComeCompiledWithTheLibrary) {
  // Their databases are compiled when the library is built: the first run on
  // a machine compiles nothing and writes no cache.
  TempDir cache;
  const auto dir = cache.path() / "never-made";
  auto shipped = RuleSet::builtin(CacheOptions{true, dir});
  EXPECT_EQ(shipped->cache_outcome(), CacheOutcome::built_in);
  EXPECT_TRUE(shipped->cache_file().empty());
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_EQ(diagnose_bytes(shipped, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n").cls,
            "cuda_oom");
}

TEST(Cache, FilesUnusedForAMonthArePrunedWhenAnotherIsStored) {
  // Every change of the rules or of gpudiag leaves its files: a store removes
  // those not used for 30 days; a file read from keeps its place.
  TempDir rules, cache;
  write_file(rules.path() / "r.json", kRules);
  const auto month_ago = std::filesystem::file_time_type::clock::now() - std::chrono::hours(24 * 31);
  const auto stale = cache.path() / "0123456789abcdef0123456789abcdef-t0f0.hsdb";
  const auto killed = cache.path() / "0123456789abcdef0123456789abcdef-t0f0.hsdb.tmp.4242";
  const auto other = cache.path() / "notes.txt";
  for (const auto& f : {stale, killed, other}) {
    write_file(f, "x");
    std::filesystem::last_write_time(f, month_ago);
  }
  auto first = load(rules, cache.path());
  EXPECT_EQ(first->cache_outcome(), CacheOutcome::compiled_and_stored);
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_FALSE(std::filesystem::exists(killed));
  EXPECT_TRUE(std::filesystem::exists(other));  // not the cache's: never touched
  // A file last written a month ago but read today is moved on, and spared.
  std::filesystem::last_write_time(first->cache_file(), month_ago);
  EXPECT_EQ(load(rules, cache.path())->cache_outcome(), CacheOutcome::hit);
  EXPECT_GT(std::filesystem::last_write_time(first->cache_file()), month_ago + std::chrono::hours(24));
  detail::prune_cache(cache.path());
  EXPECT_TRUE(std::filesystem::exists(first->cache_file()));
}
