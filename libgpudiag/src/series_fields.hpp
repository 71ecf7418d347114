#pragma once

#include <array>
#include <type_traits>
#include <utility>

#include "gpudiag/diagnosis.hpp"

namespace gpudiag::detail {

// The quantities a trajectory reads beside the training loss, by their JSON
// names: one list for the writer, the reader and the builder.
template <class T>  // Trajectory or const Trajectory
auto value_series(T& t) {
  using S = std::conditional_t<std::is_const_v<T>, const Series, Series>;
  return std::array<std::pair<const char*, S*>, 6>{{{"evaluation", &t.evaluation},
                                                     {"grad_norm", &t.grad_norm},
                                                     {"learning_rate", &t.learning_rate},
                                                     {"loss_scale", &t.loss_scale},
                                                     {"step_time", &t.step_time},
                                                     {"throughput", &t.throughput}}};
}

}  // namespace gpudiag::detail
