// Inputs as they are found: compressed archives known by content, container
// runtime records unwrapped, directories listed ripgrep-style.
#include "compress.hpp"
#include "test_util.hpp"

namespace gpudiag::testing {
namespace {

const std::string kLog =
    "[rank0]: step 10 loss 2.31\n"
    "[rank0]: step 20 loss 2.02\n"
    "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
    "total capacity of 79.15 GiB of which 1.20 GiB is free.\n";

// Writes the input in pieces of `piece` bytes, as a reader of any buffer size would.
Diagnosis diagnose_in_pieces(const std::string& input, std::size_t piece) {
  DiagnoseOptions options;
  options.chunk_size = 64;
  Stream s(shipped_rules(), options);
  for (std::size_t at = 0; at < input.size(); at += piece) s.write(std::string_view(input).substr(at, piece));
  return s.finish();
}

struct Format {
  const char* name;
  std::string (*compress)(const std::string&);
};

class Compressed : public ::testing::TestWithParam<Format> {};

// Every format reads as the text it holds, whatever the pieces it arrives in,
// and members one after another are read one after another.
TEST_P(Compressed, ReadsAsItsText) {
  const Diagnosis plain = diagnose_bytes(shipped_rules(), kLog);
  const std::string stored = GetParam().compress(kLog);
  for (std::size_t piece : {std::size_t{1}, std::size_t{5}, stored.size()}) {
    const Diagnosis d = diagnose_in_pieces(stored, piece);
    EXPECT_EQ(d.cls, "cuda_oom") << piece;
    EXPECT_EQ(d.input.compression, GetParam().name);
    EXPECT_EQ(d.input.damage, "");
    EXPECT_EQ(d.lines, plain.lines);
    EXPECT_EQ(d.bytes, plain.bytes);
    EXPECT_EQ(to_json(d), to_json(diagnose_in_pieces(stored, piece))) << "deterministic";
  }
  const Diagnosis twice = diagnose_bytes(shipped_rules(), stored + stored);
  EXPECT_EQ(twice.lines, 2 * plain.lines);
  EXPECT_EQ(twice.input.damage, "");
}

// Text that ends exactly where the decoder's output buffer fills (64 KiB) is
// whole, not cut short.
TEST_P(Compressed, TextEndingAtABufferBoundaryIsWhole) {
  for (std::size_t size : {std::size_t{1} << 16, std::size_t{4} << 16}) {
    std::string text;
    while (text.size() < size) text += "step " + std::to_string(text.size()) + " loss 1.0\n";
    text.resize(size - 1);
    text += '\n';
    const Diagnosis d = diagnose_bytes(shipped_rules(), GetParam().compress(text));
    EXPECT_EQ(d.input.damage, "") << size;
    EXPECT_EQ(d.bytes, size);
  }
}

// A file cut short is diagnosed up to where it ends, and says so.
TEST_P(Compressed, TruncatedSaysWhereItBroke) {
  std::string text;
  // Long enough for several blocks of the block formats (zstd's 128 KiB,
  // bzip2's 100 KiB at level 1): a cut block is lost whole.
  for (int step = 1; step <= 20000; ++step) text += "step " + std::to_string(step) + " loss " + std::to_string(5.0 / step) + " lr 0.001\n";
  text += kLog;
  const std::string stored = GetParam().compress(text);
  const std::string cut = stored.substr(0, stored.size() / 2);
  const Diagnosis d = diagnose_bytes(shipped_rules(), cut);
  EXPECT_EQ(d.input.compression, GetParam().name);
  EXPECT_EQ(d.input.damage, "the data ends mid-stream: the file is truncated");
  EXPECT_EQ(d.input.damage_at, cut.size());
  EXPECT_GT(d.lines, 10u);
  EXPECT_LT(d.lines, 20000u);
  EXPECT_NE(d.cls, "cuda_oom");  // its line was in the lost half
}

INSTANTIATE_TEST_SUITE_P(Formats, Compressed,
                         ::testing::Values(Format{"gzip", gzip}, Format{"zstd", zstd}, Format{"bzip2", bzip2},
                                           Format{"xz", xz}),
                         [](const auto& info) { return std::string(info.param.name); });

// Corrupt bytes inside the data stop the text there, naming the damage.
TEST(Compressed, CorruptSaysWhatBroke) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "line " + std::to_string(i * 7919 % 10007) + " of a log\n";
  for (auto [name, compress] : {Format{"gzip", gzip}, Format{"bzip2", bzip2}, Format{"xz", xz}, Format{"zstd", zstd}}) {
    std::string stored = compress(text);
    for (std::size_t i = stored.size() / 2; i < stored.size() / 2 + 16; ++i) stored[i] = static_cast<char>(~stored[i]);
    const Diagnosis d = diagnose_bytes(shipped_rules(), stored);
    EXPECT_EQ(d.input.compression, name);
    EXPECT_NE(d.input.damage.find("corrupt " + std::string(name) + " data"), std::string::npos)
        << name << ": " << d.input.damage;
    EXPECT_LE(d.input.damage_at, stored.size());
  }
}

// Text that merely starts like nothing compressed passes through untouched.
TEST(Compressed, TextIsText) {
  const Diagnosis d = diagnose_bytes(shipped_rules(), "BZh is not bzip2\n" + kLog);
  EXPECT_EQ(d.input.compression, "");
  EXPECT_EQ(d.cls, "cuda_oom");
  EXPECT_EQ(diagnose_bytes(shipped_rules(), "x").lines, 1u);
  EXPECT_EQ(diagnose_bytes(shipped_rules(), "").lines, 0u);
}

std::string docker(const std::string& text, bool split) {
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    std::string line = text.substr(at, end - at + 1);
    at = end + 1;
    std::vector<std::string> parts{line};
    if (split && line.size() > 30) parts = {line.substr(0, 30), line.substr(30)};  // Docker splits long lines
    for (const std::string& part : parts) {
      std::string escaped;
      for (char c : part) escaped += c == '\n' ? std::string("\\n") : c == '"' ? std::string("\\\"") : std::string(1, c);
      out += R"({"log":")" + escaped + R"(","stream":"stderr","time":"2026-11-23T10:00:00.123456789Z"})" + "\n";
    }
  }
  return out;
}

