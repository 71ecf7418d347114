#pragma once

#include <boost/program_options/variables_map.hpp>
#include <memory>
#include <string>
#include <vector>

#include "gpudiag/rules.hpp"

namespace gpudiag::cli {

// Exit statuses of the gpudiag command (documented in the README and --help).
// 0: it ran; 1: an input could not be read (diagnose) or an example failed
// (rules check); 2: a usage error, or rules that do not load, in every command.
enum Status : int { kOk = 0, kInputFailed = 1, kUsage = 2 };

// The rule set the options name (--rules DIR, --no-cache), or the shipped
// one; on a rule file that does not load, says why on stderr and returns null
// (the command then exits with kUsage).
std::shared_ptr<const RuleSet> load_rules(const boost::program_options::variables_map& vm);

int run_diagnose(const std::vector<std::string>& args);
int run_rules(const std::vector<std::string>& args);
int run_taxonomy(const std::vector<std::string>& args);

}  // namespace gpudiag::cli
