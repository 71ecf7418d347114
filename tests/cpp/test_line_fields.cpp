#include <gtest/gtest.h>

#include <string>

#include "line_fields.hpp"

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
      {"2022-10-09 06:31:00,973 - mmcls - INFO - Epoch [1][100/5005]", Severity::info, "Epoch [1][100/5005]"},
      {"[2023-12-03 14:53:32,330] torch._dynamo.convert_frame: [WARNING] FileNotFoundError: x",
       Severity::warning, "FileNotFoundError: x"},
      {"[2025-09-21 09:28:23,321 INFO] Step 5000/ 5000;", Severity::info, "Step 5000/ 5000;"},
      {"2025-10-02 14:29:20,764 - INFO - [__main__] - \xf0\x9f\x8e\x89 === Training Complete ===",
       Severity::info, "Training Complete ==="},
      {"[2024-01-01 12:00:00,000] [INFO] [engine.py:123:step] msg", Severity::info, "msg"},
      {"[rank0]:[W1221 13:42:36.291482119 ProcessGroupNCCL.cpp:1524] Warning: x", Severity::warning,
       "Warning: x"},
      {"[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught", Severity::error, "[Rank 1] Watchdog caught"},
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
