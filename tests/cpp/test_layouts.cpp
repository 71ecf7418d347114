// Patterns held to one line and blind to digits (line_form.hpp), and the
// scanner that looks whole lines up by layout (line_scanner.hpp): a line of a
// known layout gets the hits a scan of it finds.
#include <gtest/gtest.h>
#include <hs.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <thread>
#include <tuple>

#include "line_form.hpp"
#include "line_scanner.hpp"
#include "rule_set_impl.hpp"
#include "test_util.hpp"

using namespace gpudiag;
using namespace gpudiag::testing;
using gpudiag::detail::line_form;

namespace {

// A block-mode database of one expression, and the ends of its matches.
class Block {
 public:
  Block(const std::string& expression, unsigned flags) {
    hs_compile_error_t* error = nullptr;
    if (hs_compile(expression.c_str(), flags | HS_FLAG_MULTILINE, HS_MODE_BLOCK, nullptr, &db_, &error) !=
        HS_SUCCESS) {
      ADD_FAILURE() << expression << ": " << (error ? error->message : "?");
      hs_free_compile_error(error);
      return;
    }
    hs_alloc_scratch(db_, &scratch_);
  }
  ~Block() {
    hs_free_scratch(scratch_);
    hs_free_database(db_);
  }
  std::vector<unsigned long long> ends(std::string_view text) const {
    std::vector<unsigned long long> out;
    if (!db_) return out;
    auto on = [](unsigned, unsigned long long, unsigned long long to, unsigned, void* c) -> int {
      static_cast<std::vector<unsigned long long>*>(c)->push_back(to);
      return 0;
    };
    hs_scan(db_, text.data(), static_cast<unsigned>(text.size()), 0, scratch_, on, &out);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

 private:
  hs_database_t* db_ = nullptr;
  hs_scratch_t* scratch_ = nullptr;
};

struct Case {
  std::string expression;
  unsigned flags;
};

// Expressions with every kind of set the reading rewrites: \s, \W, \D, a
// negated class (caseless too, where a class written out is read
// caselessly again), `.` under dotall, digits named one by one.
const std::vector<Case> kCases = {
    {"a\\s+b", 0},
    {"x\\W*y", 0},
    {"1\\D2", 0},
    {"(?:^|[^l] |[^a-z ])ba", HS_FLAG_CASELESS},
    {"q[^c]", 0},
    {"(?i:[^l])b", 0},
    {"(?i)[^l]b(?-i)[^L]", 0},
    {"a.b", HS_FLAG_DOTALL},
    {"a.b", 0},
    {"e-(?:0[5-9]|[1-9]\\d)\\b", 0},
    {"t[^\\S\\n]*$", 0},
    {"^\\s*z", 0},
    {"L\\d{2,}", HS_FLAG_CASELESS},
    {"[\\x30-\\x32]x", 0},
    {"b[^\\d]", 0},
};

std::string random_text(std::mt19937& rng, std::size_t n) {
  static const std::string alphabet = "ablLqxyzcC 0123456789-e.\t\n\n\r:";
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += alphabet[rng() % alphabet.size()];
  return s;
}

// The ends of `expression`'s matches on each line of `text` read alone.
std::vector<unsigned long long> ends_line_by_line(const Block& b, const std::string& text) {
  std::vector<unsigned long long> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    for (const auto end : b.ends(std::string_view(text).substr(start, nl - start))) out.push_back(start + end);
    start = nl + 1;
  }
  return out;
}

}  // namespace

TEST(LineForms, MatchOnEachLineWhatTheExpressionMatchesThereAlone) {
  std::mt19937 rng(3);
  std::size_t matches = 0;
  for (const Case& c : kCases) {
    const detail::LineForm f = line_form(c.expression, c.flags);
    ASSERT_TRUE(f.understood) << c.expression;
    const Block original(c.expression, c.flags), exact(f.exact, c.flags);
    for (int round = 0; round < 300; ++round) {
      const std::string text = random_text(rng, rng() % 80);
      const auto want = ends_line_by_line(original, text);
      ASSERT_EQ(exact.ends(text), want) << c.expression << " -> " << f.exact << " on [" << text << "]";
      matches += want.size();
    }
  }
  EXPECT_GT(matches, 1000u);
}

