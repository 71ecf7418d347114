#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <random>
#include <string>

#include "line_fields.hpp"
#include "test_util.hpp"
#include "text_util.hpp"

using gpudiag::Severity;
using gpudiag::detail::read_line;

namespace {

// Each launcher's rank or host tag.
TEST(LineFields, ReadsEachLaunchersTag) {
  EXPECT_EQ(read_line("[rank3]: Traceback").rank, 3);
  EXPECT_EQ(read_line("[default12]:step 1 loss 2").rank, 12);
  EXPECT_EQ(read_line("  7: KeyError: 'y'").rank, 7);
  auto nccl = read_line("dgx-b12:229161:229225 [5] NCCL INFO Using network IB");
  EXPECT_EQ(nccl.rank, 5);
  EXPECT_EQ(nccl.host, "dgx-b12");
  EXPECT_EQ(nccl.source, "NCCL");
  EXPECT_EQ(nccl.severity, Severity::info);
  EXPECT_EQ(nccl.message, "Using network IB");
  auto pdsh = read_line("gpu-node-03: [rank1]: RuntimeError: boom");
  EXPECT_EQ(pdsh.host, "gpu-node-03");
  EXPECT_EQ(pdsh.rank, 1);
  EXPECT_EQ(pdsh.message, "RuntimeError: boom");
  auto tabbed = read_line("2025-12-21 13:42:31.810\tgpu-node-03:2\ttrain:377\tINFO\tTraining complete");
  EXPECT_EQ(tabbed.rank, 2);
  EXPECT_EQ(tabbed.host, "gpu-node-03");
  EXPECT_EQ(tabbed.source, "train:377");
  auto task = read_line("srun: error: gpu-node-01: task 3: Out Of Memory");
  EXPECT_EQ(task.rank, 3);
  EXPECT_EQ(task.host, "gpu-node-01");
  EXPECT_EQ(task.severity, Severity::error);
  EXPECT_EQ(task.message, "Out Of Memory");
  auto ray = read_line("(RayTrainWorker pid=9671, ip=10.0.0.2) Traceback (most recent call last):");
  EXPECT_EQ(ray.host, "10.0.0.2");
  EXPECT_EQ(ray.message, "Traceback (most recent call last):");
  auto ray_logged = read_line("(pid=88) [rank1]: 2024-05-01 10:00:00,001 - train - INFO - step 3");
  EXPECT_EQ(ray_logged.rank, 1);
  EXPECT_EQ(ray_logged.severity, Severity::info);
  EXPECT_EQ(ray_logged.message, "step 3");
  EXPECT_EQ(read_line("(see above) RuntimeError: boom").message, "(see above) RuntimeError: boom");
  // A logger's "[Rank 0]" field names the process's rank, as c10d's "[Rank 1]" does.
  EXPECT_EQ(read_line("06-16 21:29:32 [TRAIN] [Rank 2] [INFO] [train.py:100] start").rank, 2);
  EXPECT_EQ(read_line("[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught").rank, 1);
  EXPECT_FALSE(read_line("[Rank one] x").rank);
  EXPECT_FALSE(read_line("12:30:01 starting").rank);
  EXPECT_FALSE(read_line("[2026-01-01 10:00:00] step 1").rank);
  // An exception name is not a pdsh host.
  EXPECT_TRUE(read_line("RuntimeError: CUDA error").host.empty());
  EXPECT_EQ(read_line("RuntimeError: CUDA error").message, "RuntimeError: CUDA error");
}

// Severity as each logging library prints it, and the message behind it.
// A carriage return redraws the line: the message is what was printed last.
TEST(LineFields, NumbersTooLongForAnIntAreNoNumbers) {
  // Process and thread ids are skipped whatever their value; a rank or a
  // time field past an int is no rank or time (it had overflowed).
  EXPECT_EQ(read_line("dgx-b12:4444444444:4444444444 [5] NCCL INFO Using network IB").rank, 5);
  EXPECT_FALSE(read_line("dgx-b12:1:2 [4444444444] NCCL INFO x").rank);
  EXPECT_EQ(read_line("2026-11-23T10:00:4444444444444444444444401.000000000Z x").body.empty(), false);
}

TEST(LineFields, ReadsWhatFollowsTheLastCarriageReturn) {
  auto redrawn = read_line("[rank1]:  20%|##  | 216/1063 [00:27<02:17]\r 21%|##  | 220/1063\rKilled");
  EXPECT_EQ(redrawn.rank, 1);
  EXPECT_EQ(redrawn.message, "Killed");
  auto logged = read_line(" 99%|#### | 99/100\r2025-01-02 10:00:00 - ERROR - boom");
  EXPECT_EQ(logged.severity, Severity::error);
  EXPECT_EQ(logged.message, "boom");
  // The body keeps every redraw: a progress bar's readings.
  EXPECT_EQ(redrawn.body, "20%|##  | 216/1063 [00:27<02:17]\r 21%|##  | 220/1063\rKilled");
  // A trailing carriage return (a CRLF line) leaves the line as it is.
  EXPECT_EQ(read_line("Training complete\r").message, "Training complete\r");
}

TEST(LineFields, ReadsSeverityAndMessage) {
  struct Case {
    const char* line;
    Severity severity;
    const char* message;
  } cases[] = {
      {"INFO:__main__:Training completed successfully!", Severity::info, "Training completed successfully!"},
      // absl-py logs as glog does, with Python's thread ident (JAX probing its backends).
      {"I0519 00:50:42.634950 139913184905024 xla_bridge.py:863] Unable to initialize backend 'tpu': INTERNAL: "
       "Failed to open libtpu.so",
       Severity::info, "Unable to initialize backend 'tpu': INTERNAL: Failed to open libtpu.so"},
      {"2022-10-09 06:31:00,973 - mmcls - INFO - Epoch [1][100/5005]", Severity::info, "Epoch [1][100/5005]"},
      {"\x1b[32m[2025-10-21 01:39:34 resnet18]\x1b[0m\x1b[33m(main.py 154)\x1b[0m: INFO Training time 0:18:36",
       Severity::info, "Training time 0:18:36"},
      {"[2025-10-21 01:39:34 resnet18] (main.py 119): WARNING low accuracy", Severity::warning, "low accuracy"},
      {"2024-08-01 21:17:34 - \x1b[34m\x1b[1mLOGS   \x1b[0m - Training took 00:40:45.42", Severity::info,
       "Training took 00:40:45.42"},
      {"INFO 2026-06-12 18:27:59 ot_train.py:438 End of training", Severity::info, "End of training"},
      {"04/02/2026 01:26:57 - INFO - __main__ - Checkpoint 'latest' does not exist.", Severity::info,
       "Checkpoint 'latest' does not exist."},
      {"2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160] Traceback (most "
       "recent call last):",
       Severity::unknown, "Traceback (most recent call last):"},
      {"[2023-12-03 14:53:32,330] torch._dynamo.convert_frame: [WARNING] FileNotFoundError: x",
       Severity::warning, "FileNotFoundError: x"},
      {"[2025-09-21 09:28:23,321 INFO] Step 5000/ 5000;", Severity::info, "Step 5000/ 5000;"},
      {"2025-10-02 14:29:20,764 - INFO - [__main__] - \xf0\x9f\x8e\x89 === Training Complete ===",
       Severity::info, "Training Complete ==="},
      {"[2024-01-01 12:00:00,000] [INFO] [engine.py:123:step] msg", Severity::info, "msg"},
      {"[rank0]:[W1221 13:42:36.291482119 ProcessGroupNCCL.cpp:1524] Warning: x", Severity::warning,
       "Warning: x"},
      {"[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught", Severity::error, "Watchdog caught"},
      {"06-16 21:29:32 [TRAIN] [Rank 0] [INFO] [train.py:535] Training finished, exiting ...", Severity::info,
       "Training finished, exiting ..."},
      {"INFO 06-16 21:29:32 [engine.py:12] Added request", Severity::info, "Added request"},
      {"[2024-04-24 12:58:37,101][demucs.solver][INFO] - New best valid loss 0.4133", Severity::info,
       "New best valid loss 0.4133"},
      {"[2023-01-11 13:28:26,589][mlprof.trainer][INFO] - [0] :: Total training time: 13.1 seconds", Severity::info,
       "Total training time: 13.1 seconds"},
      // Symbols before a message are decoration; words in any script are the message.
      {"2026-03-02 00:41:53,051 - train_face - INFO - \xe8\xae\xad\xe7\xbb\x83\xe5\xae\x8c\xe6\x88\x90!", Severity::info,
       "\xe8\xae\xad\xe7\xbb\x83\xe5\xae\x8c\xe6\x88\x90!"},
      {"\xf0\x9f\x9b\x91 Early stopping triggered.", Severity::unknown, "Early stopping triggered."},
      {"\xe2\x9c\x85\xef\xb8\x8f \xd0\x9e\xd0\xb1\xd1\x83\xd1\x87\xd0\xb5\xd0\xbd\xd0\xb8\xd0\xb5 done", Severity::unknown,
       "\xd0\x9e\xd0\xb1\xd1\x83\xd1\x87\xd0\xb5\xd0\xbd\xd0\xb8\xd0\xb5 done"},
      {"E1221 13:42:36.291482 1234 socket.cpp:12] connect failed", Severity::error, "connect failed"},
      {"[NeMo W 2024-05-01 10:00:00 nemo_logging:349] deprecated", Severity::warning, "deprecated"},
      {"2024-05-01 10:00:00.123 | WARNING  | mod:fn:12 - careful", Severity::warning, "mod:fn:12 - careful"},
      {"/x/lib/python3.10/site-packages/y.py:12: UserWarning: Failed to load image", Severity::warning,
       "/x/lib/python3.10/site-packages/y.py:12: UserWarning: Failed to load image"},
      {"WARNING: destroy_process_group() was not called", Severity::warning,
       "destroy_process_group() was not called"},
      {"\x1b[32m[INFO|trainer.py:2048] 2024-01-01 12:00:00,000 >> ***** Running training *****",
       Severity::info, "Running training *****"},
      {"2025-12-21 13:42:31.810\tgpu-node-03:0\ttrain:377\tINFO\tTraining complete", Severity::info,
       "Training complete"},
      {"[08/30 23:53:52 d2.engine.hooks]: Overall training speed: 3998 iterations", Severity::unknown,
       "Overall training speed: 3998 iterations"},
      {"[12/25 15:48:20] training Res18 finished", Severity::unknown, "training Res18 finished"},
      {"[2021-01-08 17:46:17,740]-[train.py line:310]:=====Training Finished.", Severity::unknown,
       "Training Finished."},
      {"10/20 [00:01<00:02, 9.1it/s]", Severity::unknown, "10/20 [00:01<00:02, 9.1it/s]"},
      {"[see train.py line 12] done", Severity::unknown, "[see train.py line 12] done"},
      {"Traceback (most recent call last):", Severity::unknown, "Traceback (most recent call last):"},
      {"RuntimeError: CUDA out of memory.", Severity::unknown, "RuntimeError: CUDA out of memory."},
      {"--resume /ckpt/last.pt", Severity::unknown, "--resume /ckpt/last.pt"},
  };
  for (const auto& c : cases) {
    auto f = read_line(c.line);
    EXPECT_EQ(f.severity, c.severity) << c.line;
    EXPECT_EQ(f.message, c.message) << c.line;
  }
}

}  // namespace

