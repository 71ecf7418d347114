#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gpudiag/diagnosis.hpp"
#include "gpudiag/taxonomy.hpp"

namespace gpudiag::detail {

// How the exit status relates to the class chosen.
enum class ExitReading { none, agrees, disagrees, alone, unexplained };

// shows / implies / cannot_decide for a resolved diagnosis, quoting its evidence.
Verdict build_verdict(const Diagnosis& d, const ClassInfo& info, std::size_t rule_count,
                      ExitReading exit_reading, const std::vector<std::string>& notes = {});

}  // namespace gpudiag::detail