// Random expressions of every construct the reading follows: where
// Hyperscan compiles one as written, it compiles its line-held form and
// skeleton too, and the line-held form matches on each line what the
// expression matches on that line alone, the skeleton at least that.
TEST(LineForms, RandomExpressionsKeepTheirMatchesOnEachLine) {
  std::mt19937 rng(41);
  const std::vector<std::string> atoms = {"a", "b", "l", "L", "0", "7", "\\d", "\\D", "\\s", "\\S", "\\w",
                                          "\\W", ".", "[^a]", "[a-c7]", "[^\\d ]", "[\\s,]", "[^l]", "\\x41",
                                          "\\.", "\\b", "-", ":", " ", "\\t", "[0-5]", "[^\\n]"};
  const std::vector<std::string> quantifiers = {"", "", "", "*", "+", "?", "{2}", "{1,3}", "*?"};
  std::function<std::string(int)> expression = [&](int depth) {
    std::string e;
    for (std::size_t i = 0, n = 1 + rng() % 4; i < n; ++i) {
      if (depth < 2 && rng() % 5 == 0) {
        e.append(rng() % 3 == 0 ? "(?i:" : "(?:").append(expression(depth + 1));
        if (rng() % 2) e.append("|").append(expression(depth + 1));
        e.append(")");
      } else {
        e.append(atoms[rng() % atoms.size()]);
      }
      e.append(quantifiers[rng() % quantifiers.size()]);
    }
    return e;
  };
  std::size_t compiled = 0, matches = 0;
  for (int i = 0; i < 400; ++i) {
    // Ending in a character, it matches no empty text (which Hyperscan
    // reports where a pattern anchored at a line's start allows it).
    static const char* const kLast[] = {"a", "b", "l", "L", "0", "7", ":", "[^a]", "\\d", "\\W", "."};
    std::string e = rng() % 4 == 0 ? "^" : "";
    e.append(expression(0)).append(kLast[rng() % std::size(kLast)]).append(rng() % 4 == 0 ? "$" : "");
    const unsigned flags = (rng() % 3 == 0 ? HS_FLAG_CASELESS : 0) | (rng() % 4 == 0 ? HS_FLAG_DOTALL : 0);
    hs_database_t* db = nullptr;
    hs_compile_error_t* error = nullptr;
    if (hs_compile(e.c_str(), flags | HS_FLAG_MULTILINE, HS_MODE_BLOCK, nullptr, &db, &error) != HS_SUCCESS) {
      hs_free_compile_error(error);
      continue;  // not a pattern Hyperscan takes as written
    }
    hs_free_database(db);
    const detail::LineForm f = line_form(e, flags);
    ASSERT_TRUE(f.understood) << e << ": " << f.problem;
    ++compiled;
    const Block original(e, flags), exact(f.exact, flags), skeleton(f.skeleton, flags);
    for (int round = 0; round < 40; ++round) {
      const std::string text = random_text(rng, rng() % 60);
      const auto want = ends_line_by_line(original, text);
      ASSERT_EQ(exact.ends(text), want) << e << " -> " << f.exact << " on [" << text << "]";
      const auto wider = skeleton.ends(text);
      for (const auto end : want) ASSERT_TRUE(std::binary_search(wider.begin(), wider.end(), end)) << f.skeleton;
      matches += want.size();
    }
  }
  EXPECT_GT(compiled, 150u);
  EXPECT_GT(matches, 1000u);
  // Whether an expression can match an empty text, as Hyperscan says it
  // (its minimum width), is what the reading says.
  std::size_t empty = 0;
  for (int i = 0; i < 400; ++i) {
    std::string e = rng() % 2 ? "^" : "";
    e.append(expression(0)).append(rng() % 4 == 0 ? "$" : "");
    hs_expr_info_t* info = nullptr;
    hs_compile_error_t* error = nullptr;
    if (hs_expression_info(e.c_str(), HS_FLAG_MULTILINE, &info, &error) != HS_SUCCESS) {
      hs_free_compile_error(error);
      continue;
    }
    const bool min_zero = info->min_width == 0;
    std::free(info);
    empty += min_zero;
    EXPECT_EQ(line_form(e, 0).problem == "it can match an empty text", min_zero) << e;
  }
  EXPECT_GT(empty, 40u);
}