namespace {

// read_double against std::from_chars on `s`: the same error, end and bits.
void expect_read_as_from_chars(const std::string& s) {
  double expected = -1, got = -1;
  const auto a = std::from_chars(s.data(), s.data() + s.size(), expected);
  const auto b = gpudiag::detail::read_double(s.data(), s.data() + s.size(), got);
  ASSERT_EQ(a.ec, b.ec) << s;
  ASSERT_EQ(a.ptr, b.ptr) << s;
  if (a.ec == std::errc()) {
    ASSERT_EQ(std::bit_cast<std::uint64_t>(expected), std::bit_cast<std::uint64_t>(got)) << s;
  }
}

}  // namespace

// The line model is blind to digits: a line whose bytes differ from
// another's only in their digits has its fields in the same places (the
// trajectory reader reads the rank and body of a line of a known layout from
// there), and its rank is the number its rank digits say. Every example line
// of the shipped rules, under the launcher tags and prefixes logs carry, and
// copies of each with other digits.
TEST(LineFields, LinesOfOneLayoutHaveTheirFieldsInOnePlace) {
  std::mt19937 rng(31);
  std::size_t ranks = 0, lines = 0;
  auto place = [](std::string_view field, std::string_view line) {
    if (field.data() >= line.data() && field.data() <= line.data() + line.size())
      return std::string("@") + std::to_string(field.data() - line.data()) + "+" + std::to_string(field.size());
    return std::string(field);  // a name the model gives ("NCCL"), not the line's bytes
  };
  auto same_places = [&](const gpudiag::detail::LineFields& a, std::string_view la,
                         const gpudiag::detail::LineFields& b, std::string_view lb) {
    EXPECT_EQ(a.rank.has_value(), b.rank.has_value()) << la << "\n" << lb;
    EXPECT_EQ(place(a.rank_text, la), place(b.rank_text, lb)) << la << "\n" << lb;
    if (b.rank) {
      int value = 0;
      std::from_chars(b.rank_text.data(), b.rank_text.data() + b.rank_text.size(), value);
      EXPECT_EQ(*b.rank, value) << lb;
    }
    EXPECT_EQ(place(a.host, la), place(b.host, lb)) << la << "\n" << lb;
    EXPECT_EQ(place(a.timestamp, la), place(b.timestamp, lb)) << la << "\n" << lb;
    EXPECT_EQ(place(a.source, la), place(b.source, lb)) << la << "\n" << lb;
    EXPECT_EQ(a.severity, b.severity) << la << "\n" << lb;
    EXPECT_EQ(a.message_offset, b.message_offset) << la << "\n" << lb;
    EXPECT_EQ(place(a.message, la), place(b.message, lb)) << la << "\n" << lb;
    EXPECT_EQ(place(a.body, la), place(b.body, lb)) << la << "\n" << lb;
  };
  const std::string prefixes[] = {"", "[rank3]: ", "[default12]:", "  7: ", "gpu-node-03: ", "0: [rank0]: ",
                                  "dgx-b12:229161:229225 [5] NCCL INFO ", "2025-03-02 08:16:22,364 - INFO - ",
                                  "srun: error: gpu-node-01: task 3: ", "[2026-11-23 10:00:00] ",
                                  "I1221 13:42:36.293 1234 file.cc:12] ", "gpu-node-03:\t[rank1]:\t"};
  for (const auto& rule : gpudiag::testing::shipped_rules()->rules())
    for (const auto& example : rule.examples)
      for (const std::string& prefix : prefixes) {
        const std::string line = prefix + example.line;
        const auto original = read_line(line);
        const auto launcher = read_line(line, gpudiag::detail::Depth::launcher);
        for (int k = 0; k < 2; ++k) {
          std::string other = line;
          for (char& c : other)
            if (c >= '0' && c <= '9') c = static_cast<char>('0' + rng() % 10);
          same_places(original, line, read_line(other), other);
          same_places(launcher, line, read_line(other, gpudiag::detail::Depth::launcher), other);
          ranks += original.rank.has_value();
          ++lines;
        }
      }
  EXPECT_GT(lines, 10000u);
  EXPECT_GT(ranks, 5000u);
}

