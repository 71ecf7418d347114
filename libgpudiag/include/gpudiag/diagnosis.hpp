#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
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
  std::string severity;     // the severity the line states (see Severity), or empty
};

// Something worth knowing that is not the primary class, with its values as
// fields: a caller never has to parse `message`.
struct Finding {
  // cascade: a consequence of the root cause on another rank; recovered: a
  // failure the run survived; after_completion: a process failed on its way
  // out, after training ended; trajectory: the loss went wrong before another
  // cause ended the run; stop: how the job was stopped, after the loss had
  // gone wrong; also_matched: another cause, set aside; exit_code: the exit
  // status points elsewhere; context: a line worth knowing.
  std::string kind;
  std::string cls;
  std::string rule;                  // the rule that matched, or empty
  std::optional<std::uint64_t> line; // where, when a line shows it
  std::optional<int> rank;
  // Why it is not the cause, as a code: cascade_of_root, completed_after,
  // trained_after, after_completion_line, after_last_reading, earlier_rank,
  // rule_order, exit_code_disagrees, loss_<shape>, context.
  std::string reason;
  std::string message;  // the same, in English
  std::optional<Evidence> evidence;
};

// One loss value read from a progress line.
struct LossReading {
  std::uint64_t step = 0;   // the step the line reports, else the reading's ordinal (1-based)
  double loss = 0;          // may be NaN or infinite
  std::uint64_t line = 0;   // 1-based
  bool step_reported = false;
};

// One value of a quantity other than the training loss, read from a line.
struct Reading {
  std::uint64_t step = 0;   // the step the line reports, else the reading's ordinal (1-based)
  double value = 0;         // may be NaN or infinite
  std::uint64_t line = 0;   // 1-based
  bool step_reported = false;
};

// A quantity over the run (the evaluation loss, the gradient norm, the
// learning rate, the loss scale, the step time): its exact extremes and an
// evenly downsampled series, in bounded memory.
struct Series {
  std::uint64_t readings = 0;
  std::optional<Reading> first, last, lowest, peak;  // lowest and peak: finite readings
  // Evenly downsampled (512 readings at most) plus the first, last, lowest and
  // peak readings wherever the stride fell; non-finite readings at their steps.
  std::vector<Reading> series;
};

// What the loss did over the run.
enum class TrajectoryShape {
  none,          // no loss was read
  too_short,     // fewer than 3 finite readings
  inconclusive,  // too few readings to call a trend
  decreasing,
  non_finite,    // NaN/Inf loss (or gradient norm at the last reading)
  diverged,      // rose far above its first value
  plateau,       // flat
  no_decrease,   // never fell meaningfully below its first value
};
std::string_view to_string(TrajectoryShape shape);

// The loss trajectory of one rank (the first that reported a loss), read from
// the progress lines of HF Trainer, Lightning, Megatron-LM, DeepSpeed, Keras
// and plain `step N loss X` loops.
struct Trajectory {
  TrajectoryShape shape = TrajectoryShape::none;
  std::uint64_t readings = 0;        // every loss reading of that rank
  std::optional<int> rank;           // the rank read, when lines carry rank prefixes
  std::optional<std::uint64_t> max_step;  // the largest step a line reports
  // The epoch the first reading's line states, when it states one: past the
  // first epochs, the log begins mid-run (a resumed run, or a piece of one).
  std::optional<double> first_epoch;
  std::optional<LossReading> first, last, lowest, peak, first_non_finite;
  // Every reading, NaN and Inf at their steps, evenly downsampled past 512,
  // plus the first, last, lowest, peak and first non-finite readings
  // wherever the stride fell.
  std::vector<LossReading> series;
  // The evaluation (validation, test) loss of the same rank, never mixed into
  // the training loss above: `eval_loss`, `val_loss`, `Validation - Loss: x`.
  Series evaluation;
  // What the same progress lines report beside the training loss: the
  // gradient norm, the learning rate, mixed precision's loss scale, and the
  // time of one step in seconds (tqdm's s/it or it/s, Megatron-LM's elapsed
  // time per iteration, `dt`, `step_time`), and the items (tokens, samples,
  // examples, images) processed per second.
  Series grad_norm, learning_rate, loss_scale, step_time, throughput;
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

// How the input was stored, and whether all of it could be read.
struct InputFormat {
  std::string compression;  // "gzip", "zstd", "bzip2", "xz"; empty for text
  std::string container;    // "docker_json", "cri": container runtime records; empty for plain lines
  std::string encoding;     // "utf-16le", "utf-16be": read as UTF-8; empty for UTF-8 (or any other bytes)
  // Why the text ends early (a truncated or corrupt archive); empty when the
  // whole input was read. The diagnosis is of the text before it.
  std::string damage;
  std::uint64_t damage_at = 0;  // the byte of the stored input where it broke
};

struct Diagnosis {
  std::string path;   // the input as given ("-" for stdin); empty for bytes
  std::string cls;    // fine class id
  std::string title;  // the class's title
  std::string g15 = "generic";
  std::string family;
  std::string owner = "none";
  double confidence = 0.0;
  Verdict verdict;
  std::vector<Evidence> evidence;
  std::vector<Finding> findings;
  Trajectory trajectory;
  std::optional<LauncherReport> launcher;  // when the log holds a failure summary
  std::optional<int> exit_code;
  std::uint64_t bytes = 0;  // of text scanned (decompressed, unwrapped)
  std::uint64_t lines = 0;
  InputFormat input;
};

}  // namespace gpudiag