std::string cri(const std::string& text, bool split) {
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    std::string line = text.substr(at, end - at);
    at = end + 1;
    const std::string stamp = "2026-11-23T10:00:00.123456789Z stderr ";
    if (split && line.size() > 30) out += stamp + "P " + line.substr(0, 30) + "\n" + stamp + "F " + line.substr(30) + "\n";
    else out += stamp + "F " + line + "\n";
  }
  return out;
}

// Container runtime records read as the lines the program printed: the same
// diagnosis, line numbers and evidence as the plain log.
TEST(Containers, RecordsAreUnwrapped) {
  const Diagnosis plain = diagnose_in_pieces(kLog, kLog.size());
  for (bool split : {false, true}) {
    for (auto [name, wrapped] : {std::pair{"docker_json", docker(kLog, split)}, std::pair{"cri", cri(kLog, split)}}) {
      for (std::size_t piece : {std::size_t{1}, std::size_t{7}, wrapped.size()}) {
        const Diagnosis d = diagnose_in_pieces(wrapped, piece);
        EXPECT_EQ(d.input.container, name);
        EXPECT_EQ(d.cls, "cuda_oom");
        EXPECT_EQ(d.lines, plain.lines) << name << " split " << split << " piece " << piece;
        ASSERT_FALSE(d.evidence.empty());
        EXPECT_EQ(d.evidence.front().line, plain.evidence.front().line);
        EXPECT_EQ(d.evidence.front().text, plain.evidence.front().text);
      }
    }
  }
  // Compressed and wrapped at once.
  const Diagnosis both = diagnose_bytes(shipped_rules(), gzip(cri(kLog, true)));
  EXPECT_EQ(both.input.compression, "gzip");
  EXPECT_EQ(both.input.container, "cri");
  EXPECT_EQ(both.cls, "cuda_oom");
}

