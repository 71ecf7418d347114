#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <random>
#include <thread>

#include "counter_reader.hpp"
#include "exit_status_reader.hpp"
#include "file_reader.hpp"
#include "launcher_report_reader.hpp"
#include "rule_compiler.hpp"
#include "traceback_reader.hpp"
#include "trajectory_builder.hpp"

#include "test_util.hpp"

using namespace gpudiag;
using namespace gpudiag::testing;

namespace {

// A rule set whose rules are easy to reason about in scanner tests.
std::shared_ptr<const RuleSet> scanner_rules() {
  static std::shared_ptr<const RuleSet> rules = [] {
    TempDir dir;
    write_file(dir.path() / "r.json", R"({"rules": [
      {"id": "needle", "class": "segfault", "patterns": ["NEEDLE"]},
      {"id": "killed_line", "class": "oom_killer", "patterns": ["^Killed\\s*$"]},
      {"id": "straddle", "class": "bus_error", "patterns": ["abcdefghij0123456789"]},
      {"id": "marker", "class": "healthy", "role": "completion", "patterns": ["all done"]},
      {"id": "fatal", "class": "runtime_error", "patterns": [{"regex": "Fatal: ", "flags": ["line_start"]}]},
      {"id": "disk", "class": "file_not_found", "patterns": [{"regex": "disk (?:full|gone)\\b", "prefilter": "disk "}]}
    ]})");
    return RuleSet::load_dir(dir.path(), CacheOptions{false, {}});
  }();
  return rules;
}

Diagnosis scan(const std::string& log, std::size_t chunk = 1 << 20, std::size_t write_size = 0) {
  DiagnoseOptions o;
  o.chunk_size = chunk;
  Stream s(scanner_rules(), o);
  if (write_size == 0) write_size = log.size() + 1;
  for (std::size_t i = 0; i < log.size(); i += write_size) s.write(std::string_view(log).substr(i, write_size));
  return s.finish();
}

const Evidence* find(const Diagnosis& d, const std::string& rule) {
  for (const auto& e : d.evidence)
    if (e.rule == rule) return &e;
  for (const auto& f : d.findings)
    if (f.evidence && f.evidence->rule == rule) return &*f.evidence;
  return nullptr;
}

std::string numbered_log(int lines, int needle_at) {
  std::string log;
  for (int i = 1; i <= lines; ++i)
    log += i == needle_at ? "x NEEDLE y\n" : "line " + std::to_string(i) + " of filler text\n";
  return log;
}

}  // namespace

TEST(Scanner, LineNumberOffsetAndText) {
  std::string log = "first\nsecond line\nthe NEEDLE here\nlast\n";
  Diagnosis d = scan(log);
  const Evidence* e = find(d, "needle");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->line, 3u);
  EXPECT_EQ(e->offset, log.find("the NEEDLE"));
  EXPECT_EQ(e->text, "the NEEDLE here");
  EXPECT_FALSE(e->truncated);
  EXPECT_EQ(d.lines, 4u);
  EXPECT_EQ(d.bytes, log.size());
}

TEST(Scanner, CountsFirstAndMatchingLinesOnce) {
  Diagnosis d = scan("NEEDLE NEEDLE\nno\nNEEDLE\n");
  const Evidence* e = find(d, "needle");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->line, 1u);
  EXPECT_EQ(e->count, 2u);  // lines, not matches
}

TEST(Scanner, SameEvidenceWhateverTheChunkAndWriteSizes) {
  const std::string log = numbered_log(300, 257);
  Diagnosis whole = scan(log);
  const Evidence* ref = find(whole, "needle");
  ASSERT_NE(ref, nullptr);
  for (std::size_t chunk : {64u, 65u, 100u, 127u, 333u, 4096u}) {
    for (std::size_t write : {1u, 7u, 64u, 1000u}) {
      Diagnosis d = scan(log, chunk, write);
      const Evidence* e = find(d, "needle");
      ASSERT_NE(e, nullptr) << chunk << "/" << write;
      EXPECT_EQ(e->line, ref->line) << chunk << "/" << write;
      EXPECT_EQ(e->offset, ref->offset) << chunk << "/" << write;
      EXPECT_EQ(e->text, ref->text) << chunk << "/" << write;
      EXPECT_EQ(d.lines, 300u);
    }
  }
}