TEST(LineForms, SkeletonsTakeEveryDigitAlikeAndFindEveryMatch) {
  std::mt19937 rng(5);
  for (const Case& c : kCases) {
    const detail::LineForm f = line_form(c.expression, c.flags);
    const Block exact(f.exact, c.flags), skeleton(f.skeleton, c.flags);
    for (int round = 0; round < 300; ++round) {
      const std::string text = random_text(rng, rng() % 80);
      std::string other = text;  // the same layout: every digit another
      for (char& ch : other)
        if (ch >= '0' && ch <= '9') ch = static_cast<char>('0' + rng() % 10);
      const auto found = skeleton.ends(text);
      ASSERT_EQ(skeleton.ends(other), found) << f.skeleton << " on [" << text << "] and [" << other << "]";
      for (const auto end : exact.ends(text))
        ASSERT_TRUE(std::binary_search(found.begin(), found.end(), end)) << f.skeleton << " on [" << text << "]";
    }
  }
  EXPECT_TRUE(line_form("a\\d+b[0-9]\\w", 0).digit_blind());
  EXPECT_FALSE(line_form("Errno 12", 0).digit_blind());
  EXPECT_FALSE(line_form("[^0]", 0).digit_blind());
}

TEST(LineForms, WhatTheReadingDoesNotFollowIsSaid) {
  // Patterns that can match an empty text (Hyperscan reports empty matches
  // where a line starts, which belong to no line).
  for (const char* e : {"^a?", "^(?:a|)", "^(?:ab)*", "^x{0,2}", "a*$", "^(?:a?b?)+"})
    EXPECT_EQ(line_form(e, 0).problem, "it can match an empty text") << e;
  for (const char* e : {"^a", "^(?:a|b)", "a+", "^x{1,2}", "a*b", "^(?:a?b)+", "(?:a*)b", "a*?b", "x{0}y"})
    EXPECT_TRUE(line_form(e, 0).understood) << e;
  for (const char* e : {"\\p{L}", "a(?=b)", "\\Q1\\E", "(a)\\1", "\\Aa", "a\\z", "(?x) a", "[[:digit:]]", "a\nb",
                        "a)", "[a", "\\R", "\\h", "\\x"})
    EXPECT_FALSE(line_form(e, 0).understood) << e;
  EXPECT_FALSE(line_form("a", HS_FLAG_UTF8).understood);
  EXPECT_TRUE(line_form("(?i:a)(?:b|c{2,3})\\b\\.\\x41[\\]a-]", 0).understood);
}

TEST(LineForms, TheShippedRulesAreHeldToLines) {
  EXPECT_TRUE(RuleSet::builtin(CacheOptions{false, {}})->impl().line_local);
  // Compiled from their files, not carried compiled, the same.
  EXPECT_TRUE(RuleSet::load_dir(GPUDIAG_RULES_DIR, CacheOptions{false, {}})->impl().line_local);
}