// A log that only looks like records at first keeps its other lines as they
// are; a JSON log of another shape is plain text.
TEST(Containers, OtherLinesPassAsTheyAre) {
  const Diagnosis mixed = diagnose_bytes(shipped_rules(), docker("starting\n", false) + kLog);
  EXPECT_EQ(mixed.input.container, "docker_json");
  EXPECT_EQ(mixed.cls, "cuda_oom");
  const Diagnosis json = diagnose_bytes(shipped_rules(), "{\"event\": \"start\"}\n" + kLog);
  EXPECT_EQ(json.input.container, "");
  EXPECT_EQ(json.cls, "cuda_oom");
}

// A log gpudiag run kept: its own lines (header, footer, notes) are blank to
// the rules, whatever they quote, and the line numbers stay the file's.
TEST(Containers, GpudiagRunLinesAreBlank) {
  const std::string header =
      "# gpudiag run: python train.py --resume_from_checkpoint out/checkpoint-500\n"
      "# gpudiag run: host gpu-a17 · started 2026-11-23T10:00:00Z · attempt 1\n";
  const std::string body = "step 1 loss 2.5\nModuleNotFoundError: No module named 'apex'\n";
  const std::string footer = "# gpudiag run: status 1 after 3.0 s · diagnosis missing_module (job, 0.75), line 4\n"
                             "# gpudiag run: notify e-mail to me@example.org failed: Segmentation fault\n";
  for (std::size_t piece : {std::size_t{1}, std::size_t{5}, std::size_t{4096}}) {
    const Diagnosis d = diagnose_in_pieces(header + body + footer, piece);
    EXPECT_EQ(d.input.container, "gpudiag_run");
    EXPECT_EQ(d.cls, "missing_module") << piece;
    ASSERT_EQ(d.evidence.size(), 1u);
    EXPECT_EQ(d.evidence.front().line, 4u);
    EXPECT_EQ(d.lines, 6u);
    for (const Finding& f : d.findings) EXPECT_NE(f.cls, "resume_from_scratch");
  }
  // The same words anywhere but at the start of the first line are the log's.
  const Diagnosis plain = diagnose_bytes(shipped_rules(), body + footer);
  EXPECT_EQ(plain.input.container, "");
}

TEST(Directories, GlobsMatchNamesAndPaths) {
  EXPECT_TRUE(glob_matches("*.log", "rank0/out.log"));
  EXPECT_FALSE(glob_matches("*.log", "rank0/out.log.gz"));
  EXPECT_TRUE(glob_matches("rank*/*.log", "rank0/out.log"));
  EXPECT_FALSE(glob_matches("rank*/*.log", "a/rank0/out.log"));
  EXPECT_TRUE(glob_matches("**/rank*/*.log", "a/b/rank0/out.log"));
  EXPECT_TRUE(glob_matches("**/rank*/*.log", "rank0/out.log"));
  EXPECT_TRUE(glob_matches("logs/**", "logs/a/b.txt"));
  EXPECT_TRUE(glob_matches("node-[0-9].out", "x/node-3.out"));
}

// A file is binary when an eighth or more of its first 8 KiB are control
// bytes a log does not hold (a log's tabs, line ends, form feeds, backspaces
// and ANSI escapes do not count), at any length and wherever they lie.
// UTF-16 with a byte-order mark (a Windows PowerShell redirect) reads as the
// UTF-8 it holds, in pieces of any size, and says so.
std::string utf16(const std::string& ascii, bool little) {
  std::string out = little ? "\xFF\xFE" : "\xFE\xFF";
  for (char c : ascii) out += little ? std::string{c, '\0'} : std::string{'\0', c};
  return out;
}