TEST(Scanner, LineNumbersStayExactAcrossRunsOfBlankLines) {
  // Newlines are counted sixteen bytes at a time, in counters widened every
  // 255 blocks: runs of blank lines fill whole blocks with them.
  const std::string log = std::string(5000, '\n') + "x NEEDLE\n" + std::string(14000, '\n') + "ab\nall done\n";
  for (std::size_t chunk : {333u, 4096u, 1u << 20}) {
    Diagnosis d = scan(log, chunk);
    const Evidence* needle = find(d, "needle");
    const Evidence* marker = find(d, "marker");
    ASSERT_NE(needle, nullptr) << chunk;
    ASSERT_NE(marker, nullptr) << chunk;
    EXPECT_EQ(needle->line, 5001u) << chunk;
    EXPECT_EQ(marker->line, 19003u) << chunk;
    EXPECT_EQ(d.lines, 19003u) << chunk;
  }
}

TEST(Scanner, ASizeLimitStopsReadingWhereItSays) {
  const std::string log = numbered_log(1000, 900);  // the needle lies past the limit
  DiagnoseOptions o;
  o.max_bytes = 4096;
  Stream s(scanner_rules(), o);
  for (std::size_t i = 0; i < log.size(); i += 1000) s.write(std::string_view(log).substr(i, 1000));
  EXPECT_TRUE(s.full());
  Diagnosis d = s.finish();
  EXPECT_EQ(d.bytes, 4096u);
  EXPECT_EQ(find(d, "needle"), nullptr);
  EXPECT_EQ(d.input.damage, "stopped at the size limit of 4096 bytes");
  EXPECT_EQ(d.input.damage_at, 4096u);
  EXPECT_EQ(input_problem(d.input), "stopped at the size limit of 4096 bytes");
  // A device that never ends is read up to the device limit, or the one given.
  o.max_bytes = 100000;
  EXPECT_EQ(diagnose_file(scanner_rules(), "/dev/zero", o).bytes, 100000u);
  // Without a limit, the whole input.
  EXPECT_TRUE(diagnose_bytes(scanner_rules(), log).input.damage.empty());
}

TEST(Scanner, MatchStraddlingAChunkBoundaryIsFound) {
  // One long line forces pieces of exactly `chunk` bytes; put the pattern across a cut.
  const std::size_t chunk = 64;
  std::string line(chunk - 10, 'x');
  line += "abcdefghij0123456789";
  line += std::string(200, 'y');
  std::string log = "head\n" + line + "\ntail\n";
  for (std::size_t write : {1u, 13u, 10000u}) {
    Diagnosis d = scan(log, chunk, write);
    const Evidence* e = find(d, "straddle");
    ASSERT_NE(e, nullptr) << write;
    EXPECT_EQ(e->line, 2u);
    EXPECT_EQ(e->offset, 5u);
    EXPECT_EQ(d.lines, 3u);
  }
}

TEST(Scanner, LineLongerThanAChunkKeepsItsNumberAndAnExcerpt) {
  std::string log = "a\nb\n" + std::string(100000, 'z') + " NEEDLE at the end\nafter\n";
  DiagnoseOptions o;
  o.chunk_size = 4096;
  o.text_cap = 256;
  Diagnosis d = diagnose_bytes(scanner_rules(), log, o);
  const Evidence* e = find(d, "needle");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->line, 3u);
  EXPECT_EQ(e->offset, 4u);
  EXPECT_TRUE(e->truncated);
  EXPECT_LE(e->text.size(), 256u);
  EXPECT_NE(e->text.find("NEEDLE"), std::string::npos);
  EXPECT_EQ(d.lines, 4u);
}