namespace {

// Everything a sink is told of a hit.
using Hit = std::tuple<std::uint64_t, unsigned, std::uint64_t, std::string, bool, std::string>;

class Recorder : public detail::MatchSink {
 public:
  void on_hit(const detail::LineHit& h) override {
    hits.emplace_back(h.line, h.rule, h.offset, std::string(h.text), h.truncated, std::string(h.full));
  }
  std::vector<Hit> hits;
};

// The hits of one scan of `log`, cut into pieces as Stream cuts them (at the
// last newline within `chunk`, or `chunk` bytes of a longer line).
std::vector<Hit> scan(const RuleSet& rules, const std::string& log, std::size_t chunk, bool by_layout) {
  Recorder r;
  {
    detail::LineScanner s(rules.impl(), r, 200, by_layout);
    std::string_view rest(log);
    while (!rest.empty()) {
      std::string_view window = rest.substr(0, chunk);
      const std::size_t nl = window.rfind('\n');
      const std::size_t n = nl != std::string_view::npos ? nl + 1 : window.size();
      s.scan(rest.substr(0, n));
      rest.remove_prefix(n);
    }
    s.finish();
  }
  // Hits on one line in the order of their match ends: a pattern found by
  // its skeleton ends where the skeleton's match ends.
  std::sort(r.hits.begin(), r.hits.end());
  return r.hits;
}

// Lines the shipped rules were written for: their examples, some with other
// digits, CRLF endings, prefixes, and lines too long for the text cap.
std::vector<std::string> example_lines(const RuleSet& rules, std::mt19937& rng) {
  std::vector<std::string> lines;
  for (const auto& rule : rules.impl().with_examples())
    for (const auto& ex : rule.examples) lines.push_back(ex.line);
  const std::size_t n = lines.size();
  for (std::size_t i = 0; i < n; ++i) {
    std::string other = lines[i];
    for (char& ch : other)
      if (ch >= '0' && ch <= '9') ch = static_cast<char>('0' + rng() % 10);
    lines.push_back(other);
    if (i % 5 == 0) lines.push_back("[rank" + std::to_string(i % 8) + "]: " + lines[i]);
    if (i % 7 == 0) lines.push_back(lines[i] + "\r");
    if (i % 11 == 0) lines.push_back(std::string(300, 'x') + " " + lines[i] + " " + std::string(100, 'y'));
  }
  return lines;
}


// The shipped rules as one stream, as they were read before layouts: with
// a rule the layout reading does not follow (and no example line matches).
std::shared_ptr<const RuleSet> shipped_as_one_stream(const TempDir& dir) {
  for (const auto& f : std::filesystem::directory_iterator(GPUDIAG_RULES_DIR))
    std::filesystem::copy_file(f.path(), dir.path() / f.path().filename());
  write_file(dir.path() / "99-unicode.json", R"({"rules": [
    {"id": "zz.unicode", "class": "segfault", "patterns": [{"regex": "caf\u00e9 au lait", "flags": ["utf8"]}]}
  ]})");
  auto rules = RuleSet::load_dir(dir.path(), CacheOptions{false, {}});
  EXPECT_FALSE(rules->impl().line_local);
  return rules;
}

