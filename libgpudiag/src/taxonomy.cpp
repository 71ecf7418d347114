#include "gpudiag/taxonomy.hpp"

#include <algorithm>

#include "rule_loader.hpp"

namespace gpudiag {

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::none: return "none";
    case Outcome::non_finite_loss: return "non_finite_loss";
    case Outcome::diverging_loss: return "diverging_loss";
    case Outcome::resume_without_load: return "resume_without_load";
    case Outcome::too_few_steps: return "too_few_steps";
    case Outcome::completed: return "completed";
    case Outcome::undetermined: return "undetermined";
  }
  return "none";
}

std::string_view to_string(Tier tier) { return tier == Tier::wrapper ? "wrapper" : "specific"; }

const ClassInfo* Taxonomy::find(std::string_view id) const {
  auto it = std::find_if(classes.begin(), classes.end(), [&](const auto& c) { return c.id == id; });
  return it == classes.end() ? nullptr : &*it;
}

const ClassInfo* Taxonomy::for_outcome(Outcome outcome) const {
  if (outcome == Outcome::none) return nullptr;
  auto it = std::find_if(classes.begin(), classes.end(),
                         [&](const auto& c) { return c.outcome == outcome; });
  return it == classes.end() ? nullptr : &*it;
}

const ClassInfo* Taxonomy::for_signal(int signo) const {
  auto it = std::find_if(classes.begin(), classes.end(), [&](const auto& c) {
    return std::find(c.exit_signals.begin(), c.exit_signals.end(), signo) != c.exit_signals.end();
  });
  return it == classes.end() ? nullptr : &*it;
}

const ClassInfo* Taxonomy::for_exit_code(int code) const {
  auto it = std::find_if(classes.begin(), classes.end(), [&](const auto& c) {
    return std::find(c.exit_codes.begin(), c.exit_codes.end(), code) != c.exit_codes.end();
  });
  return it == classes.end() ? nullptr : &*it;
}

bool Taxonomy::is_g15(std::string_view id) const {
  return std::find(g15.begin(), g15.end(), id) != g15.end();
}

const Taxonomy& taxonomy() { return detail::builtin_catalog().taxonomy; }

}  // namespace gpudiag