TEST(Scanner, CrlfLineEndings) {
  Diagnosis d = scan("one\r\ntwo NEEDLE\r\nKilled\r\n");
  const Evidence* e = find(d, "needle");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->line, 2u);
  EXPECT_EQ(e->text, "two NEEDLE");
  const Evidence* k = find(d, "killed_line");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->line, 3u);
  EXPECT_EQ(k->text, "Killed");
}

TEST(Scanner, NoFinalNewline) {
  for (std::size_t write : {1u, 3u, 1000u}) {
    Diagnosis d = scan("start\nKilled", 64, write);
    const Evidence* k = find(d, "killed_line");
    ASSERT_NE(k, nullptr) << write;
    EXPECT_EQ(k->line, 2u);
    EXPECT_EQ(k->text, "Killed");
    EXPECT_EQ(d.lines, 2u);
    EXPECT_EQ(d.cls, "oom_killer");
  }
}

TEST(Scanner, EmptyInput) {
  Diagnosis d = scan("");
  EXPECT_EQ(d.cls, "unknown");
  EXPECT_EQ(d.lines, 0u);
  EXPECT_EQ(d.bytes, 0u);
  EXPECT_TRUE(d.evidence.empty());
}

TEST(Scanner, NulBytesAndInvalidUtf8) {
  std::string log("bin\0ary\n", 8);
  log += "bad \xff\xfe bytes NEEDLE \xc3\n";
  log += std::string("\0\0Killed\0", 9) + "\n";
  Diagnosis d = scan(log);
  const Evidence* e = find(d, "needle");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->line, 2u);
  EXPECT_EQ(e->text, "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes NEEDLE \xEF\xBF\xBD");
  EXPECT_EQ(d.lines, 3u);
  // The JSON of such evidence is valid UTF-8 with escaped control bytes.
  std::string json = to_json(d);
  EXPECT_EQ(json.find('\0'), std::string::npos);
}

TEST(Scanner, FileStdinAndMemoryAgree) {
  const std::string log = numbered_log(5000, 4321);
  TempDir dir;
  write_file(dir.path() / "run.log", log);
  DiagnoseOptions o;
  o.chunk_size = 1000;
  Diagnosis from_memory = diagnose_bytes(scanner_rules(), log, o);
  Diagnosis from_file = diagnose_file(scanner_rules(), dir.path() / "run.log", o);

  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread writer([&] {
    std::size_t done = 0;
    while (done < log.size()) {
      ssize_t n = ::write(fds[1], log.data() + done, std::min<std::size_t>(777, log.size() - done));
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::close(fds[1]);
  });
  Diagnosis from_pipe = diagnose_fd(scanner_rules(), fds[0], "<pipe>", o);
  writer.join();
  ::close(fds[0]);

  for (const Diagnosis* d : {&from_file, &from_pipe}) {
    const Evidence* e = find(*d, "needle");
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->line, 4321u);
    EXPECT_EQ(e->offset, find(from_memory, "needle")->offset);
    EXPECT_EQ(d->lines, 5000u);
    EXPECT_EQ(d->bytes, log.size());
  }
}

