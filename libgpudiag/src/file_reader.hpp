#pragma once

#include <cstdint>

namespace gpudiag::detail {

// The files diagnose_file has read ahead on a second thread in this
// process (DiagnoseOptions::read_ahead), for tests to know the way taken.
std::uint64_t files_read_ahead();

}  // namespace gpudiag::detail
