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
};

// Something worth knowing that is not the primary class.
struct Finding {
  std::string kind;  // e.g. "also_matched"
  std::string cls;
  std::string message;
  std::optional<Evidence> evidence;
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
  std::optional<int> exit_code;
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
};

}  // namespace gpudiag