// What each line of `log` gets scanned alone, as one stream, where it lies.
std::vector<Hit> line_by_line(const RuleSet& rules, const std::string& log) {
  std::map<std::string, std::vector<Hit>> alone;
  std::vector<Hit> out;
  std::uint64_t number = 1, offset = 0;
  while (offset < log.size()) {
    std::size_t nl = log.find('\n', offset);
    const bool last = nl == std::string::npos;
    if (last) nl = log.size();
    const std::string line = log.substr(offset, nl - offset) + (last ? "" : "\n");
    auto [it, added] = alone.try_emplace(line);
    if (added) it->second = scan(rules, line, 1 << 20, false);
    for (Hit h : it->second) {
      std::get<0>(h) = number;
      std::get<2>(h) = offset;
      out.push_back(h);
    }
    ++number;
    offset = nl + 1;
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(Layouts, LinesOfAKnownLayoutGetTheHitsAScanOfThemFinds) {
  const auto rules = RuleSet::builtin(CacheOptions{false, {}});
  TempDir dir;
  const auto one_stream = shipped_as_one_stream(dir);
  std::mt19937 rng(17);
  const std::vector<std::string> lines = example_lines(*rules, rng);
  std::size_t hits = 0;
  for (int round = 0; round < 12; ++round) {
    std::string log;
    // Lines drawn again and again (known layouts), and some never seen.
    for (int i = 0; i < 3000; ++i) {
      if (rng() % 20 == 0) log += "unique line " + std::string(1 + rng() % 40, static_cast<char>('a' + rng() % 26));
      else log += lines[rng() % lines.size()];
      log += '\n';
    }
    if (round % 2) log += lines[rng() % lines.size()];  // no final newline
    const std::size_t chunk = round < 4 ? 1 << 20 : 64 + rng() % 4096;
    const auto found = scan(*rules, log, chunk, true);
    // Whole lines: each as the rules read it alone, written as they were.
    if (chunk == 1 << 20) {
      ASSERT_EQ(found, line_by_line(*one_stream, log)) << "round " << round;
    }
    // Lines cut into pieces too: as the same rules find them in one stream.
    ASSERT_EQ(found, scan(*rules, log, chunk, false)) << "round " << round << ", chunk " << chunk;
    hits += found.size();
  }
  EXPECT_GT(hits, 10000u);
}

TEST(Layouts, ManyLayoutsMoreThanTheCacheHolds) {
  const auto rules = RuleSet::builtin(CacheOptions{false, {}});
  std::string log;
  std::mt19937 rng(19);
  for (int i = 0; i < 40000; ++i) {
    std::string word(4 + rng() % 8, 'a');
    for (char& c : word) c = static_cast<char>('a' + rng() % 26);
    log += (i % 3 ? "RuntimeError: " : "loss " + std::to_string(i) + " ") + word + "\n";
  }
  EXPECT_EQ(scan(*rules, log, 1 << 20, true), scan(*rules, log, 1 << 20, false));
  // New lines amid known ones (scanned with them), in stretches and alone,
  // then a stretch scanned as it comes, then known lines again.
  std::string mixed;
  for (int i = 0; i < 30000; ++i) {
    std::string word(4 + rng() % 8, 'a');
    for (char& c : word) c = static_cast<char>('a' + rng() % 26);
    const bool repeated = i < 10000 ? i % 2 == 0 : i < 20000 ? i % 7 < 3 : i > 25000;
    mixed += repeated ? (i % 4 ? "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
                               : "step " + std::to_string(i) + " loss 2.5 lr 0.1\n")
                      : "note " + word + " Killed " + word + "\n";
  }
  const auto found = scan(*rules, mixed, 1 << 20, true);
  EXPECT_EQ(found, scan(*rules, mixed, 1 << 20, false));
  EXPECT_GT(found.size(), 20000u);
}

// A log's first piece learns its layouts as it goes: a run of new lines is
// scanned, its layouts kept, a few dozen lines at a time, so the lines of a
// handful of layouts after them are handed their hits without a scan (a run
// that went on to the piece's end had the whole first megabyte scanned).
TEST(Layouts, TheFirstPieceOfALogLearnsItsLayoutsAsItGoes) {
  const auto rules = RuleSet::builtin(CacheOptions{false, {}});
  std::string log;
  for (int i = 0; i < 5000; ++i) {
    const std::string n = std::to_string(1000 + i);
    switch (i % 4) {
      case 0: log += "{'loss': 2." + n + ", 'learning_rate': 1e-05, 'epoch': 0." + n.substr(2) + "}\n"; break;
      case 1: log += "host:1" + n + ":2" + n + " [3] NCCL INFO Channel 0" + n.substr(3) + "/0 : 3[3] -> 4[4] via P2P/IPC\n"; break;
      case 2: log += " iteration " + n + "/ 50000 | lm loss: 2." + n + "E+00 | grad norm: 0." + n + " |\n"; break;
      default: log += "UserWarning: checkpoint.py:" + n + ": use_reentrant should be passed explicitly\n";
    }
  }
  ASSERT_LT(log.size(), std::size_t{1} << 20);  // one piece
  // On a thread of its own: no layout known before.
  std::uint64_t replayed = 0;
  std::vector<Hit> found;
  std::thread([&] {
    Recorder r;
    detail::LineScanner s(rules->impl(), r, 200, true);
    s.scan(log);
    s.finish();
    replayed = s.replayed();
    found = std::move(r.hits);
  }).join();
  std::sort(found.begin(), found.end());
  EXPECT_EQ(found, scan(*rules, log, 1 << 20, false));
  EXPECT_GT(found.size(), 2000u);
  EXPECT_GT(replayed, 4500u);
}

TEST(Layouts, AMatchNeverCrossesALine) {
  TempDir dir;
  write_file(dir.path() / "r.json", R"({"rules": [
    {"id": "lost", "class": "node_failure", "patterns": ["Reason:\\s+NodeLost"]}
  ]})");
  const auto rules = RuleSet::load_dir(dir.path(), CacheOptions{false, {}});
  ASSERT_TRUE(rules->impl().line_local);
  EXPECT_TRUE(scan(*rules, "Reason:\nNodeLost\n", 1 << 20, true).empty());
  EXPECT_TRUE(scan(*rules, "Reason:\nNodeLost\n", 1 << 20, false).empty());
  EXPECT_EQ(scan(*rules, "x\nReason: \tNodeLost\n", 1 << 20, true).size(), 1u);
}

