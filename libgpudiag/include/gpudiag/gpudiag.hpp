#pragma once

// Everything a user of the library needs.
#include "gpudiag/diagnose.hpp"
#include "gpudiag/diagnosis.hpp"
#include "gpudiag/inputs.hpp"
#include "gpudiag/render.hpp"
#include "gpudiag/rules.hpp"
#include "gpudiag/scheduler.hpp"
#include "gpudiag/taxonomy.hpp"
#include "gpudiag/version.hpp"