TEST(Encodings, Utf16ReadsAsItsText) {
  const Diagnosis plain = diagnose_in_pieces(kLog, 4096);
  for (bool little : {true, false}) {
    const std::string stored = utf16(kLog, little);
    for (std::size_t piece : {1u, 2u, 3u, 7u, 4096u}) {
      const Diagnosis d = diagnose_in_pieces(stored, piece);
      EXPECT_EQ(d.cls, "cuda_oom") << piece;
      EXPECT_EQ(d.input.encoding, little ? "utf-16le" : "utf-16be");
      EXPECT_EQ(d.lines, plain.lines);
      ASSERT_FALSE(d.evidence.empty());
      EXPECT_EQ(d.evidence.front().text, plain.evidence.front().text);
    }
  }
  EXPECT_EQ(diagnose_bytes(shipped_rules(), kLog).input.encoding, "");
  // A character past the Basic Multilingual Plane is a surrogate pair; an
  // unpaired surrogate, or the data ending inside a unit, is U+FFFD.
  const std::string rocket("\x3D\xD8\x80\xDE\n\0", 6);  // U+1F680, a newline
  const Diagnosis pair = diagnose_bytes(shipped_rules(), utf16("RuntimeError: boom ", true) + rocket);
  ASSERT_FALSE(pair.evidence.empty());
  EXPECT_EQ(pair.evidence.front().text, "RuntimeError: boom \xF0\x9F\x9A\x80");
  const std::string lone("\xFF\xFE\x3D\xD8x\0\n\0\x41", 9);  // a high surrogate alone; half a unit at the end
  const Diagnosis d = diagnose_bytes(shipped_rules(), lone);
  EXPECT_EQ(d.input.encoding, "utf-16le");
  EXPECT_EQ(d.lines, 2u);
  // One byte, or a mark-less file, passes through as it is.
  EXPECT_EQ(diagnose_bytes(shipped_rules(), "\xFF").lines, 1u);
}

TEST(Encodings, TheTranscodedTextIsWhatTheReaderSaw) {
  TempDir dir;
  write_file(dir.path() / "train.log", utf16(kLog, true));
  const FileListing listed = list_logs(dir.path());  // a text file, not a binary one
  ASSERT_EQ(listed.files.size(), 1u);
  EXPECT_EQ(listed.skipped_binary, 0u);
  const Diagnosis d = diagnose_file(shipped_rules(), listed.files.front());
  EXPECT_EQ(d.cls, "cuda_oom");
  EXPECT_EQ(d.input.encoding, "utf-16le");
  EXPECT_EQ(diagnose_job(shipped_rules(), {listed.files.front()}).cls, "cuda_oom");
}

TEST(Directories, BinaryIsAnEighthOfControlBytes) {
  TempDir dir;
  const std::string allowed = "\t\n\r\f\v\b\x1b";
  for (std::size_t size : {8u, 15u, 16u, 17u, 100u, 4095u, 4096u, 5000u, 8192u, 20000u}) {
    // Within the first 8 KiB, control bytes one short of an eighth, then at an eighth.
    const std::size_t head = std::min<std::size_t>(size, 8192), needed = (head + 7) / 8;
    for (std::size_t controls : {needed - 1, needed}) {
      std::string text(size, 'a');
      for (std::size_t i = 0; i < controls; ++i) text[head - 1 - i * 7 % head] = '\x01';
      for (std::size_t i = 0; i < text.size(); i += 5)
        if (text[i] == 'a') text[i] = allowed[i % allowed.size()];  // never counted
      const std::size_t real = static_cast<std::size_t>(std::count(text.begin(), text.begin() + head, '\x01'));
      std::filesystem::remove_all(dir.path() / "d");
      std::filesystem::create_directories(dir.path() / "d");
      write_file(dir.path() / "d" / "f.log", text);
      const FileListing listed = list_logs(dir.path() / "d");
      EXPECT_EQ(listed.skipped_binary, real * 8 >= head ? 1u : 0u) << size << " bytes, " << real << " control";
    }
  }
}

// A folder of many files has their heads read on several threads: the same
// files listed, in path order, every binary one left out.
TEST(Directories, ManyFilesAreListedAsFewAre) {
  TempDir dir;
  std::vector<std::filesystem::path> logs;
  std::size_t binaries = 0;
  for (int i = 0; i < 2000; ++i) {
    const auto folder = dir.path() / ("node-" + std::to_string(i % 7));
    std::filesystem::create_directories(folder);
    const auto file = folder / (std::to_string(i) + ".out");
    if (i % 13 == 5) {
      write_file(file, std::string(64, '\x01'));
      ++binaries;
    } else {
      write_file(file, "step " + std::to_string(i) + " loss 1.5\n");
      logs.push_back(file);
    }
  }
  std::sort(logs.begin(), logs.end());
  const FileListing listed = list_logs(dir.path());
  EXPECT_EQ(listed.files, logs);
  EXPECT_EQ(listed.skipped_binary, binaries);
  EXPECT_TRUE(listed.problems.empty());
}

