#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpudiag {

// One line of the log that a rule matched.
struct Evidence {
  std::string rule;
  std::string cls;
  std::uint64_t line = 0;    // 1-based
  std::uint64_t offset = 0;  // byte offset of the line's first byte in the input
  std::string text;          // the line, valid UTF-8, without its line ending
  bool truncated = false;    // the line was longer than the text cap
  std::uint64_t count = 0;   // lines this rule matched in the whole log
  std::map<std::string, std::string> values;  // extracted by the rule
  std::optional<int> rank;  // the rank whose prefix tags the line
  std::string host;         // the host the prefix names, if any
};

// Something worth knowing that is not the primary class.
struct Finding {
  std::string kind;  // e.g. "also_matched"
  std::string cls;
  std::string message;
  std::optional<Evidence> evidence;
};

// One loss value read from a progress line.
struct LossReading {
  double step = 0;          // the step the line reports, else the reading's ordinal (1-based)
  double loss = 0;          // may be NaN or infinite
  std::uint64_t line = 0;   // 1-based
  bool step_reported = false;
};

// The loss trajectory of one rank (the first that reported a loss), read from
// the progress lines of HF Trainer, Lightning, Megatron-LM, DeepSpeed, Keras
// and plain `step N loss X` loops.
struct Trajectory {
  // none: no loss was read; too_short: fewer than 3 finite readings;
  // decreasing; inconclusive: too few readings to call a trend;
  // non_finite: NaN/Inf loss (or gradient norm at the last reading);
  // diverged: rose far above its first value; plateau: flat;
  // no_decrease: never fell meaningfully below its first value.
  std::string shape = "none";
  std::uint64_t readings = 0;        // every loss reading of that rank
  std::optional<int> rank;           // the rank read, when lines carry rank prefixes
  std::optional<double> max_step;    // the largest step a line reports
  std::optional<LossReading> first, last, lowest, peak, first_non_finite;
  std::vector<LossReading> series;   // evenly downsampled, at most 512 readings
};

// One failed worker as the launcher's failure summary lists it (torchelastic's
// ChildFailedError table: time, host, rank, exitcode, error_file, traceback).
struct FailedWorker {
  std::optional<int> rank;        // global rank
  std::optional<int> local_rank;
  std::string host;
  std::string time;               // as printed, e.g. 2026-11-22_09:37:25
  std::optional<int> exit_code;
  std::optional<int> signal;      // the signal that ended it, if one did
  std::string signal_name;        // e.g. SIGABRT
  std::uint64_t line = 0;         // 1-based line of the entry's first field
};

// The launcher's failure summary: the worker it observed failing first and
// the others that failed after it. The last summary in the log is kept.
struct LauncherReport {
  std::optional<FailedWorker> root_cause;
  std::vector<FailedWorker> other_failures;  // at most 64 kept
  std::uint64_t other_failure_count = 0;     // all of them
};

struct Verdict {
  std::vector<std::string> shows;          // what the log shows, quoted
  std::vector<std::string> implies;        // cause, owner, next action, rerun
  std::vector<std::string> cannot_decide;  // what this log cannot tell
};

struct Diagnosis {
  std::string cls = "unknown";  // fine class id
  std::string g15 = "generic";
  std::string family = "baseline";
  std::string owner = "none";
  double confidence = 0.0;
  Verdict verdict;
  std::vector<Evidence> evidence;
  std::vector<Finding> findings;
  Trajectory trajectory;
  std::optional<LauncherReport> launcher;  // when the log holds a failure summary
  std::optional<int> exit_code;
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
};

}  // namespace gpudiag
