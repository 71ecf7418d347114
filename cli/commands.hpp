#pragma once

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "gpudiag/render.hpp"
#include "gpudiag/rules.hpp"

namespace gpudiag::cli {

// Exit statuses of the gpudiag command (documented in the README and --help).
// 0: it ran; 1: an input could not be read (diagnose) or an example failed
// (rules check); 2: a usage error, or rules that do not load, in every command;
// 3: a diagnosis matched what --fail-on names (diagnose, only when asked).
enum Status : int { kOk = 0, kInputFailed = 1, kUsage = 2, kMatched = 3 };

// The options of a command as the top-level help lays them out: "-f, --format
// FORMAT", descriptions in one column, wrapped at 80.
std::string format_options(const boost::program_options::options_description& opts);
// "  NAME  text wrapped at 80, continued in `column`", a line of a help list.
std::string help_row(const std::string& name, const std::string& text, std::size_t column = 24);

// The rule set the options name (--rules DIR, --no-cache), or the shipped
// one; on a rule file that does not load, says why on stderr and returns null
// (the command then exits with kUsage).
std::shared_ptr<const RuleSet> load_rules(const boost::program_options::variables_map& vm);

// The interpreter that has the gpudiag package: $GPUDIAG_PYTHON, else the
// python3 beside this binary (pip installs both into one bin/), else PATH's.
std::string python();

// "1048576", "500M", "2G": K, M, G and T are powers of 1024. None when it is
// not such a size or does not fit in 64 bits.
std::optional<std::uint64_t> parse_size(std::string_view s);

// Whether to colour output for `mode` (auto, always, never): auto colours a
// terminal unless NO_COLOR is set or TERM is dumb.
bool want_color(const std::string& mode, int fd = 1);
// A diagnosis as `format` (text, brief, json, jsonl) gives it: the one choice
// of renderer for diagnose, watch and run. json and jsonl end without a newline.
std::string render(const Diagnosis& d, const std::string& format, const TextStyle& style);

int run_diagnose(const std::vector<std::string>& args);
int run_command(const std::vector<std::string>& args);
int run_watch(const std::vector<std::string>& args);
int run_rules(const std::vector<std::string>& args);
int run_taxonomy(const std::vector<std::string>& args);

}  // namespace gpudiag::cli