TEST(Numbers, ReadAsFromCharsReadsThem) {
  std::mt19937_64 rng(20261126);
  auto digits = [&](int n) {
    std::string d;
    for (int i = 0; i < n; ++i) d.push_back(static_cast<char>('0' + rng() % 10));
    return d;
  };
  // Decimals as logs print them, on both sides of every bound of the fast
  // path: 0 to 22 digits, the point anywhere or nowhere, exponents from -30
  // to 30 with and without a sign, and what may follow a number.
  const char* tails[] = {"", " ", "e", "E+", "e-", "x", ",", "."};
  for (int n = 0; n <= 22; ++n)
    for (int point = -1; point <= n; ++point)
      for (int round = 0; round < 40; ++round) {
        std::string s = digits(n);
        if (point >= 0) s = s.substr(0, static_cast<std::size_t>(point)) + "." + s.substr(static_cast<std::size_t>(point));
        if (round % 3 == 1) {
          const int e = static_cast<int>(rng() % 61) - 30;
          s.push_back(rng() % 2 ? 'e' : 'E');
          if (e < 0 || rng() % 2) s.push_back(e < 0 ? '-' : '+');
          s.append(std::to_string(std::abs(e)));
        }
        s += tails[rng() % std::size(tails)];
        expect_read_as_from_chars(s);
      }
  // The largest exact integer, one past it, the last exact power of ten, and
  // 2^64 + 1, which wraps to 1 in 64 bits.
  for (const char* s : {"18446744073709551617", "1844674407370955161.7", "9007199254740992", "9007199254740993", "9007199254740992e22", "1e22", "1e23",
                        "0.0000000000000000000001", "123456789012345678.9", "1e00001", "1e0001", ".5", "5.",
                        "-1", "+1", "", ".", "e5", "0e999999999999", "nan", "inf"})
    expect_read_as_from_chars(s);
  // And bytes at random from the characters of a number.
  const std::string alphabet = "0123456789.eE+-a ";
  for (int round = 0; round < 200000; ++round) {
    std::string s(rng() % 28, ' ');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    expect_read_as_from_chars(s);
  }
}

