#pragma once

#include <span>
#include <string_view>

namespace gpudiag {

// One class of the failure taxonomy (docs: taxonomy.md). Ids are stable API.
struct ClassInfo {
  std::string_view id;
  std::string_view family;   // startup, gpu, distributed, signal, training,
                             // cluster, exception, baseline
  std::string_view owner;    // job, infra, scheduler, none
  std::string_view g15;      // default projection onto the published 15 classes
  std::string_view title;    // a few words for a terminal
  std::string_view cause;    // what the evidence implies happened
  std::string_view action;   // the next thing to do
  std::string_view rerun;    // whether a plain rerun can help
  std::string_view unknowable;  // what a log of this class cannot tell
};

std::span<const ClassInfo> all_classes();

// nullptr when `id` is not a class of the taxonomy.
const ClassInfo* find_class(std::string_view id);

// The 15 classes of the published corpus; `generic` is the fallback outside them.
std::span<const std::string_view> g15_classes();
bool is_g15_class(std::string_view id);

}  // namespace gpudiag