TEST(Layouts, ARuleSetWithAPatternNotFollowedIsScannedAsOneStream) {
  TempDir dir;
  write_file(dir.path() / "r.json", R"({"rules": [
    {"id": "lost", "class": "node_failure", "patterns": ["Reason:\\s+NodeLost"]},
    {"id": "unicode", "class": "segfault", "patterns": [{"regex": "caf\u00e9", "flags": ["utf8"]}]}
  ]})");
  const auto rules = RuleSet::load_dir(dir.path(), CacheOptions{false, {}});
  EXPECT_FALSE(rules->impl().line_local);
  EXPECT_EQ(rules->one_stream_reason(), "rule unicode, pattern 1 /caf\u00e9/: the utf8 or ucp flag");
  EXPECT_TRUE(RuleSet::builtin(CacheOptions{false, {}})->one_stream_reason().empty());
  // As before there were layouts: the match ends on the second line.
  const auto hits = scan(*rules, "Reason:\nNodeLost\n", 1 << 20, true);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(std::get<0>(hits[0]), 2u);
}

// The cache is the thread's, for the rule set it scanned last: two rule sets
// with the same patterns under other ids, scanned in turn on one thread, each
// get what a fresh thread gets.
TEST(Layouts, RuleSetsScannedInTurnOnAThreadKeepTheirOwnHits) {
  TempDir a, b;
  write_file(a.path() / "r.json", R"({"rules": [
    {"id": "needle", "class": "segfault", "patterns": ["NEEDLE \\d+"]},
    {"id": "pin", "class": "bus_error", "patterns": ["PIN"]}
  ]})");
  write_file(b.path() / "r.json", R"({"rules": [
    {"id": "pin", "class": "bus_error", "patterns": ["PIN"]},
    {"id": "needle", "class": "segfault", "patterns": ["NEEDLE \\d+"]}
  ]})");
  const auto first = RuleSet::load_dir(a.path(), CacheOptions{false, {}});
  const auto second = RuleSet::load_dir(b.path(), CacheOptions{false, {}});
  const std::string log = "x NEEDLE 1 y\nPIN 2\nx NEEDLE 7 y\n";
  std::vector<Hit> fresh_first, fresh_second;
  std::thread([&] { fresh_first = scan(*first, log, 1 << 20, true); }).join();
  std::thread([&] { fresh_second = scan(*second, log, 1 << 20, true); }).join();
  ASSERT_EQ(fresh_first.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(scan(*first, log, 1 << 20, true), fresh_first);
    EXPECT_EQ(scan(*second, log, 1 << 20, true), fresh_second);
  }
}

// A known line is compared with its layout by AVX2 where the CPU has it and
// by SSE2 elsewhere: both say what a byte-by-byte comparison says, for lines
// of every length (a block, a block and a tail, a tail alone) with a
// difference anywhere or none, digits where the layout has '0' or not.
TEST(Layouts, BothComparisonsOfALineWithALayoutAgree) {
  std::mt19937 rng(23);
  const std::string alphabet = "0123456789 .:/-abcXYZ_[]\t0";
  std::size_t differing = 0;
  for (int round = 0; round < 20000; ++round) {
    const std::size_t size = rng() % 200;
    std::string line(size, ' ');
    for (char& c : line) c = alphabet[rng() % alphabet.size()];
    std::string layout = line;
    for (char& c : layout)
      if (c >= '0' && c <= '9') c = '0';
    if (size > 0 && rng() % 2) {
      // One byte off: another character, or a digit where the layout holds
      // a non-digit.
      const std::size_t at = rng() % size;
      line[at] = rng() % 2 ? static_cast<char>('0' + rng() % 10) : alphabet[rng() % alphabet.size()];
    }
    bool want = true;
    for (std::size_t i = 0; i < size; ++i)
      if ((line[i] >= '0' && line[i] <= '9' ? '0' : line[i]) != layout[i]) want = false;
    differing += !want;
    EXPECT_EQ(detail::has_layout(line.data(), layout.data(), size), want) << line;
    EXPECT_EQ(detail::has_layout(line.data(), layout.data(), size, true), want) << line;
  }
  EXPECT_GT(differing, 5000u);
}