TEST(Text, InvalidUtf8IsReplacedByteByByte) {
  using gpudiag::detail::to_valid_utf8;
  const std::string r = "\xEF\xBF\xBD";  // U+FFFD
  EXPECT_EQ(to_valid_utf8("plain ascii"), "plain ascii");
  EXPECT_EQ(to_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"), "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  EXPECT_EQ(to_valid_utf8("a\xFF" "b"), "a" + r + "b");
  EXPECT_EQ(to_valid_utf8("\xC0\xAF"), r + r);          // overlong
  EXPECT_EQ(to_valid_utf8("\xED\xA0\x80x"), r + r + r + "x");  // a surrogate
  EXPECT_EQ(to_valid_utf8("end \xE2\x82"), "end " + r + r);    // cut short
  EXPECT_EQ(to_valid_utf8(std::string("nul\0here", 8)), std::string("nul\0here", 8));
  // Against a reading that decodes each sequence and then checks its code
  // point (not overlong, no surrogate, at most U+10FFFF), on random bytes.
  auto length = [](std::string_view s, std::size_t i) -> std::size_t {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) return 1;
    const std::size_t n = c >= 0xF0 && c <= 0xF7 ? 4 : c >= 0xE0 ? (c <= 0xEF ? 3 : 0) : c >= 0xC0 ? 2 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    std::uint32_t cp = c & (0x7F >> n);
    for (std::size_t k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (b & 0x3F);
    }
    const std::uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
    return n;
  };
  auto reference = [&](std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
      if (const std::size_t n = length(s, i)) out.append(s.substr(i, n)), i += n;
      else out += r, ++i;
    }
    return out;
  };
  std::mt19937 rng(7);
  const char pool[] = {'a', ' ', '\n', '\x80', '\xBF', '\xC3', '\xA9', '\xE2', '\x82', '\xAC', '\xF0', '\x9F', '\xED', '\xFF'};
  for (int t = 0; t < 20000; ++t) {
    std::string s(rng() % 12, 'a');
    for (char& c : s) c = pool[rng() % sizeof pool];
    ASSERT_EQ(to_valid_utf8(s), reference(s)) << t;
  }
}