// Every file below a directory, recursively, in path order, but hidden and
// binary ones; compressed ones are logs. The globs narrow the set.
TEST(Directories, ListsTheLogsBelow) {
  TempDir dir;
  const auto& root = dir.path();
  std::filesystem::create_directories(root / "rank1");
  std::filesystem::create_directories(root / "rank0");
  std::filesystem::create_directories(root / ".cache");
  write_file(root / "rank1" / "out.log", kLog);
  write_file(root / "rank0" / "out.log.gz", gzip(kLog));
  write_file(root / ".cache" / "x.log", kLog);
  write_file(root / ".hidden.log", kLog);
  write_file(root / "model.pt", std::string("PK\x03\x04\0\0weights", 13));
  // A crashed process's log with a NUL in it is a log.
  write_file(root / "job.err", std::string("Bus error\n") + '\0' + "Traceback (most recent call last):\n" +
                                   "slurmstepd: error: *** JOB 42 ON node-3 CANCELLED ***\n");
  FileListing all = list_logs(root);
  std::vector<std::filesystem::path> expect{root / "job.err", root / "rank0" / "out.log.gz", root / "rank1" / "out.log"};
  EXPECT_EQ(all.files, expect);
  EXPECT_EQ(all.skipped_binary, 1u);
  EXPECT_TRUE(all.problems.empty());
  EXPECT_EQ(list_logs(root, FileFilter{{"*.log"}, false}).files, std::vector<std::filesystem::path>{root / "rank1" / "out.log"});
  EXPECT_EQ(list_logs(root, FileFilter{{"!rank*/**"}, false}).files, std::vector<std::filesystem::path>{root / "job.err"});
  EXPECT_EQ(list_logs(root, FileFilter{{"*.log"}, true}).files.size(), 3u);
  EXPECT_FALSE(list_logs(root / "missing").problems.empty());
  EXPECT_EQ(diagnose_file(shipped_rules(), root / "rank0" / "out.log.gz").cls, "cuda_oom");
}

}  // namespace
}  // namespace gpudiag::testing

namespace gpudiag::testing {
namespace {

// Eight ranks' logs, each line timed, none tagged with its rank: rank 5 runs
// out of memory at 10:05, rank 1 hits an illegal memory access at 10:07, the
// others' collectives time out at 10:15: in file order, the timeouts and rank
// 1 come first.
std::string job_log(int rank) {
  std::string log;
  for (int minute = 0; minute < 5; ++minute)
    log += "2026-11-23 10:0" + std::to_string(minute) + ":00,000 - INFO - step " + std::to_string(minute * 100) +
           " loss " + std::to_string(5.0 - minute * 0.5) + "\n";
  if (rank == 5)
    return log + "2026-11-23 10:05:00,000 - ERROR - torch.OutOfMemoryError: CUDA out of memory. Tried to "
                 "allocate 2.00 GiB. GPU 5 has a total capacity of 79.15 GiB of which 1.20 GiB is free.\n";
  if (rank == 1)
    return log + "2026-11-23 10:07:00,000 - ERROR - RuntimeError: CUDA error: an illegal memory access was encountered\n";
  return log + "2026-11-23 10:15:00,000 - ERROR - [Rank " + std::to_string(rank) +
         "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=512, OpType=ALLREDUCE, "
         "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600009 milliseconds before timing out.\n";
}

void write_job(const std::filesystem::path& dir) {
  for (int rank = 0; rank < 8; ++rank)
    write_file(dir / ("rank" + std::to_string(rank) + ".log"), rank == 2 ? gzip(job_log(rank)) : job_log(rank));
}

TEST(Jobs, RankFromTheFileName) {
  EXPECT_EQ(rank_from_path("logs/rank3.log"), 3);
  EXPECT_EQ(rank_from_path("rank_03.out"), 3);
  EXPECT_EQ(rank_from_path("worker-rank-12.txt"), 12);
  EXPECT_EQ(rank_from_path("4714782-3.out"), 3);
  EXPECT_EQ(rank_from_path("run/attempt_0/5/stderr.log"), 5);
  EXPECT_EQ(rank_from_path("node-3.out"), std::nullopt);
  EXPECT_EQ(rank_from_path("train.log"), std::nullopt);
}

// One timeline across the files: the first failure in time decides, on its
// rank, whatever the order of the files; a file read alone says otherwise.
TEST(Jobs, TheFirstFailureInTimeDecides) {
  TempDir dir;
  write_job(dir.path());
  std::vector<std::filesystem::path> files = list_logs(dir.path()).files;
  ASSERT_EQ(files.size(), 8u);
  const Diagnosis d = diagnose_job(shipped_rules(), files);
  EXPECT_EQ(d.cls, "cuda_oom");
  ASSERT_FALSE(d.evidence.empty());
  EXPECT_EQ(d.evidence.front().rank, 5);
  EXPECT_NE(d.evidence.front().text.find("[rank5]: 2026-11-23 10:05:00"), std::string::npos) << d.evidence.front().text;
  EXPECT_EQ(d.lines, 8u * 6);
  std::reverse(files.begin(), files.end());
  EXPECT_EQ(diagnose_job(shipped_rules(), files).cls, "cuda_oom");
  // The files one after another, as `cat` joins them, tell another story.
  std::string joined;
  for (int rank = 0; rank < 8; ++rank) joined += job_log(rank);
  EXPECT_NE(diagnose_bytes(shipped_rules(), joined).cls, "cuda_oom");
  EXPECT_THROW(diagnose_job(shipped_rules(), {dir.path() / "missing.log"}), InputError);
}

}  // namespace
}  // namespace gpudiag::testing

