#pragma once

#include <optional>
#include <string_view>

#include "gpudiag/rules.hpp"

namespace gpudiag::detail {

// One log line split into the fields that the program printing it put there.
// Launchers, schedulers and logging libraries wrap a program's message in
// prefixes; this grammar is the one place that knows them:
//   rank or host      [rank3]:  [default3]:  srun --label "3: "  pdsh "gpu-node-03: "
//                     NCCL "host:pid:tid [3] NCCL INFO"  Ray "(RayTrainWorker pid=12, ip=10.0.0.2) "
//   timestamp         2025-03-02 08:16:22,364   2024/10/10 01:27:51   [2025-...]
//                     glog/c10 "I1221 13:42:36.29 1234 file.cc:12]"  "[W1221 ... file:1]"
//   severity, source  INFO:logger:  "- mmcls - INFO -"  "[INFO]"  "| WARNING |"
//                     "logger: [WARNING]"  "[NeMo W ...]"  "file.py:12: UserWarning:"
//                     "[2025-10-21 01:39:33 resnet18] (main.py 119): INFO"
// What is left is the message; anchored patterns match at its start, past any
// decoration (emoji, rules of dashes or equals signs).
struct LineFields {
  std::optional<int> rank;
  std::string_view rank_text;  // the rank's digits in the line
  std::string_view host;
  std::string_view timestamp;
  Severity severity = Severity::unknown;
  std::string_view source;   // the logger or program the prefix names
  std::size_t message_offset = 0;
  std::string_view message;  // the line from message_offset on
  // The message through every redraw of a line a progress bar redrew with
  // carriage returns (its readings), from where the first one's prefix ended;
  // else the message.
  std::string_view body;
};

// How far to read: `launcher` stops after the rank and host tags (what a
// reader needs to drop other ranks' copies of a line cheaply); its message is
// the rest of the line.
enum class Depth { launcher, full };

LineFields read_line(std::string_view line, Depth depth = Depth::full);

// The rest of a line whose launcher tags `launcher` holds (read_line's
// Depth::launcher answer for the same line): the full reading, without
// reading the tags again.
LineFields read_line(std::string_view line, const LineFields& launcher);

}  // namespace gpudiag::detail