// A large file is read on a second thread, pieces ahead of the scan, where
// the process may run on two CPUs: what it gives is what reading the file
// in turn gives, whatever the piece size, and a size limit reached midway
// stops the reading (the thread, blocked with its pieces full, is not
// waited for in vain). On one CPU nothing is read ahead.
TEST(Scanner, ALargeFileReadAheadGivesWhatReadingItInTurnGives) {
  cpu_set_t cpus;
  ASSERT_EQ(sched_getaffinity(0, sizeof cpus, &cpus), 0);
  const bool two_cpus = CPU_COUNT(&cpus) >= 2;
  std::string log;
  for (int i = 0; log.size() < (9u << 20); ++i) {
    log += "{'loss': " + std::to_string(2.5 - i * 1e-6).substr(0, 6) + ", 'learning_rate': 2e-05, 'epoch': 0.01}\n";
    if (i % 7 == 0) log += "gpu-node-00:1234:1300 [" + std::to_string(i % 8) + "] NCCL INFO Channel 00/0 : 0[0] -> 1[1]\n";
    if (i % 50000 == 0) log += "UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed\n";
  }
  log += "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
         "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n";
  TempDir dir;
  write_file(dir.path() / "run.log", log);
  const auto rules = RuleSet::builtin(CacheOptions{false, {}});
  // Held to one CPU (on a thread of its own, whose affinity is its own).
  std::thread([&] {
    int cpu = 0;
    while (!CPU_ISSET(cpu, &cpus)) ++cpu;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    const std::uint64_t before = detail::files_read_ahead();
    const std::string json = to_json(diagnose_file(rules, dir.path() / "run.log"));
    EXPECT_EQ(detail::files_read_ahead(), before);
    EXPECT_NE(json.find("cuda_oom"), std::string::npos);
  }).join();
  if (!two_cpus) GTEST_SKIP() << "one CPU: reading ahead is not tried here";
  for (const std::size_t chunk : {std::size_t{1} << 20, std::size_t{5000}})
    for (const std::uint64_t limit : {std::uint64_t{0}, std::uint64_t{3} << 20}) {
      DiagnoseOptions o;
      o.chunk_size = chunk;
      o.max_bytes = limit;
      o.read_ahead = false;
      const std::string in_turn = to_json(diagnose_file(rules, dir.path() / "run.log", o));
      o.read_ahead = true;
      const std::uint64_t before = detail::files_read_ahead();
      const std::string ahead = to_json(diagnose_file(rules, dir.path() / "run.log", o));
      EXPECT_EQ(detail::files_read_ahead(), before + 1);
      EXPECT_EQ(ahead, in_turn) << "chunk " << chunk << ", limit " << limit;
      EXPECT_NE(ahead.find(limit ? "stopped at the size limit" : "cuda_oom"), std::string::npos) << ahead.substr(0, 300);
    }
}

// The launcher's rank of a traceback's or warning's line is read where its
// layout holds it, once the layout is known: two ranks' headers of one
// layout (their digits differ) open a traceback each, on its own rank.
TEST(Tracebacks, EachRanksHeaderOfOneLayoutOpensItsOwnTraceback) {
  const auto rules = RuleSet::builtin(CacheOptions{false, {}});
  unsigned start = 0;
  while (start < rules->impl().rules.size() && rules->impl().rules[start].role != Role::traceback_start) ++start;
  ASSERT_LT(start, rules->impl().rules.size());
  for (const std::uint64_t layout : {std::uint64_t{0}, std::uint64_t{77}}) {
    detail::TracebackReader reader(rules->impl());
    auto header = [&](int rank, std::uint64_t line) {
      const std::string text = "[rank" + std::to_string(rank) + "]: Traceback (most recent call last):";
      reader.on_hit(detail::LineHit{start, line, line * 50, text, false, text, layout});
    };
    header(1, 10);
    header(0, 20);
    header(3, 30);
    for (const auto& [rank, line] : {std::pair{0, 20u}, std::pair{1, 10u}, std::pair{3, 30u}}) {
      const auto e = reader.exception_at(line + 1, rank);
      ASSERT_TRUE(e) << "rank " << rank << ", layout " << layout;
      EXPECT_EQ(e->start, line) << "rank " << rank << ", layout " << layout;
    }
    EXPECT_FALSE(reader.exception_at(21, 2));
  }
}

TEST(Scanner, UnreadableInputsNameThePath) {
  TempDir dir;
  try {
    diagnose_file(scanner_rules(), dir.path() / "missing.log");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.log"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos);
  }
  try {
    diagnose_file(scanner_rules(), dir.path());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos);
  }
}

TEST(Scanner, StreamRejectsUseAfterFinish) {
  Stream s(scanner_rules());
  s.write("x\n");
  s.finish();
  EXPECT_THROW(s.write("y\n"), std::logic_error);
  EXPECT_THROW(s.finish(), std::logic_error);
}

