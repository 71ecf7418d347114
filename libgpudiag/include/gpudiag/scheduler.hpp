#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace gpudiag {

// What the scheduler recorded of a job: Slurm's `sacct --json`, `sacct -P`
// (`--parsable2`) or `scontrol show job`, read from whichever it is. It
// counts as evidence like the exit code: the diagnosis reads it as one more
// line after the log's last (its render()), which the scheduler rules match
// by its state, and its exit code and signal stand in for an exit code that
// was not given.
struct SchedulerRecord {
  std::string source;  // "sacct --json", "sacct -P", "scontrol show job"
  std::string job_id;
  std::string state;   // TIMEOUT, NODE_FAIL, CANCELLED, PREEMPTED, OUT_OF_MEMORY, FAILED, COMPLETED...
  std::string reason;  // scontrol's Reason, where the record has one
  std::optional<int> return_code, signal;
  std::optional<std::int64_t> elapsed_seconds, limit_seconds;
  std::string nodes;
  std::optional<int> restarts;  // requeues

  // The job's exit status as an exit code reads it: -signal, else the return code.
  std::optional<int> exit_status() const;
  // One line in scontrol's words: "slurm record: JobId=4714782 JobState=TIMEOUT
  // ExitCode=0:15 RunTime=01:00:04 TimeLimit=01:00:00 NodeList=gpu-[01-04] Restarts=0".
  std::string render() const;
};

// Reads a record from its text; throws InputError naming `name` and the
// problem when the text is none of the three forms, or holds several jobs.
SchedulerRecord parse_scheduler_record(std::string_view text, std::string_view name);
SchedulerRecord read_scheduler_record(const std::filesystem::path& path);

}  // namespace gpudiag
