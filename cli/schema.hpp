#pragma once

#include <string_view>

namespace gpudiag::cli {

// docs/diagnosis.schema.json as it was at build time: the field list of
// `diagnose --help` is read from it.
std::string_view diagnosis_schema();

}  // namespace gpudiag::cli