TEST(Scanner, LineStartPatternsMatchOnlyWhereTheMessageBegins) {
  // After launcher, host, rank and logging prefixes, yes; in the middle of a
  // message, no.
  for (const char* line : {"Fatal: disk", "[rank3]: Fatal: disk", "[default0]:Fatal: disk", "12: Fatal: disk",
                           "[2026-01-02 10:00:01] [rank0]: Fatal: disk", "gpu-node-03: Fatal: disk",
                           "ERROR:trainer:Fatal: disk", "2026-01-02 10:00:01,123 - trainer - ERROR - Fatal: disk"}) {
    const Evidence* e = nullptr;
    Diagnosis d = scan(std::string("start\n") + line + "\nend\n");
    e = find(d, "fatal");
    ASSERT_NE(e, nullptr) << line;
    EXPECT_EQ(e->line, 2u) << line;
  }
  for (const char* line : {"warning: Fatal: disk", "[rank3]: retrying after Fatal: disk", "step: Fatal: disk"})
    EXPECT_EQ(find(scan(std::string("start\n") + line + "\nend\n"), "fatal"), nullptr) << line;
  // A miss at one place in a line does not hide a match on a later line.
  Diagnosis d = scan("note Fatal: a\n[rank1]: Fatal: b\n");
  const Evidence* e = find(d, "fatal");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->line, 2u);
  EXPECT_EQ(e->count, 1u);
}

TEST(Scanner, PrefilterHitsAreConfirmedAgainstTheFullPattern) {
  Diagnosis d = scan("disk fullness report\nall fine\nthe disk full now\ndisk gone\n");
  const Evidence* e = find(d, "disk");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->line, 3u);
  EXPECT_EQ(e->count, 2u);
  EXPECT_EQ(find(scan("disk fullness report\ndisk check\n"), "disk"), nullptr);
}

// The same bytes give the same JSON whatever the pieces they arrive in, and
// from memory as from the file.
TEST(Determinism, JsonDoesNotDependOnThePiecesTheInputArrivesIn) {
  const auto corpus = std::filesystem::path(GPUDIAG_RULES_DIR).parent_path() / "corpus" / "logs";
  std::vector<std::filesystem::path> logs;
  for (const auto& e : std::filesystem::recursive_directory_iterator(corpus))
    if (e.is_regular_file() && e.path().extension() == ".log") logs.push_back(e.path());
  std::sort(logs.begin(), logs.end());
  ASSERT_GT(logs.size(), 400u);
  const auto rules = shipped_rules();
  for (std::size_t i = 0; i < logs.size(); i += 9) {
    const std::string bytes = read_file(logs[i]);
    const std::string whole = to_json(diagnose_bytes(rules, bytes), logs[i].string());
    EXPECT_EQ(to_json(diagnose_file(rules, logs[i])), whole) << logs[i];
    for (std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{4093}}) {
      if (piece == 1 && bytes.size() > 20000) continue;  // a byte at a time: small logs only
      Stream stream(rules);
      for (std::size_t at = 0; at < bytes.size(); at += piece)
        stream.write(std::string_view(bytes).substr(at, piece));
      EXPECT_EQ(to_json(stream.finish(), logs[i].string()), whole) << logs[i] << " in pieces of " << piece;
    }
  }
}

// A trailing word boundary after a literal word character is left out of the
// stream database and checked by the scanner on the byte after the hit.
TEST(Scanner, TrailingWordBoundaryLeftToTheScannerOnlyWhereItEndsALiteral) {
  using detail::without_word_end;
  EXPECT_EQ(without_word_end("(?:\\b|_)loss\\b", 0), "(?:\\b|_)loss");
  EXPECT_EQ(without_word_end("\\bKilled\\b", HS_FLAG_CASELESS), "\\bKilled");
  EXPECT_EQ(without_word_end("NODE_FAIL\\b", 0), "NODE_FAIL");
  for (const char* kept : {"fo[o]\\b", "foo+\\b", "(?:foo)\\b", "foo|bar\\b", "foo\\\\b", "\\x41\\b",
                           "\\101\\b", "\\cA\\b", "(?i)foo\\b", "foo", "\\bfoo", "\\d\\b", "\\Qfoo\\E\\b",
                           "foo\\b(?:)", "a{2}\\b"})
    EXPECT_EQ(without_word_end(kept, 0), "") << kept;
  EXPECT_EQ(without_word_end("foo\\b", HS_FLAG_UTF8 | HS_FLAG_UCP), "");
}

