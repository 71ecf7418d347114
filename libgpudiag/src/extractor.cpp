#include "extractor.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <atomic>
#include <mutex>

namespace gpudiag::detail {

struct Extractor::Compiled {
  pcre2_code* code = nullptr;
  uint32_t groups = 0;   // capture groups
  int value_group = -1;  // the group number, or -1 when not decided
  bool named = false;    // the value's group is named after it
  std::string problem;
  ~Compiled() {
    pcre2_code_free(code);
    pcre2_code_free(jitted.load());
  }

  // The code to match with: the interpreted one for the first matches, then a
  // copy compiled by PCRE2's JIT. Compiling costs more than a few interpreted
  // matches (a small log's extractions run once or twice each: JIT-compiling
  // them was a tenth of a small log's diagnosis), but many times less than
  // the matches of a rule that hits on every line of a long log.
  const pcre2_code* for_match() const {
    if (const pcre2_code* fast = jitted.load(std::memory_order_acquire)) return fast;
    if (uses.fetch_add(1, std::memory_order_relaxed) < kInterpreted) return code;
    // A copy: compiling the code in place could race with a match using it.
    std::call_once(jit_once, [this] {
      pcre2_code* copy = pcre2_code_copy(code);
      if (copy && pcre2_jit_compile(copy, PCRE2_JIT_COMPLETE) == 0) jitted.store(copy, std::memory_order_release);
      else pcre2_code_free(copy);  // no JIT here: the interpreter goes on
    });
    const pcre2_code* fast = jitted.load(std::memory_order_acquire);
    return fast ? fast : code;
  }

 private:
  static constexpr unsigned kInterpreted = 32;
  mutable std::atomic<unsigned> uses{0};
  mutable std::once_flag jit_once;
  mutable std::atomic<pcre2_code*> jitted{nullptr};
};

Extractor::Extractor(std::string name, std::string regex)
    : name_(std::move(name)), regex_(std::move(regex)) {}
Extractor::~Extractor() = default;

namespace {

// The number of the group named `name`, the first of them when alternatives
// share the name (PCRE2_DUPNAMES), or -1.
int named_group(pcre2_code* code, const std::string& name) {
  uint32_t count = 0, entry_size = 0;
  PCRE2_SPTR table = nullptr;
  pcre2_pattern_info(code, PCRE2_INFO_NAMECOUNT, &count);
  pcre2_pattern_info(code, PCRE2_INFO_NAMEENTRYSIZE, &entry_size);
  pcre2_pattern_info(code, PCRE2_INFO_NAMETABLE, &table);
  for (uint32_t i = 0; i < count; ++i) {
    PCRE2_SPTR entry = table + i * entry_size;
    if (name == reinterpret_cast<const char*>(entry + 2)) return (entry[0] << 8) | entry[1];
  }
  return -1;
}

// Every match runs under a step limit: a rule's regex that backtracks
// catastrophically on some line ("((a|aa)+)+$") gives up there, as no match,
// in about a millisecond, where PCRE2's default of ten million steps took
// tens of milliseconds a line. The shipped rules need a few hundred steps.
constexpr uint32_t kMatchSteps = 100'000;

pcre2_match_context* bounded() {
  static pcre2_match_context* const context = [] {
    pcre2_match_context* c = pcre2_match_context_create(nullptr);
    if (c) pcre2_set_match_limit(c, kMatchSteps);
    return c;
  }();
  return context;
}

// One match data block a thread, grown to the most groups a pattern it
// matched has: a block a match (and the heap frames PCRE2 keeps in it for the
// next match) was a tenth of the allocations of a small log's diagnosis.
pcre2_match_data* thread_match_data(uint32_t groups) {
  struct Held {
    pcre2_match_data* data = nullptr;
    uint32_t pairs = 0;
    ~Held() { pcre2_match_data_free(data); }
  };
  thread_local Held held;
  if (!held.data || held.pairs < groups + 1) {
    pcre2_match_data_free(held.data);
    held.pairs = groups + 1;
    held.data = pcre2_match_data_create(held.pairs, nullptr);
    if (!held.data) held.pairs = 0;
  }
  return held.data;
}

}  // namespace

const Extractor::Compiled& Extractor::compiled() const {
  std::call_once(once_, [this] {
    auto c = std::make_unique<Compiled>();
    int error = 0;
    PCRE2_SIZE offset = 0;
    c->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(regex_.data()), regex_.size(),
                            PCRE2_DUPNAMES, &error, &offset, nullptr);
    if (!c->code) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error, message, sizeof message);
      c->problem = "is not a valid regex: " + std::string(reinterpret_cast<char*>(message)) +
                   " at offset " + std::to_string(offset);
    } else {
      uint32_t& groups = c->groups;
      pcre2_pattern_info(c->code, PCRE2_INFO_CAPTURECOUNT, &groups);
      c->value_group = named_group(c->code, name_);
      c->named = c->value_group >= 0;
      if (c->value_group < 0 && groups == 1) c->value_group = 1;
      if (c->value_group < 0)
        c->problem = groups == 0
                         ? "needs a capture group around the value"
                         : "has " + std::to_string(groups) +
                               " capture groups: make the others (?:...) or name the value's "
                               "group (?<" + name_ + ">...)";
    }
    compiled_ = std::move(c);
  });
  return *compiled_;
}

std::string Extractor::problem() const { return compiled().problem; }

std::optional<std::string> Extractor::find(std::string_view line) const {
  const Compiled& c = compiled();
  if (c.value_group < 0) return std::nullopt;
  pcre2_match_data* match = thread_match_data(c.groups);
  if (!match) return std::nullopt;
  int rc = pcre2_match(c.for_match(), reinterpret_cast<PCRE2_SPTR>(line.data()), line.size(), 0, 0,
                       match, bounded());
  if (rc <= 0) return std::nullopt;
  // The value's group, if it took part; with duplicate names, the first of
  // them that did (as pcre2_substring_get_byname takes it).
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
  auto set = [&](int n) { return n < rc && ovector[2 * n] != PCRE2_UNSET; };
  int group = set(c.value_group) ? c.value_group : -1;
  if (c.named) {
    PCRE2_SPTR first = nullptr, last = nullptr;
    const int size = pcre2_substring_nametable_scan(c.code, reinterpret_cast<PCRE2_SPTR>(name_.c_str()), &first, &last);
    for (PCRE2_SPTR entry = first; group < 0 && size > 0 && entry <= last; entry += size)
      if (const int n = (entry[0] << 8) | entry[1]; set(n)) group = n;
  }
  if (group < 0) return std::nullopt;
  return std::string(line.substr(ovector[2 * group], ovector[2 * group + 1] - ovector[2 * group]));
}

std::map<std::string, std::string> extract_values(const RuleExtractors& fields,
                                                  std::string_view line) {
  std::map<std::string, std::string> values;
  for (const auto& field : fields)
    if (auto v = field->find(line)) values[field->name()] = std::move(*v);
  return values;
}

void check_extractions(const std::vector<Rule>& rules,
                       const std::vector<RuleExtractors>& extractors) {
  for (std::size_t r = 0; r < rules.size(); ++r)
    for (const auto& e : extractors[r])
      if (std::string problem = e->problem(); !problem.empty())
        throw RuleError(rules[r].source, "rule " + rules[r].id,
                        "extract \"" + e->name() + "\" " + problem);
}

}  // namespace gpudiag::detail
