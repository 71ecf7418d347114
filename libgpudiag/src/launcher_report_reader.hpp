#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "gpudiag/diagnosis.hpp"
#include "match_sink.hpp"
#include "rule_set_impl.hpp"

namespace gpudiag::detail {

// Reads torchelastic's failure summary out of the lines launcher_report rules
// flag, into one entry per failed worker:
//
//   Failures:
//   [1]:
//     time      : 2026-11-22_09:37:25
//     host      : node-3
//     rank      : 0 (local_rank: 0)
//     exitcode  : -15 (pid: 9305)
//     traceback : Signal 15 (SIGTERM) received by PID 9305
//   Root Cause (first observed failure):
//   [0]:
//     ...
//
// A field line belongs to the summary only when it follows the summary's
// previous line closely, so a config dump's `rank : 3` elsewhere is not read.
class LauncherReportReader : public MatchSink {
 public:
  explicit LauncherReportReader(const RuleSet::Impl& rules);
  void on_hit(const LineHit& hit) override;
  // The role of the hits it reads (a stream hands it only those).
  static bool reads(Role role) { return role == Role::launcher_report; }
  void add_line(std::string_view text, std::uint64_t line);
  std::optional<LauncherReport> finish();

 private:
  enum class Section { none, others, root };
  void commit();         // files the open entry under its section
  void start_summary();  // a new summary begins; keeps the last complete one

  const RuleSet::Impl& rules_;
  Section section_ = Section::none;
  std::uint64_t last_line_ = 0;
  FailedWorker entry_;
  Section entry_section_ = Section::none;
  bool entry_open_ = false;
  LauncherReport current_;
  std::optional<LauncherReport> complete_;  // the last summary that named a root cause
};

}  // namespace gpudiag::detail