// The same pattern twice, once in the form whose boundary the scanner checks
// (`foo\b`) and once in one it leaves to Hyperscan (`fo[o]\b`): on any text,
// cut into pieces anywhere (lines longer than a piece, hits at a piece's
// last byte, at the end of the data), both find the same lines.
TEST(Scanner, TrailingWordBoundaryCheckedAsHyperscanWould) {
  TempDir dir;
  write_file(dir.path() / "r.json", R"({"rules": [
    {"id": "checked", "class": "segfault", "patterns": ["foo\\b"]},
    {"id": "left", "class": "bus_error", "patterns": ["fo[o]\\b"]}
  ]})");
  const auto rules = RuleSet::load_dir(dir.path(), CacheOptions{false, {}});
  std::mt19937 rng(7);
  const std::string letters = "fo_x .";
  std::size_t found = 0;
  for (int round = 0; round < 600; ++round) {
    std::string log;
    const std::size_t n = rng() % 600;
    for (std::size_t i = 0; i < n; ++i) log += rng() % 60 == 0 ? '\n' : letters[rng() % letters.size()];
    DiagnoseOptions o;
    o.chunk_size = 64 + rng() % 64;
    Stream s(rules, o);
    const std::size_t write = 1 + rng() % 100;
    for (std::size_t i = 0; i < log.size(); i += write) s.write(std::string_view(log).substr(i, write));
    const Diagnosis d = s.finish();
    const Evidence* checked = find(d, "checked");
    const Evidence* left = find(d, "left");
    ASSERT_EQ(checked == nullptr, left == nullptr) << log;
    if (!checked) continue;
    ++found;
    EXPECT_EQ(checked->line, left->line) << log;
    EXPECT_EQ(checked->count, left->count) << log;
    EXPECT_EQ(checked->text, left->text) << log;
  }
  EXPECT_GT(found, 150u);
}

// One scan of a line answers for every confirmed pattern that hit it (a
// traceback frame, an exception line): on any text, cut into pieces anywhere,
// confirmed patterns that share lines find what their unconfirmed forms find
// (`^` for a line_start pattern, on lines that hold no prefix; the full regex
// for a prefiltered one), including lines cut at a piece's end, whose two
// parts lie at one offset in two pieces.
TEST(Scanner, ConfirmedPatternsSharingALineFindWhatTheirPlainFormsFind) {
  TempDir confirmed_dir, plain_dir;
  write_file(confirmed_dir.path() / "r.json", R"json({"rules": [
    {"id": "boom", "class": "runtime_error", "patterns": [{"regex": "Boom! ", "flags": ["line_start"]}]},
    {"id": "boom_word", "class": "assertion", "patterns": [{"regex": "Boom! d\\w+", "flags": ["line_start"]}]},
    {"id": "disk", "class": "file_not_found", "patterns": [{"regex": "disk (?:full|gone)", "prefilter": "disk "}]},
    {"id": "disk_full", "class": "permission", "patterns": [{"regex": "disk full", "prefilter": "disk "}]}
  ]})json");
  write_file(plain_dir.path() / "r.json", R"json({"rules": [
    {"id": "boom", "class": "runtime_error", "patterns": ["^Boom! "]},
    {"id": "boom_word", "class": "assertion", "patterns": ["^Boom! d\\w+"]},
    {"id": "disk", "class": "file_not_found", "patterns": ["disk (?:full|gone)"]},
    {"id": "disk_full", "class": "permission", "patterns": ["disk full"]}
  ]})json");
  const auto confirmed = RuleSet::load_dir(confirmed_dir.path(), CacheOptions{false, {}});
  const auto plain = RuleSet::load_dir(plain_dir.path(), CacheOptions{false, {}});
  const std::vector<std::string> words = {"Boom! ", "disk ", "full", "gone", "x", "\n", "\n"};
  std::mt19937 rng(11);
  std::size_t found = 0;
  for (int round = 0; round < 400; ++round) {
    std::string log;
    for (std::size_t i = 0, n = rng() % 200; i < n; ++i) log += words[rng() % words.size()];
    DiagnoseOptions o;
    o.chunk_size = 64 + rng() % 64;
    const std::size_t write = 1 + rng() % 100;
    auto diagnose = [&](const std::shared_ptr<const RuleSet>& rules) {
      Stream s(rules, o);
      for (std::size_t i = 0; i < log.size(); i += write) s.write(std::string_view(log).substr(i, write));
      return s.finish();
    };
    const Diagnosis a = diagnose(confirmed), b = diagnose(plain);
    for (const char* rule : {"boom", "boom_word", "disk", "disk_full"}) {
      const Evidence* x = find(a, rule);
      const Evidence* y = find(b, rule);
      ASSERT_EQ(x == nullptr, y == nullptr) << rule << " " << (x ? x->text : y->text) << "\n" << log;
      if (!x) continue;
      ++found;
      EXPECT_EQ(x->line, y->line) << rule << "\n" << log;
      EXPECT_EQ(x->count, y->count) << rule << "\n" << log;
      EXPECT_EQ(x->text, y->text) << rule << "\n" << log;
    }
  }
  EXPECT_GT(found, 600u);
}