namespace gpudiag::testing {
namespace {

const char* kSacctJson23 = R"({"jobs":[{"job_id":4714782,"name":"train","nodes":"gpu-[01-04]","restart_cnt":1,
  "state":{"current":["NODE_FAIL"],"reason":"None"},
  "exit_code":{"status":["SIGNALED"],"return_code":{"set":true,"infinite":false,"number":0},
               "signal":{"id":{"set":true,"infinite":false,"number":9},"name":"KILL"}},
  "time":{"elapsed":3725,"limit":{"set":true,"infinite":false,"number":240}},"steps":[]}]})";
const char* kSacctJson21 = R"({"jobs":[{"job_id":4714782,"nodes":"gpu-01","state":{"current":"TIMEOUT","reason":"None"},
  "exit_code":{"status":"SIGNALED","return_code":0,"signal":{"signal_id":15,"name":"TERM"}},
  "time":{"elapsed":14407,"limit":240}}]})";
const char* kSacctParsable =
    "JobID|JobName|State|ExitCode|Elapsed|Timelimit|NodeList\n"
    "4714782|train|CANCELLED by 1021|0:15|1-02:03:04|2-00:00:00|gpu-[01-04]\n"
    "4714782.batch|batch|CANCELLED|0:15|1-02:03:04||gpu-01\n";
const char* kScontrol =
    "JobId=4714782 JobName=train\n   UserId=user(1021) GroupId=user(1021)\n"
    "   JobState=PREEMPTED Reason=None Dependency=(null)\n   Requeue=1 Restarts=2 BatchFlag=1 ExitCode=0:15\n"
    "   RunTime=00:42:10 TimeLimit=04:00:00 TimeMin=N/A\n   NodeList=gpu-[03-04]\n";

TEST(SchedulerRecords, EachFormReadsAsOneRecord) {
  const SchedulerRecord a = parse_scheduler_record(kSacctJson23, "a.json");
  EXPECT_EQ(a.source, "sacct --json");
  EXPECT_EQ(a.state, "NODE_FAIL");
  EXPECT_EQ(a.exit_status(), -9);
  EXPECT_EQ(a.limit_seconds, 240 * 60);
  EXPECT_EQ(a.render(), "slurm record (sacct --json): JobId=4714782 JobState=NODE_FAIL ExitCode=0:9 RunTime=01:02:05 "
                        "TimeLimit=04:00:00 NodeList=gpu-[01-04] Restarts=1\n");
  const SchedulerRecord b = parse_scheduler_record(kSacctJson21, "b.json");
  EXPECT_EQ(b.state, "TIMEOUT");
  EXPECT_EQ(b.exit_status(), -15);
  EXPECT_EQ(b.elapsed_seconds, 14407);
  const SchedulerRecord c = parse_scheduler_record(kSacctParsable, "c.txt");
  EXPECT_EQ(c.source, "sacct -P");
  EXPECT_EQ(c.state, "CANCELLED");
  EXPECT_EQ(c.elapsed_seconds, 86400 + 2 * 3600 + 3 * 60 + 4);
  EXPECT_EQ(c.limit_seconds, 2 * 86400);
  const SchedulerRecord d = parse_scheduler_record(kScontrol, "d.txt");
  EXPECT_EQ(d.source, "scontrol show job");
  EXPECT_EQ(d.state, "PREEMPTED");
  EXPECT_EQ(d.restarts, 2);
  EXPECT_EQ(d.nodes, "gpu-[03-04]");
}

