#include "trajectory_builder.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "rank_prefix.hpp"

namespace gpudiag::detail {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }
bool is_alpha(char c) { c = lower(c); return c >= 'a' && c <= 'z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word(char c) { return is_alpha(c) || is_digit(c) || c == '_'; }

bool iequals_at(std::string_view s, std::size_t pos, std::string_view word) {
  if (pos + word.size() > s.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i)
    if (lower(s[pos + i]) != word[i]) return false;
  return true;
}

std::size_t find_caseless(std::string_view s, std::string_view word, std::size_t from) {
  for (std::size_t pos = from; pos + word.size() <= s.size(); ++pos)
    if (iequals_at(s, pos, word)) return pos;
  return std::string_view::npos;
}

// Skips what separates a key from its value: quotes, blanks, one ':' or '='.
std::size_t skip_separator(std::string_view s, std::size_t pos) {
  auto skip = [&](std::string_view set) {
    while (pos < s.size() && set.find(s[pos]) != std::string_view::npos) ++pos;
  };
  skip("'\" \t");
  if (pos < s.size() && (s[pos] == ':' || s[pos] == '=')) ++pos;
  skip("'\" \t");
  return pos;
}

// A number, nan or inf at `pos`, not followed by more of a word.
std::optional<double> read_value(std::string_view s, std::size_t pos, std::size_t* end = nullptr) {
  if (pos >= s.size()) return std::nullopt;
  bool negative = false;
  if (s[pos] == '+' || s[pos] == '-') {
    negative = s[pos] == '-';
    ++pos;
  }
  if (iequals_at(s, pos, "nan")) {
    if (pos + 3 < s.size() && is_alpha(s[pos + 3])) return std::nullopt;
    if (end) *end = pos + 3;
    return std::nan("");
  }
  if (iequals_at(s, pos, "inf")) {
    std::size_t e = pos + (iequals_at(s, pos, "infinity") ? 8 : 3);
    if (end) *end = e;
    return negative ? -INFINITY : INFINITY;
  }
  if (pos >= s.size() || !(is_digit(s[pos]) || s[pos] == '.')) return std::nullopt;
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data() + pos, s.data() + s.size(), v);
  if (ec != std::errc()) return std::nullopt;
  std::size_t e = static_cast<std::size_t>(ptr - s.data());
  if (e < s.size() && is_alpha(s[e])) return std::nullopt;  // "8bit", a version, an id
  if (end) *end = e;
  return negative ? -v : v;
}

// The word just before `pos` (skipping one blank), lower-cased.
std::string previous_word(std::string_view s, std::size_t pos) {
  std::size_t end = pos;
  while (end > 0 && (s[end - 1] == ' ' || s[end - 1] == '_')) --end;
  std::size_t start = end;
  while (start > 0 && is_alpha(s[start - 1])) --start;
  std::string w(s.substr(start, end - start));
  for (char& c : w) c = lower(c);
  return w;
}

std::optional<double> find_loss(std::string_view s) {
  for (std::size_t pos = 0; (pos = find_caseless(s, "loss", pos)) != std::string_view::npos;
       pos += 4) {
    std::size_t after = pos + 4;
    if (after < s.size() && is_word(s[after])) continue;  // loss_scale, losses
    if (pos > 0 && is_digit(s[pos - 1])) continue;
    std::string before = previous_word(s, pos);
    bool glued = pos > 0 && is_word(s[pos - 1]);  // train_loss, lm_loss, valloss
    if (before == "val" || before == "valid" || before == "validation" || before == "eval" ||
        before == "test" || before == "final" || before == "avg" || before == "mean" ||
        before == "best")
      continue;
    if (glued && !(before == "train" || before == "training" || before == "lm")) continue;
    if (auto v = read_value(s, skip_separator(s, after))) return v;
  }
  return std::nullopt;
}

std::optional<double> find_step(std::string_view s) {
  for (std::string_view key : {"iteration", "step", "iter"}) {
    for (std::size_t pos = 0; pos < s.size(); ++pos) {
      if (!iequals_at(s, pos, key)) continue;
      if (pos > 0 && is_alpha(s[pos - 1])) continue;  // global_step is fine, "steps" is not
      std::size_t after = pos + key.size();
      if (after < s.size() && is_alpha(s[after])) continue;
      std::size_t at = skip_separator(s, after);
      std::size_t end = 0;
      auto v = read_value(s, at, &end);
      if (v && std::isfinite(*v) && *v >= 0 && *v == std::floor(*v)) return v;
    }
  }
  return std::nullopt;
}