// A rule's last hit is kept as a view of the scanned piece until the piece is
// done, then copied: over pieces of any size, written in any sizes, the last
// line a rule matched is quoted as it was, at its line.
TEST(Scanner, TheLastHitOfARuleIsQuotedAfterItsPieceIsGone) {
  const auto rules = shipped_rules();
  std::mt19937 rng(5);
  for (int round = 0; round < 60; ++round) {
    std::string log, last;
    std::uint64_t line = 0, last_line = 0;
    for (int i = 0, n = 2 + static_cast<int>(rng() % 40); i < n; ++i) {
      for (std::uint32_t k = rng() % 4; k > 0; --k, ++line) log += "filler line " + std::to_string(rng() % 1000) + "\n";
      last = "2022-10-09 06:31:23,787 - mmcls - INFO - Saving checkpoint at " + std::to_string(rng() % 100000) + " epochs";
      log += last + "\n";
      last_line = ++line;
    }
    DiagnoseOptions o;
    o.chunk_size = 128 + rng() % 128;  // a few lines a piece (a line longer than a piece is cut)
    Stream s(rules, o);
    const std::size_t write = 1 + rng() % 200;
    for (std::size_t i = 0; i < log.size(); i += write) s.write(std::string_view(log).substr(i, write));
    const Diagnosis d = s.finish();
    const auto saved = std::find_if(d.findings.begin(), d.findings.end(),
                                    [](const Finding& f) { return f.kind == "checkpoint"; });
    ASSERT_NE(saved, d.findings.end()) << log;
    ASSERT_TRUE(saved->evidence);
    EXPECT_EQ(saved->evidence->text, last);
    EXPECT_EQ(saved->evidence->line, last_line);
  }
}

// A stream hands each hit to the one reader of its rule's role, then to the
// evidence collector, where the readers once passed every hit down a chain:
// the same only while no role has two readers.
TEST(Scanner, EachRoleHasOneReaderAtMost) {
  for (int r = 0; r <= static_cast<int>(Role::straggler_report); ++r) {
    const auto role = static_cast<Role>(r);
    const int readers = detail::LauncherReportReader::reads(role) + detail::ExitStatusReader::reads(role) +
                        detail::CounterReader::reads(role) + detail::TrajectoryBuilder::reads(role) +
                        detail::TracebackReader::reads(role);
    EXPECT_LE(readers, 1) << to_string(role);
  }
}