TEST(SchedulerRecords, WhatIsNoRecordIsNamed) {
  auto problem = [](const std::string& text) {
    try {
      parse_scheduler_record(text, "rec.txt");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(problem(""), "rec.txt: empty: no scheduler record");
  EXPECT_EQ(problem("hello\n"), "rec.txt: not a scheduler record: expected sacct --json, sacct -P or scontrol show job output");
  EXPECT_EQ(problem("{\"jobs\": [{}, {}]}"), "rec.txt: holds 2 jobs; give the record of one (sacct --json -j JOBID)");
  EXPECT_EQ(problem("{\"jobs\": ").rfind("rec.txt: not valid JSON: ", 0), 0u) << problem("{\"jobs\": ");
  EXPECT_EQ(problem("JobID|State\n1|TIMEOUT\n2|FAILED\n"), "rec.txt: holds 2 jobs; give the record of one (sacct -P -j JOBID)");
}

TEST(SchedulerRecords, NumbersPastTheirRangeAreLeftOut) {
  // A field that cannot hold what Slurm writes there is not read (it had
  // overflowed: undefined behaviour the fuzzer found).
  auto r = parse_scheduler_record("JobID|State|ExitCode|Elapsed|Timelimit\n"
                                  "1|FAILED|99999999999:1|9223372036854775807:00:00|1-00:00:00\n", "rec.txt");
  EXPECT_EQ(r.state, "FAILED");
  EXPECT_FALSE(r.elapsed_seconds);
  EXPECT_FALSE(r.return_code);
  EXPECT_EQ(r.limit_seconds, 86400);
  auto s = parse_scheduler_record("JobId=1 JobState=FAILED Restarts=99999999999 RunTime=99999999999-00:00:00\n", "rec.txt");
  EXPECT_FALSE(s.restarts);
  EXPECT_FALSE(s.elapsed_seconds);
}

// A log that says nothing of its end is decided by the record: a time limit,
// a lost node; a log that names its cause keeps it.
TEST(SchedulerRecords, TheRecordDecidesWhatTheLogCannot) {
  const std::string quiet = "step 100 loss 2.3\nstep 200 loss 2.1\nstep 300 loss 2.0";  // no newline at the end
  EXPECT_EQ(diagnose_bytes(shipped_rules(), quiet).cls, "unknown");
  DiagnoseOptions options;
  options.scheduler = parse_scheduler_record(kSacctJson21, "b.json");
  Diagnosis timeout = diagnose_bytes(shipped_rules(), quiet, options);
  EXPECT_EQ(timeout.cls, "timeout");
  EXPECT_EQ(timeout.exit_code, -15);
  ASSERT_FALSE(timeout.evidence.empty());
  EXPECT_EQ(timeout.evidence.front().line, 4u);
  EXPECT_NE(timeout.evidence.front().text.find("JobState=TIMEOUT"), std::string::npos);
  options.scheduler = parse_scheduler_record(kSacctJson23, "a.json");
  EXPECT_EQ(diagnose_bytes(shipped_rules(), quiet, options).cls, "node_failure");
  const std::string oom = std::string(quiet) + "\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n";
  options.scheduler = parse_scheduler_record("JobID|State|ExitCode\n7|FAILED|1:0\n", "e.txt");
  Diagnosis failed = diagnose_bytes(shipped_rules(), oom, options);
  EXPECT_EQ(failed.cls, "cuda_oom");
  EXPECT_EQ(failed.exit_code, 1);
}

}  // namespace
}  // namespace gpudiag::testing