bool grad_norm_non_finite(std::string_view s) {
  for (std::string_view key : {"grad_norm", "grad norm"}) {
    std::size_t pos = 0;
    while ((pos = find_caseless(s, key, pos)) != std::string_view::npos) {
      pos += key.size();
      auto v = read_value(s, skip_separator(s, pos));
      if (v && !std::isfinite(*v)) return true;
    }
  }
  return false;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Spearman's rank correlation of the losses with their order in the run.
double trend(const std::vector<double>& loss) {
  std::size_t n = loss.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return loss[a] < loss[b]; });
  std::vector<double> rank(n);
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j + 1 < n && loss[order[j + 1]] == loss[order[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) rank[order[k]] = (static_cast<double>(i + j) / 2) + 1;
    i = j + 1;
  }
  double mean = (static_cast<double>(n) + 1) / 2, sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double x = static_cast<double>(i + 1) - mean, y = rank[i] - mean;
    sxy += x * y;
    sxx += x * x;
    syy += y * y;
  }
  return (sxx > 0 && syy > 0) ? sxy / std::sqrt(sxx * syy) : 0.0;
}

}  // namespace

ProgressReading parse_progress(std::string_view segment) {
  ProgressReading r;
  r.loss = find_loss(segment);
  if (r.loss) r.step = find_step(segment);
  r.grad_non_finite = grad_norm_non_finite(segment);
  return r;
}

TrajectoryBuilder::TrajectoryBuilder(const RuleSet::Impl& rules, std::size_t capacity)
    : rules_(rules), capacity_(std::max<std::size_t>(capacity, 16)) {}

void TrajectoryBuilder::on_hit(const LineHit& hit) {
  // Two progress rules matching one line still make one set of readings.
  if (rules_.rules[hit.rule].role != Role::progress || hit.line == last_line_) return;
  last_line_ = hit.line;
  add_line(hit.full, hit.line);
}

void TrajectoryBuilder::add_line(std::string_view text, std::uint64_t line) {
  RankTag tag = parse_rank_prefix(text);
  text.remove_prefix(tag.prefix_length);
  // tqdm redraws its bar with carriage returns: one line, many readings.
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t cr = text.find('\r', start);
    std::string_view seg = text.substr(start, cr == std::string_view::npos ? text.npos : cr - start);
    ProgressReading r = parse_progress(seg);
    if (r.loss) {
      if (!rank_chosen_) {
        rank_chosen_ = true;
        rank_ = tag.rank;
        t_.rank = tag.rank;
      }
      if (tag.rank != rank_) return;  // another rank's copy of the same run
      add(r, line);
    }
    if (cr == std::string_view::npos) break;
    start = cr + 1;
  }
}

void TrajectoryBuilder::add(const ProgressReading& r, std::uint64_t line) {
  LossReading x;
  x.loss = *r.loss;
  x.line = line;
  x.step_reported = r.step.has_value();
  x.step = r.step ? *r.step : static_cast<double>(t_.readings + 1);
  ++t_.readings;
  last_grad_non_finite_ = r.grad_non_finite;
  if (r.step) t_.max_step = std::max(t_.max_step.value_or(0), *r.step);
  if (!t_.first) t_.first = x;
  t_.last = x;
  if (!std::isfinite(x.loss)) {
    if (!t_.first_non_finite) t_.first_non_finite = x;
    return;
  }
  ++finite_;
  if (!t_.lowest || x.loss < t_.lowest->loss) t_.lowest = x;
  if (!t_.peak || x.loss > t_.peak->loss) t_.peak = x;
  if ((finite_ - 1) % stride_ != 0) return;
  t_.series.push_back(x);
  if (t_.series.size() >= capacity_) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < t_.series.size(); i += 2) t_.series[kept++] = t_.series[i];
    t_.series.resize(kept);
    stride_ *= 2;
  }
}

Trajectory TrajectoryBuilder::finish() const {
  Trajectory t = t_;
  if (t.readings == 0) return t;
  // The first finite reading is the baseline: a NaN at step 1 has no scale.
  const LossReading* first = nullptr;
  for (const auto& r : t.series)
    if (std::isfinite(r.loss)) {
      first = &r;
      break;
    }
  if (t.first_non_finite || last_grad_non_finite_) {
    t.shape = "non_finite";
  } else if (finite_ < 3 || !first) {
    t.shape = "too_short";
  } else if (first->loss > 0 && (t.peak->loss > 10 * first->loss || t.last->loss > 2 * first->loss)) {
    t.shape = "diverged";
  } else if (t.series.size() < 8) {
    t.shape = t.last->loss < first->loss ? "decreasing" : "inconclusive";
  } else {
    std::vector<double> loss;
    for (const auto& r : t.series) loss.push_back(r.loss);
    double mid = median(loss);
    double range = t.peak->loss - t.lowest->loss;
    std::size_t q = std::max<std::size_t>(2, loss.size() / 4);
    double late = median(std::vector<double>(loss.end() - static_cast<std::ptrdiff_t>(q), loss.end()));
    if (mid != 0 && range / std::fabs(mid) < 0.01) t.shape = "plateau";
    else if (first->loss > 0 && late >= 0.5 * first->loss && trend(loss) > -0.6) t.shape = "no_decrease";
    else t.shape = "decreasing";
  }
  return t;
}

}  // namespace gpudiag::detail
