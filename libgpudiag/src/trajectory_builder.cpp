#include "trajectory_builder.hpp"

#include "series_fields.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <numeric>
#include <span>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "line_fields.hpp"
#include "text_util.hpp"

namespace gpudiag::detail {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

bool iequals_at(std::string_view s, std::size_t pos, std::string_view word) {
  if (pos + word.size() > s.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i)
    if (lower(s[pos + i]) != word[i]) return false;
  return true;
}

// Where the keywords the reader looks for begin in a segment. Found in one
// pass, because every line that mentions the loss comes through here.
struct KeywordSites {
  struct List {
    static constexpr std::size_t kMax = 16;  // more mentions than this are not a progress line
    std::array<std::size_t, kMax> at;  // only the first n are set
    std::size_t n = 0;
    void add(std::size_t pos) {
      if (n < kMax) at[n++] = pos;
    }
    const std::size_t* begin() const { return at.data(); }
    const std::size_t* end() const { return at.data() + n; }
  };
  List loss, step, iter, iteration, epoch, grad_norm;  // grad_norm holds "grad_norm" and "grad norm"
  // The step time's markers: tqdm's rates, "dt", "time" (`data_time` too).
  List per_it, it_per, dt, time;
  List lr, learning_rate;  // "lr"; "learning_rate" and "learning rate"
  List per_second;  // a '/' before "s" or "sec", or "_per_sec": a rate's unit

  // Whether a word may name an evaluation ("val", "eval", "test", "dev"
  // begin one): without it no evaluation loss is looked for.
  bool evaluation = false;
  // Whether a `reward` key (not DPO's implicit `rewards/chosen`) is there.
  bool reward = false;

  explicit KeywordSites(std::string_view s) {
    for_each_candidate(s, [&](std::size_t pos) { note(s, pos); });
  }

 private:
  // Records the keyword that begins at `pos`, if one does.
  void note(std::string_view s, std::size_t pos) {
    switch (lower(s[pos])) {
      case 'l':
        if (iequals_at(s, pos, "loss")) loss.add(pos);
        else if (iequals_at(s, pos, "lr")) lr.add(pos);
        else if (iequals_at(s, pos, "learning") &&
                 (iequals_at(s, pos + 8, "_rate") || iequals_at(s, pos + 8, " rate")))
          learning_rate.add(pos);
        break;
      case 's':
        if (iequals_at(s, pos, "step")) step.add(pos);
        else if (iequals_at(s, pos, "s/it")) per_it.add(pos);
        break;
      case 'i':
        if (iequals_at(s, pos, "iter")) {
          iter.add(pos);
          if (iequals_at(s, pos + 4, "ation")) iteration.add(pos);
        } else if (iequals_at(s, pos, "it/s")) {
          it_per.add(pos);
        }
        break;
      case 'e':
        if (iequals_at(s, pos, "epoch")) epoch.add(pos);
        else if (iequals_at(s, pos, "eval")) evaluation = true;
        break;
      case 'v':
        if (iequals_at(s, pos, "val")) evaluation = true;
        break;
      case 'g':
        if (iequals_at(s, pos, "grad") && (iequals_at(s, pos + 4, "_norm") || iequals_at(s, pos + 4, " norm")))
          grad_norm.add(pos);
        break;
      case 'r':
        if (iequals_at(s, pos, "reward") && !(pos + 6 < s.size() && (is_alpha(s[pos + 6]) || is_digit(s[pos + 6]) || s[pos + 6] == '/')) &&
            !(pos > 0 && is_alpha(s[pos - 1])))
          reward = true;
        break;
      case 'd':
        if (iequals_at(s, pos, "dt")) dt.add(pos);
        else if (iequals_at(s, pos, "dev")) evaluation = true;
        break;
      case 't':
        if (iequals_at(s, pos, "time")) time.add(pos);
        else if (iequals_at(s, pos, "test")) evaluation = true;
        break;
      case '/':
        if (iequals_at(s, pos + 1, "s") && !(pos + 2 < s.size() && is_alpha(s[pos + 2]) &&
                                              !iequals_at(s, pos + 1, "sec")))
          per_second.add(pos);
        break;
      case '_':
        if (iequals_at(s, pos, "_per_sec")) per_second.add(pos);
        break;
      default: break;
    }
  }

  // The first two letters of every keyword `note` knows, lower-cased. A
  // position whose two bytes are none of these begins no keyword.
  static constexpr char kOpenings[][2] = {{'l', 'o'}, {'l', 'r'}, {'l', 'e'}, {'s', 't'}, {'s', '/'},
                                          {'i', 't'}, {'e', 'p'}, {'e', 'v'}, {'v', 'a'}, {'g', 'r'},
                                          {'d', 't'}, {'d', 'e'}, {'t', 'i'}, {'t', 'e'}, {'/', 's'},
                                          {'_', 'p'}, {'r', 'e'}};

  static bool opens_keyword(char a, char b) {
    a = lower(a);
    b = lower(b);
    for (const auto& o : kOpenings)
      if (a == o[0] && b == o[1]) return true;
    return false;
  }

  // Calls `f` with every position where a keyword may begin, in order. Most
  // bytes of a progress line begin none: sixteen at a time are ruled out by
  // their first two letters (a byte-at-a-time switch was most of the cost of
  // reading a progress line).
  template <class F>
  static void for_each_candidate(std::string_view s, F&& f) {
    std::size_t pos = 0;
#if defined(__SSE2__)
    // Every keyword is two bytes or more: the last byte begins none.
    for (; pos + 17 <= s.size(); pos += 16) {
      std::uint32_t mask = openings_mask(s.data() + pos);
      while (mask) {
        f(pos + static_cast<std::size_t>(__builtin_ctz(mask)));
        mask &= mask - 1;
      }
    }
#endif
    for (; pos + 1 < s.size(); ++pos)
      if (opens_keyword(s[pos], s[pos + 1])) f(pos);
  }

#if defined(__SSE2__)
  static __m128i lower16(__m128i v) {
    const __m128i upper = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('A' - 1)),
                                        _mm_cmplt_epi8(v, _mm_set1_epi8('Z' + 1)));
    return _mm_or_si128(v, _mm_and_si128(upper, _mm_set1_epi8(0x20)));
  }

  // Bit i set where bytes i and i + 1 of p[0, 17) open a keyword.
  static std::uint32_t openings_mask(const char* p) {
    const __m128i first = lower16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    const __m128i second = lower16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 1)));
    __m128i any = _mm_setzero_si128();
    for (const auto& o : kOpenings)
      any = _mm_or_si128(any, _mm_and_si128(_mm_cmpeq_epi8(first, _mm_set1_epi8(o[0])),
                                            _mm_cmpeq_epi8(second, _mm_set1_epi8(o[1]))));
    return static_cast<std::uint32_t>(_mm_movemask_epi8(any));
  }
#endif
};

// A parse reads its numbers through four primitives (a value after a key, a
// number before a unit, seconds, a bar's whole count), and what it does with
// the segment depends on its layout (the keyword sites, the characters around
// them) and on what it asks of each number it read: was there one, where did
// it end, and, where the caller asks, is it NaN or infinite, negative, zero,
// whole, 1e6 or more, past 1e15. While a segment is read in full its reads
// are taped; a later segment of its layout is read by reading the same
// numbers again, and where each answers the same questions alike the full
// parse would take the same path, so each reading is the read it came from
// before, derived the same way (a plan matches every reading to its read, and
// is made only where that match is unambiguous).
enum class Read : std::uint8_t { value, before, seconds, whole };

// The questions a caller asks of a number (bits of answers_of()).
enum Ask : std::uint16_t {
  kFinite = 2 | 4,
  kNegative = 8,
  kZero = 16,
  kWhole = 32,
  kMillion = 64,
  kHuge = 128,
};

// How a reading is derived from its read: as read, per thousand (ms), times
// 1e-3 (a bare number in ms), inverted (a rate).
enum class Derive : std::uint8_t { absent, same, per_thousand, times_milli, inverse };

// Where the parts of a number lie in every segment of a layout: a layout
// fixes where digits are, not which, so a replay reads them without looking
// for them. Set (plain) only for a number that read_double() reads by its
// exact path whatever its digits: at most 19 of them, an exponent of at most
// 3; any other is read as it was found.
struct NumberForm {
  static constexpr std::uint8_t kNoPoint = 0xFF;
  bool plain = false;
  bool negative = false;          // a minus before it, read with it
  bool exponent_negative = false;
  std::uint8_t mantissa = 0;      // the digits and point, from `start`
  std::uint8_t point = kNoPoint;  // the point's place in the mantissa
  std::uint8_t exponent = 0;      // the exponent's digits, which end the number (0: none)
  std::uint32_t start = 0;        // the first digit or point
};

struct Taped {
  Read kind;
  Derive how;             // for seconds: as its unit says
  std::uint16_t asks;     // the questions asked of it
  std::uint16_t answers;  // answers_of() its number
  std::uint32_t pos;      // where the primitive was asked to read
  std::uint32_t end;      // where its number ended; 0 when there was none
  double value;
  std::uint64_t whole;
  NumberForm form;        // set by make_plan()
};

struct Tape {
  static constexpr std::size_t kMax = 48;
  std::array<Taped, kMax> reads;  // the first n set
  std::size_t n = 0;
  bool overflow = false;
  void add(const Taped& t) {
    if (n < kMax) reads[n++] = t;
    else overflow = true;
  }
};

// The tape of the parse under way on this thread, if one is taped.
thread_local Tape* tape = nullptr;

std::uint16_t answers_of(const std::optional<double>& v, std::uint16_t asks) {
  if (!v) return 0;
  std::uint16_t a = 1;
  if (!asks) return a;  // most reads are asked nothing more
  const double x = *v;
  if (std::isnan(x)) a |= 2;
  if (std::isinf(x)) a |= 4;
  if (x < 0) a |= 8;
  if (x == 0) a |= 16;
  if ((asks & kWhole) && std::isfinite(x) && x == std::floor(x)) a |= 32;
  if (x >= 1e6) a |= 64;
  if (x > 1e15) a |= 128;
  return a & (asks | 1);
}

std::uint16_t answers_of(const std::optional<std::uint64_t>& v, std::uint16_t asks) {
  if (!v) return 0;
  return (*v == 0 ? 1 | kZero : 1) & (asks | 1);
}

struct Source {
  std::uint8_t read = 0;
  Derive how = Derive::absent;
};

// A number's place among the numbers of one form, from its text alone: the
// digits of a fixed-point mantissa stand at the same places in each, the
// point too, so its bytes compare as its values do; where an exponent
// follows a mantissa that starts with a digit other than 0 (as printf's %e
// writes it), the exponent decides first (its sign is the layout's: a
// negative one's digits are complemented). Negative numbers compare by
// magnitude: a skim asks only whether a number lies within two others.
struct NumberKey {
  std::uint64_t exponent = 0;       // its digits' bytes, big-endian
  std::uint64_t high = 0, low = 0;  // the mantissa's bytes, big-endian, in the words it lies in
  // The mantissa's words compared as one number (a compare and a borrow),
  // not in turn.
  friend bool operator<(const NumberKey& a, const NumberKey& b) {
    __extension__ using Wide = unsigned __int128;
    if (a.exponent != b.exponent) return a.exponent < b.exponent;
    return (Wide{a.high} << 64 | a.low) < (Wide{b.high} << 64 | b.low);
  }
};

struct Plan {
  bool ready = false;
  std::size_t n = 0;
  std::array<Taped, Tape::kMax> reads;
  Source step, epoch, loss, evaluation_loss, step_seconds, grad_norm, learning_rate, loss_scale,
      items_per_second, bar_position, bar_total;
  // What a skim (TrajectoryBuilder::Skims) needs: the plan's number, unique
  // in the process (a thread's layouts are shared by the builders it runs);
  // whether a segment of it may be counted without reading its numbers; the
  // numbers whose values a series' extremes or the largest step could take
  // (`tracked`), the reads whose answers to the parse's questions may
  // differ from segment to segment (`asked`), and the series beside the
  // loss that its readings feed (bit i: kBeside[i]).
  // Where a tracked number's key (NumberKey) lies, fixed by the layout as
  // its length is: its mantissa's bytes within the sixteen from `window`,
  // its exponent's digits ending at `exponent_end`.
  struct Keyed {
    std::uint8_t read = 0;
    bool exponent = false;  // an exponent follows the mantissa
    std::uint32_t start = 0, window = 0, exponent_end = 0;
    std::uint64_t high_mask = 0, low_mask = 0;  // the mantissa's bytes in the window's two words
    std::uint64_t exponent_mask = 0, flip = 0;  // the exponent's digits in the word that ends with them
  };
  std::uint64_t id = 0;
  bool skimmable = false;
  static constexpr std::size_t kTracked = 8;
  static constexpr std::uint8_t kNone = 0xFF;
  std::uint8_t tracked_n = 0, asked_n = 0, beside = 0;
  // The place in `tracked` of the step's read (0, the first), where no
  // other reading comes from it: a step matters for its largest only
  // (Trajectory::max_step).
  std::uint8_t step_only = kNone;
  std::array<Keyed, kTracked> tracked{};
  std::array<std::uint8_t, Tape::kMax> asked{};
};

// The readings beside the loss that feed series of their own (the order of
// TrajectoryBuilder::Skims::kFeeds).
constexpr Source Plan::*kBeside[] = {&Plan::evaluation_loss, &Plan::grad_norm,    &Plan::learning_rate,
                                     &Plan::loss_scale,      &Plan::step_seconds, &Plan::items_per_second};

// The keyword sites of the last few line layouts. A run prints its progress
// lines from a handful of format strings: lines that differ only in their
// digits hold their keywords at the same places (no keyword holds a digit,
// and `note` looks at no digit), so the sites of a line whose bytes, digits
// aside, equal a recent one's are that line's.
class SitesCache {
 public:
  static constexpr std::size_t kMaxForm = 1024, kEntries = 8;

  struct Entry {
    std::size_t size = SIZE_MAX;
    std::array<char, kMaxForm> form;
    KeywordSites sites{std::string_view()};
    Plan plan;          // the parse of a segment of this layout, to replay
    bool kept = false;  // a layout kept (a plan may be made for it)
    std::uint32_t generation = 0;  // counts the layouts the entry has held
  };

  // Which entry each segment tag found last (a tag names one layout; the
  // segments of a tqdm line, each with its own tag, share one): a direct-
  // mapped table, as a tag kept in each entry held only the last of them,
  // and the redraws of a bar were compared byte by byte at every segment.
  struct TagSlot {
    std::uint64_t tag = 0;
    std::uint32_t entry = 0, generation = 0;
  };

  // The entry of the segment's layout; a segment too long to keep gets one
  // of its own, used once. `tag`, where not 0, names the segment's layout
  // (the line's layout and the segment's place in it, which make it): a
  // segment whose tag found an entry before is not compared byte by byte.
  Entry& of(std::string_view s, std::uint64_t tag = 0) {
    if (tag != 0) {  // inline: most of a run's segments are found so
      const TagSlot& slot = tag_slot(tag);
      if (slot.tag == tag) {
        Entry& e = entries_[slot.entry];
        if (e.generation == slot.generation && e.size == s.size()) return e;
      }
    }
    return find(s, tag);
  }

 private:
  TagSlot& tag_slot(std::uint64_t tag) { return tags_[(tag * 0x9E3779B97F4A7C15ull) >> (64 - kTagBits)]; }

  // of() for a segment its tag does not find: compared with the layouts
  // kept, else kept in place of the oldest.
  __attribute__((noinline)) Entry& find(std::string_view s, std::uint64_t tag) {
    if (s.size() > kMaxForm) {
      uncached_.sites = KeywordSites(s);
      return uncached_;
    }
    TagSlot& slot = tag_slot(tag);
    normalise(s);
    for (std::uint32_t i = 0; i < kEntries; ++i)
      if (Entry& e = entries_[i]; e.size == s.size() && std::memcmp(e.form.data(), form_.data(), s.size()) == 0) {
        if (tag != 0) slot = {tag, i, e.generation};
        return e;
      }
    Entry& e = entries_[next_];
    ++e.generation;
    if (tag != 0) slot = {tag, static_cast<std::uint32_t>(next_), e.generation};
    next_ = (next_ + 1) % kEntries;
    e.size = s.size();
    std::memcpy(e.form.data(), form_.data(), s.size());
    e.sites = KeywordSites(s);
    e.plan.ready = false;
    e.kept = true;
    return e;
  }

  // The segment with every digit written as '0', into form_.
  void normalise(std::string_view s) {
    std::size_t i = 0;
#if defined(__SSE2__)
    const __m128i below = _mm_set1_epi8('0' - 1), above = _mm_set1_epi8('9' + 1), zero = _mm_set1_epi8('0');
    for (; i + 16 <= s.size(); i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
      const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, below), _mm_cmplt_epi8(v, above));
      const __m128i out = _mm_or_si128(_mm_and_si128(digit, zero), _mm_andnot_si128(digit, v));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(form_.data() + i), out);
    }
#endif
    for (; i < s.size(); ++i) form_[i] = is_digit(s[i]) ? '0' : s[i];
  }
  std::array<char, kMaxForm> form_;
  static constexpr unsigned kTagBits = 6;
  std::array<TagSlot, std::size_t{1} << kTagBits> tags_{};
  std::array<Entry, kEntries> entries_;
  std::size_t next_ = 0;
  Entry uncached_;
};

thread_local SitesCache sites_cache;

// Skips what separates a key from its value: quotes, blanks, one ':' or '='.
std::size_t skip_separator(std::string_view s, std::size_t pos) {
  auto skip = [&] {
    while (pos < s.size() && (s[pos] == '\'' || s[pos] == '"' || s[pos] == ' ' || s[pos] == '\t')) ++pos;
  };
  skip();
  if (pos < s.size() && (s[pos] == ':' || s[pos] == '=')) ++pos;
  skip();
  return pos;
}

// A number, nan or inf at `pos`, not followed by more of a word.
std::optional<double> read_value_at(std::string_view s, std::size_t pos, std::size_t* end) {
  if (pos >= s.size()) return std::nullopt;
  bool negative = false;
  if (s[pos] == '+' || s[pos] == '-') {
    negative = s[pos] == '-';
    ++pos;
  }
  const char first = pos < s.size() ? s[pos] : '\0';
  if ((first == 'n' || first == 'N') && iequals_at(s, pos, "nan")) {
    if (pos + 3 < s.size() && is_alpha(s[pos + 3])) return std::nullopt;
    if (end) *end = pos + 3;
    return std::nan("");
  }
  if ((first == 'i' || first == 'I') && iequals_at(s, pos, "inf")) {
    std::size_t e = pos + (iequals_at(s, pos, "infinity") ? 8 : 3);
    if (e < s.size() && is_alpha(s[e])) return std::nullopt;  // "info", "inference"
    if (end) *end = e;
    return negative ? -INFINITY : INFINITY;
  }
  if (pos >= s.size() || !(is_digit(s[pos]) || s[pos] == '.')) return std::nullopt;
  double v = 0;
  auto [ptr, ec] = read_double(s.data() + pos, s.data() + s.size(), v);
  if (ec != std::errc()) return std::nullopt;
  std::size_t e = static_cast<std::size_t>(ptr - s.data());
  if (e < s.size() && is_alpha(s[e])) return std::nullopt;  // "8bit", a version, an id
  if (end) *end = e;
  return negative ? -v : v;
}

void tape_read(Read kind, std::size_t pos, std::size_t end, const std::optional<double>& v, std::uint16_t asks,
               Derive how = Derive::same) {
  tape->add(Taped{kind, how, asks, answers_of(v, asks), static_cast<std::uint32_t>(pos),
                  static_cast<std::uint32_t>(v ? end : 0), v.value_or(0), 0, {}});
}

// `asks`: what the caller asks of the value (see Ask).
std::optional<double> read_value(std::string_view s, std::size_t pos, std::size_t* end = nullptr,
                                 std::uint16_t asks = 0) {
  std::size_t e = 0;
  const std::optional<double> v = read_value_at(s, pos, &e);
  if (tape) tape_read(Read::value, pos, e, v, asks);
  if (v && end) *end = e;
  return v;
}

// The word just before `pos` (skipping one blank), lower-cased.
std::string_view previous_word(std::string_view s, std::size_t pos, char (&buffer)[16]) {
  std::size_t end = pos;
  while (end > 0 && (s[end - 1] == ' ' || s[end - 1] == '_')) --end;
  std::size_t start = end;
  while (start > 0 && is_alpha(s[start - 1]) && end - start < sizeof buffer) --start;
  if (start > 0 && is_alpha(s[start - 1])) return "";  // longer than any word compared with
  for (std::size_t i = start; i < end; ++i) buffer[i - start] = lower(s[i]);
  return {buffer, end - start};
}

// The words that name an evaluation, and those of a loop at work on one
// ("Evaluated 10/287 with L2 loss", "Validating: 100%|...").
constexpr std::string_view kEvaluationWords[] = {"val",        "valid",     "validation", "eval",       "evaluation",
                                                 "test",       "dev",       "evaluated",  "evaluating", "validating",
                                                 "testing"};
// A summary of many evaluations, not one of them.
constexpr std::string_view kSummaryWords[] = {"best", "min", "minimum", "lowest"};

template <std::size_t N>
bool is_one_of(std::string_view word, const std::string_view (&words)[N]) {
  for (std::string_view w : words)
    if (word == w) return true;
  return false;
}

// Whether a word of s[from, to) is one of `words`.
template <std::size_t N>
bool names_one_of(std::string_view s, std::size_t from, std::size_t to, bool first_word_only,
                  const std::string_view (&words)[N]) {
  std::size_t i = from;
  while (i < to) {
    while (i < to && !is_alpha(s[i])) ++i;
    std::size_t j = i;
    while (j < to && is_alpha(s[j])) ++j;
    for (std::string_view w : words)
      if (j > i && j - i == w.size() && iequals_at(s, i, w)) return true;
    if (first_word_only && j > i) return false;
    i = j;
  }
  return false;
}

bool names_evaluation(std::string_view s, std::size_t from, std::size_t to, bool first_word_only) {
  return names_one_of(s, from, to, first_word_only, kEvaluationWords);
}

// Where the field holding the key at `pos` begins: after the last ',', ';',
// '|', '{' or tab before it.
std::size_t field_start(std::string_view s, std::size_t pos) {
  std::size_t start = s.find_last_of(",;|{\t", pos == 0 ? 0 : pos - 1);
  return start == std::string_view::npos || pos == 0 ? 0 : start + 1;
}

// Whether the loss key at `pos` is an evaluation's: its own field (from the
// last ',', ';', '|', '{' or tab before it) names one ("Validation - Loss:
// 0.2", "Epoch 3, Val Loss 0.4"), or the message opens with one
// ("validation | loss 3.2"). Such a loss is not the training loss.
bool evaluation_field(std::string_view s, std::size_t pos) {
  return names_evaluation(s, field_start(s, pos), pos, false) || names_evaluation(s, 0, pos, true);
}

// `end`, where given, is set past the step's number.
std::optional<double> find_step(std::string_view s, const KeywordSites& sites, std::size_t* end_out = nullptr) {
  const std::pair<const KeywordSites::List*, std::size_t> keys[] = {
      {&sites.iteration, 9}, {&sites.step, 4}, {&sites.iter, 4}};
  for (auto [list, length] : keys) {
    for (std::size_t pos : *list) {
      if (pos > 0 && is_alpha(s[pos - 1])) continue;  // global_step is fine, "steps" is not
      std::size_t after = pos + length;
      if (after < s.size() && is_alpha(s[after])) continue;
      std::size_t at = skip_separator(s, after);
      // A bracketed counter: "step:[ 10/197]".
      if (at < s.size() && s[at] == '[' && at > after) {
        ++at;
        while (at < s.size() && s[at] == ' ') ++at;
      }
      std::size_t end = 0;
      auto v = read_value(s, at, &end, kFinite | kNegative | kHuge | kWhole);
      // A step is a whole number; past 1e15 it is an id or a timestamp.
      if (v && std::isfinite(*v) && *v >= 0 && *v <= 1e15 && *v == std::floor(*v)) {
        if (end_out) *end_out = end;
        return v;
      }
    }
  }
  // clu's LoggingWriter (JAX/Flax) opens each line with its step: "[2990] key=value, ...".
  if (s.size() > 2 && s[0] == '[' && is_digit(s[1])) {
    std::size_t end = 0;
    auto v = read_value(s, 1, &end);
    if (v && end + 1 < s.size() && s[end] == ']' && s[end + 1] == ' ') {
      if (end_out) *end_out = end;
      return v;
    }
  }
  return std::nullopt;
}

// `stepped`: the line reports its step (or is a progress bar), which makes a
// qualified key such as `train_loss` a reading rather than a run's summary.
// `epoch_summary`: the line reports an epoch and no step, so an average loss
// on it is that epoch's, where it holds no other.
std::optional<double> find_loss(std::string_view s, const KeywordSites& sites, bool stepped, bool epoch_summary) {
  std::optional<std::size_t> average_at;
  for (std::size_t pos : sites.loss) {
    if (sites.evaluation && evaluation_field(s, pos)) continue;  // no evaluation word, no evaluation field
    std::size_t after = pos + 4;
    if (pos > 0 && is_digit(s[pos - 1])) continue;
    // A NaN or Inf in any part of the loss is one in the loss.
    auto non_finite = [&](std::size_t key_end) -> std::optional<double> {
      auto v = read_value(s, skip_separator(s, key_end), nullptr, kFinite);
      return v && !std::isfinite(*v) ? v : std::nullopt;
    };
    if (after < s.size() && is_word_char(s[after])) {
      // `losses`, and the mixed-precision scaler's `loss_scale`, are no loss;
      // a part of it (`loss_cls`, `loss_net`) is no reading of it either.
      if (s[after] != '_' || iequals_at(s, after, "_scale")) continue;
      std::size_t end = after;
      while (end < s.size() && is_word_char(s[end])) ++end;
      if (auto v = non_finite(end)) return v;
      continue;
    }
    char buffer[16];
    std::string_view before = previous_word(s, pos, buffer);
    bool glued = pos > 0 && is_word_char(s[pos - 1]);  // train_loss, lm_loss, valloss
    // The best loss so far is a record the run keeps, not a step's reading,
    // and `inf` is where it starts (icefall's `'best_train_loss': inf`).
    std::size_t key = pos;
    while (key > 0 && is_word_char(s[key - 1])) --key;
    if (glued && (iequals_at(s, key, "best_") || iequals_at(s, key, "min_") || iequals_at(s, key, "lowest_"))) continue;
    if (before == "val" || before == "valid" || before == "validation" || before == "eval" ||
        before == "test" || before == "final" || before == "best")
      continue;
    // A running average is not a step's reading, but one that is NaN or
    // infinite says a step's loss was.
    if (before == "avg" || before == "mean" || before == "average") {
      if (auto v = non_finite(after)) return v;
      if (epoch_summary && !average_at) average_at = after;
      continue;
    }
    // A qualified key is the training loss when its qualifier says so: the
    // loss of a training step (train_loss, step_loss, lm_loss, total_loss, the
    // sum detectron2 and mmdet print before its parts). Another (nll_loss, a
    // part) is no reading, unless it is NaN or Inf.
    if (glued && !(before == "train" || before == "training" || before == "lm" || before == "step" ||
                   before == "total")) {
      if (auto v = non_finite(after)) return v;
      continue;
    }
    // A qualified key counts where the line reports a step or is a progress
    // bar: alone, `train_loss` is the run's average printed at its end (HF's
    // train metrics, a script's last line), not a reading.
    if (glued && before != "lm" && !stepped) continue;
    if (auto v = read_value(s, skip_separator(s, after))) return v;
  }
  if (average_at) return read_value(s, skip_separator(s, *average_at));
  return std::nullopt;
}

// Whether the key at `pos` is part of a path: a checkpoint's name carries the
// metric it was saved on (`.../epoch=0-val_loss=0.0000.ckpt`), often a
// placeholder, and is no evaluation. A namespace just before the key
// (`eval/loss`, as wandb and HF name their metrics) is no path.
bool in_path(std::string_view s, std::size_t pos) {
  const std::size_t token = s.find_last_of(" \t'\"", pos);
  const std::size_t from = token == std::string_view::npos ? 0 : token + 1;
  std::size_t qualifier = pos;
  while (qualifier > from && (is_word_char(s[qualifier - 1]) || s[qualifier - 1] == '/')) {
    --qualifier;
    if (s[qualifier] == '/') break;
  }
  return s.substr(from, qualifier - from).find('/') != std::string_view::npos;
}

// The evaluation loss a segment reports: a key that an evaluation word
// qualifies (`eval_loss`, `val_loss`, `val loss`) or a loss in an evaluation's
// field ("Validation - Loss: 0.69", "validation | loss 3.2"). A part of it
// (`val_loss_cls`) and a summary of the evaluations ("Best validation loss")
// are no reading.
std::optional<double> find_evaluation_loss(std::string_view s, const KeywordSites& sites) {
  for (std::size_t pos : sites.loss) {
    const std::size_t after = pos + 4;
    if ((after < s.size() && is_word_char(s[after])) || (pos > 0 && is_digit(s[pos - 1]))) continue;
    char buffer[16];
    const std::string_view before = previous_word(s, pos, buffer);
    const bool glued = pos > 0 && is_word_char(s[pos - 1]);
    const bool qualified = is_one_of(before, kEvaluationWords);
    if (glued ? !qualified : !(qualified || evaluation_field(s, pos))) continue;
    if (names_one_of(s, field_start(s, pos), pos, false, kSummaryWords) || in_path(s, pos)) continue;
    if (auto v = read_value(s, skip_separator(s, after))) return v;
  }
  return std::nullopt;
}

// A number that ends at `end`, read backwards ("1.61" before "s/it").
std::optional<double> number_before_at(std::string_view s, std::size_t end) {
  std::size_t start = end;
  while (start > 0 && (is_digit(s[start - 1]) || s[start - 1] == '.')) --start;
  double v = 0;
  if (start == end || read_double(s.data() + start, s.data() + end, v).ec != std::errc())
    return std::nullopt;
  return v;
}

std::optional<double> number_before(std::string_view s, std::size_t end, std::uint16_t asks = 0) {
  const std::optional<double> v = number_before_at(s, end);
  if (tape) tape_read(Read::before, end, end, v, asks);
  return v;
}

// The number of seconds_at(), and where it ends.
std::optional<double> seconds_number_at(std::string_view s, std::size_t pos, std::size_t& end) {
  double v = 0;
  const auto [ptr, ec] = read_double(s.data() + pos, s.data() + s.size(), v);
  if (ec != std::errc()) return std::nullopt;
  end = static_cast<std::size_t>(ptr - s.data());
  return v;
}

// Seconds from a number at `pos` and its unit: `ms`, `s`, or none where
// `bare_scale` says what a bare number is (0: a unit is required).
std::optional<double> seconds_at(std::string_view s, std::size_t pos, double bare_scale) {
  std::size_t end = 0;
  const std::optional<double> number = seconds_number_at(s, pos, end);
  auto taped = [&](Derive how) {
    if (tape) tape_read(Read::seconds, pos, end, number, kFinite | kNegative, how);
  };
  if (!number || !std::isfinite(*number) || *number < 0) return taped(Derive::same), std::nullopt;
  const double v = *number;
  const std::string_view unit = s.substr(end);
  auto unit_is = [&](std::string_view u) {
    return unit.starts_with(u) && (unit.size() == u.size() || !is_alpha(unit[u.size()]));
  };
  if (unit_is("ms")) return taped(Derive::per_thousand), v / 1000;
  if (unit_is("s")) return taped(Derive::same), v;
  taped(bare_scale == 1e-3 ? Derive::times_milli : Derive::same);
  if (!unit.empty() && is_alpha(unit[0])) return std::nullopt;
  return bare_scale > 0 ? std::optional<double>(v * bare_scale) : std::nullopt;
}

// The value behind a key at one of `sites`, `length` long, that is a whole
// word (not part of a longer one) and, where `before` is set, follows it.
std::optional<double> seconds_after_key(std::string_view s, const KeywordSites::List& sites,
                                        std::size_t length, std::string_view before, double bare_scale) {
  for (std::size_t pos : sites) {
    if (pos < before.size() || s.substr(pos - before.size(), before.size()) != before) continue;
    const std::size_t from = pos - before.size(), after = pos + length;
    if ((from > 0 && is_word_char(s[from - 1])) || (after < s.size() && is_word_char(s[after]))) continue;
    if (auto v = seconds_at(s, skip_separator(s, after), bare_scale)) return v;
  }
  return std::nullopt;
}

// The time of one step, in the forms progress lines state it: tqdm's `1.61s/it`
// and `22.76it/s`, Megatron-LM's `elapsed time per iteration (ms): 412.3`,
// nanoGPT's `dt: 51754.23ms`, a `step_time` key, and OpenMMLab's and
// detectron2's `time: 0.53` beside their `data_time`.
std::optional<double> find_step_seconds(std::string_view s, const KeywordSites& sites) {
  if (sites.per_it.n)
    if (auto v = number_before(s, sites.per_it.at[sites.per_it.n - 1])) return v;
  if (sites.it_per.n)
    if (auto v = number_before(s, sites.it_per.at[sites.it_per.n - 1], kZero | kNegative); v && *v > 0)
      return 1 / *v;
  for (std::size_t pos : sites.iteration)
    if (pos >= 4 && s.substr(pos - 4, 4) == "per " && s.substr(pos + 9, 6) == " (ms):")
      if (auto v = seconds_at(s, skip_separator(s, pos + 15), 1e-3)) return v;
  if (auto v = seconds_after_key(s, sites.dt, 2, "", 0)) return v;
  if (auto v = seconds_after_key(s, sites.time, 4, "step_", 1)) return v;
  bool data_time = false;
  for (std::size_t pos : sites.time) data_time = data_time || (pos >= 5 && s.substr(pos - 5, 5) == "data_");
  if (data_time)
    if (auto v = seconds_after_key(s, sites.time, 4, "", 1)) return v;
  return std::nullopt;
}

// A table row's or header's cells: split at tabs, else at '|', else at runs
// of two blanks or more (fastai pads its columns), else at each blank, where
// the two-word names a header or row may hold ("Training Loss", "No log")
// are joined again.
std::vector<std::string_view> split_cells(std::string_view s) {
  auto trim = [](std::string_view c) {
    while (!c.empty() && (c.front() == ' ' || c.front() == '\t')) c.remove_prefix(1);
    while (!c.empty() && (c.back() == ' ' || c.back() == '\t' || c.back() == '\r')) c.remove_suffix(1);
    return c;
  };
  auto split = [&](std::string_view sep) {
    std::vector<std::string_view> out;
    std::size_t from = 0;
    while (from <= s.size()) {
      std::size_t at = s.find(sep, from);
      std::string_view cell = trim(s.substr(from, at == std::string_view::npos ? s.npos : at - from));
      if (!cell.empty()) out.push_back(cell);
      if (at == std::string_view::npos) break;
      from = at + sep.size();
      while (sep == "  " && from < s.size() && s[from] == ' ') ++from;
    }
    return out;
  };
  if (s.find('\t') != std::string_view::npos) return split("\t");
  if (s.find('|') != std::string_view::npos) return split("|");
  if (s.find("  ") != std::string_view::npos) return split("  ");
  std::vector<std::string_view> words = split(" "), out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const bool joined = i + 1 < words.size() &&
                        ((words[i + 1].size() == 4 && iequals_at(words[i + 1], 0, "loss") &&
                          std::all_of(words[i].begin(), words[i].end(), is_alpha)) ||
                         (words[i] == "No" && words[i + 1] == "log"));
    if (joined) {
      out.push_back({words[i].data(), static_cast<std::size_t>(words[i + 1].data() + words[i + 1].size() - words[i].data())});
      ++i;
    } else {
      out.push_back(words[i]);
    }
  }
  return out;
}

Column column_of(std::string_view cell) {
  auto is = [&](std::string_view w) { return cell.size() == w.size() && iequals_at(cell, 0, w); };
  if (is("epoch")) return Column::epoch;
  if (is("step") || is("iter") || is("iteration") || is("global_step")) return Column::step;
  const std::size_t loss = [&] {
    for (std::size_t i = 0; i + 4 <= cell.size(); ++i)
      if (iequals_at(cell, i, "loss")) return i;
    return std::string_view::npos;
  }();
  if (loss == std::string_view::npos || loss + 4 != cell.size()) return Column::other;
  if (names_evaluation(cell, 0, loss, false)) return Column::evaluation_loss;
  const std::string_view qualifier = cell.substr(0, loss);
  for (std::string_view q : {"", "train ", "train_", "training ", "training_", "train/"})
    if (qualifier.size() == q.size() && iequals_at(qualifier, 0, q)) return Column::training_loss;
  return Column::other;
}

// Items per second, where the unit names what is counted: nanoGPT's
// `tok/sec: 10130.34`, `tokens/s 180000`, TensorFlow's `615.3 examples/sec`,
// `samples_per_second: 85.6`, `img/s`. A step rate (`it/s`) is the step time's.
std::optional<double> find_items_per_second(std::string_view s, const KeywordSites& sites) {
  static constexpr std::string_view kUnits[] = {"tok",     "toks",   "token",    "tokens", "sample",
                                                "samples", "example", "examples", "img",    "imgs",
                                                "image",   "images", "seq",      "seqs",   "sequences"};
  for (std::size_t pos : sites.per_second) {
    std::size_t start = pos;
    while (start > 0 && is_alpha(s[start - 1])) --start;
    char buffer[16];
    const std::string_view unit = previous_word(s, pos, buffer);
    if (start == pos || unit.size() != pos - start || !is_one_of(unit, kUnits)) continue;
    std::size_t key_end = pos + (s[pos] == '_' ? 8 : 2);
    while (key_end < s.size() && is_alpha(s[key_end])) ++key_end;  // "sec", "second"
    if (auto v = read_value(s, skip_separator(s, key_end), nullptr, kFinite | kNegative);
        v && std::isfinite(*v) && *v >= 0)
      return v;
    std::size_t before = start;
    while (before > 0 && s[before - 1] == ' ') --before;
    if (auto v = number_before(s, before)) return v;
  }
  return std::nullopt;
}

// The epoch a line states: "epoch 3", "Epoch: [15][ 1/32]", "'epoch': 2.5".
std::optional<double> find_epoch(std::string_view s, const KeywordSites& sites) {
  for (std::size_t pos : sites.epoch) {
    if (pos > 0 && is_alpha(s[pos - 1])) continue;
    std::size_t after = pos + 5;
    if (after < s.size() && is_alpha(s[after])) continue;  // "epochs"
    std::size_t at = skip_separator(s, after);
    if (at < s.size() && s[at] == '[') at = skip_separator(s, at + 1);
    auto v = read_value(s, at, nullptr, kFinite | kNegative | kMillion);
    if (v && std::isfinite(*v) && *v >= 0 && *v < 1e6) return v;
  }
  return std::nullopt;
}

// The value behind the first of `sites` (keys `length` long, whole words) that
// holds one.
std::optional<double> value_after(std::string_view s, const KeywordSites::List& sites, std::size_t length) {
  for (std::size_t pos : sites) {
    const std::size_t after = pos + length;
    if ((pos > 0 && is_word_char(s[pos - 1])) || (after < s.size() && is_word_char(s[after]))) continue;
    if (auto v = read_value(s, skip_separator(s, after))) return v;
  }
  return std::nullopt;
}

// Mixed precision's loss scale: `loss_scale: 65536`, `loss scale: 1.0`.
std::optional<double> find_loss_scale(std::string_view s, const KeywordSites& sites) {
  for (std::size_t pos : sites.loss)
    if (iequals_at(s, pos + 4, "_scale") || iequals_at(s, pos + 4, " scale"))
      if (!(pos + 10 < s.size() && is_word_char(s[pos + 10])))
        if (auto v = read_value(s, skip_separator(s, pos + 10))) return v;
  return std::nullopt;
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

// A whole number at `pos`, and where it ends.
std::optional<std::uint64_t> whole_number_at(std::string_view s, std::size_t pos, std::size_t& end) {
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data() + pos, s.data() + s.size(), v);
  if (ec != std::errc()) return std::nullopt;
  end = static_cast<std::size_t>(p - s.data());
  return v;
}

std::optional<std::uint64_t> whole_number(std::string_view s, std::size_t pos, std::size_t& end,
                                          std::uint16_t asks = 0) {
  std::size_t e = 0;
  const std::optional<std::uint64_t> v = whole_number_at(s, pos, e);
  if (tape)
    tape->add(Taped{Read::whole, Derive::same, asks, answers_of(v, asks), static_cast<std::uint32_t>(pos),
                    static_cast<std::uint32_t>(v ? e : 0), 0, v.value_or(0), {}});
  if (v) end = e;
  return v;
}

// tqdm's bar over one epoch's batches, as Lightning and many loops label it:
// "Epoch 3:  45%|####5     | 9/20 [00:03<00:04,  2.61it/s, loss=0.3]". Its
// count is the batches run in that epoch and its total the epoch's batches. A
// bar labelled otherwise may count epochs or evaluation batches: not read.
bool read_epoch_bar(std::string_view s, ProgressReading& r) {
  const std::size_t start = s.find_first_not_of(' ');
  if (start == s.npos || s.compare(start, 6, "Epoch ") != 0) return false;
  const std::size_t percent = s.find("%|", start);
  if (percent == s.npos) return false;
  std::size_t at = s.find('|', percent + 2);
  if (at == s.npos) return false;
  at = s.find_first_not_of(' ', at + 1);
  std::size_t end = 0;
  const auto position = at == s.npos ? std::nullopt : whole_number(s, at, end);
  if (!position || end >= s.size() || s[end] != '/') return false;
  const auto total = whole_number(s, end + 1, end, kZero);
  if (!total || *total == 0 || s.compare(end, 2, " [") != 0) return false;
  r.bar_position = position;
  r.bar_total = total;
  return true;
}


// The form of a taped number in the segment it was read from.
NumberForm form_of(std::string_view s, const Taped& t) {
  NumberForm f;
  if (!(t.answers & 1)) return f;
  const std::size_t end = t.kind == Read::before ? t.pos : t.end;
  std::size_t start = t.pos;
  if (t.kind == Read::before)
    while (start > 0 && (is_digit(s[start - 1]) || s[start - 1] == '.')) --start;
  else if (t.kind == Read::value && start < end && (s[start] == '+' || s[start] == '-'))
    f.negative = s[start++] == '-';
  std::size_t i = start;
  int digits = 0;
  for (; i < end && (is_digit(s[i]) || (s[i] == '.' && f.point == NumberForm::kNoPoint)); ++i) {
    if (s[i] == '.') f.point = static_cast<std::uint8_t>(i - start);
    else ++digits;
  }
  if (digits == 0 || digits > 19 || (t.kind == Read::whole && f.point != NumberForm::kNoPoint)) return f;
  f.mantissa = static_cast<std::uint8_t>(i - start);
  if (i < end) {
    if (t.kind == Read::whole || (s[i] != 'e' && s[i] != 'E')) return f;
    if (++i < end && (s[i] == '+' || s[i] == '-')) f.exponent_negative = s[i++] == '-';
    if (end - i < 1 || end - i > 3 || !std::all_of(s.begin() + static_cast<std::ptrdiff_t>(i),
                                                   s.begin() + static_cast<std::ptrdiff_t>(end), is_digit))
      return f;
    f.exponent = static_cast<std::uint8_t>(end - i);
  }
  f.start = static_cast<std::uint32_t>(start);
  f.plain = true;
  return f;
}

// The digits of a plain number's mantissa, as one whole number.
std::uint64_t mantissa_of(const char* p, const NumberForm& f) {
  std::uint64_t m = 0;
  for (std::uint8_t i = 0; i < f.mantissa; ++i)
    if (i != f.point) m = m * 10 + static_cast<unsigned>(p[i] - '0');
  return m;
}

// A plain number read by its form, as read_double() reads it; false where
// its digits leave read_double()'s exact path (then it is read as found).
bool read_plain(std::string_view s, const Taped& t, double& v) {
  const NumberForm& f = t.form;
  const std::uint64_t m = mantissa_of(s.data() + f.start, f);
  int exponent = f.point == NumberForm::kNoPoint ? 0 : -(f.mantissa - f.point - 1);
  if (f.exponent) {
    const std::size_t end = t.kind == Read::before ? t.pos : t.end;
    int written = 0;
    for (std::size_t i = end - f.exponent; i < end; ++i) written = written * 10 + (s[i] - '0');
    exponent += f.exponent_negative ? -written : written;
  }
  if (!exact_decimal(m, exponent, v)) return false;
  if (f.negative) v = -v;
  return true;
}

std::uint64_t big_endian(const char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return __builtin_bswap64(v);
}

// The key of a tracked number; false where the mantissa before an exponent
// starts with 0 (a zero, or not scaled as %e scales it), whose exponent says
// nothing of its size.
inline bool key_of(std::string_view s, const Plan::Keyed& t, NumberKey& k) {
  if (t.exponent && s[t.start] == '0') return false;
  k.high = big_endian(s.data() + t.window) & t.high_mask;
  k.low = big_endian(s.data() + t.window + 8) & t.low_mask;
  k.exponent = t.exponent ? (big_endian(s.data() + t.exponent_end - 8) & t.exponent_mask) ^ t.flip : 0;
  return true;
}

double derive(Derive how, double v) {
  switch (how) {
    case Derive::per_thousand: return v / 1000;
    case Derive::times_milli: return v * 1e-3;
    case Derive::inverse: return 1 / v;
    default: return v;
  }
}

// How a number's key is cut out of the text of a segment of `size` bytes,
// where its text orders it among the numbers of its form (NumberKey): a
// digit before the point where an exponent follows; a mantissa within 16
// bytes of the segment (16 at least), an exponent ending 8 bytes into it or
// later.
std::optional<Plan::Keyed> keyed(const Taped& t, std::uint8_t read, std::size_t size) {
  const NumberForm& f = t.form;
  if (!f.plain || t.kind == Read::whole || (f.exponent != 0 && f.point == 0)) return std::nullopt;
  const std::size_t exponent_end = t.kind == Read::before ? t.pos : t.end;
  if (size < 16 || f.mantissa > 16 || (f.exponent && exponent_end < 8)) return std::nullopt;
  // A mask of the bytes from `from` to `to` of a big-endian word.
  auto bytes = [](std::size_t from, std::size_t to) {
    std::uint64_t m = 0;
    for (std::size_t i = from; i < to && i < 8; ++i) m |= std::uint64_t{0xFF} << (56 - 8 * i);
    return m;
  };
  Plan::Keyed k;
  k.read = read;
  k.exponent = f.exponent != 0;
  k.start = f.start;
  k.window = static_cast<std::uint32_t>(std::min<std::size_t>(f.start, size - 16));
  const std::size_t at = f.start - k.window;  // the mantissa's first byte in the window
  k.high_mask = bytes(at, at + f.mantissa);
  k.low_mask = bytes(at > 8 ? at - 8 : 0, at + f.mantissa > 8 ? at + f.mantissa - 8 : 0);
  k.exponent_end = static_cast<std::uint32_t>(exponent_end);
  k.exponent_mask = bytes(8 - f.exponent, 8);
  k.flip = f.exponent_negative ? k.exponent_mask : 0;
  return k;
}

// The digits before a fixed-point number's point (all of them without one).
std::size_t whole_digits(const NumberForm& f) { return f.point == NumberForm::kNoPoint ? f.mantissa : f.point; }

// Whether a plain number's answers to the questions asked of it may differ
// from another's of its form: a plain number is finite; a fixed-point one
// has the sign of its form, is whole without a point, and lies far from 1e6
// and 1e15 with few digits before its point.
bool answers_vary(const Taped& t) {
  const NumberForm& f = t.form;
  std::uint16_t asks = t.asks & ~kFinite;
  if (!f.negative) asks &= ~kNegative;
  if (t.kind != Read::whole && f.exponent == 0) {
    if (f.point == NumberForm::kNoPoint) asks &= ~kWhole;
    if (whole_digits(f) < 6) asks &= ~kMillion;
    if (whole_digits(f) < 15) asks &= ~kHuge;
  }
  return asks != 0;
}

std::atomic<std::uint64_t> plans_made{0};

// Sets what a skim of the plan needs. A segment may be counted unread where
// every number is plain (its place fixed by the layout), no bar is read
// (its epoch and count move on each redraw) and the loss is.
void plan_skims(Plan& plan, std::size_t size) {
  plan.id = ++plans_made;
  plan.skimmable = plan.loss.how != Derive::absent && plan.bar_position.how == Derive::absent &&
                   plan.bar_total.how == Derive::absent;
  for (std::size_t k = 0; k < plan.n && plan.skimmable; ++k) {
    plan.skimmable = plan.reads[k].form.plain;
    if (answers_vary(plan.reads[k])) plan.asked[plan.asked_n++] = static_cast<std::uint8_t>(k);
  }
  // The step first, so that it is tracked apart where no other reading comes from its read.
  bool step_shared = false;
  for (const Source* from : {&plan.step, &plan.loss, &plan.evaluation_loss, &plan.step_seconds, &plan.grad_norm,
                             &plan.learning_rate, &plan.loss_scale, &plan.items_per_second}) {
    if (from->how == Derive::absent) continue;
    if (from != &plan.step && plan.step.how != Derive::absent && from->read == plan.step.read) step_shared = true;
    const auto end = plan.tracked.begin() + plan.tracked_n;
    if (std::find_if(plan.tracked.begin(), end, [&](const Plan::Keyed& k) { return k.read == from->read; }) != end)
      continue;
    const auto k = keyed(plan.reads[from->read], from->read, size);
    if (!k) {
      plan.skimmable = false;
      return;
    }
    plan.tracked[plan.tracked_n++] = *k;
  }
  if (plan.step.how != Derive::absent && !step_shared) plan.step_only = 0;
  for (std::size_t i = 0; i < std::size(kBeside); ++i)
    if ((plan.*kBeside[i]).how != Derive::absent) plan.beside |= static_cast<std::uint8_t>(1u << i);
}

// The plan of a parse: each reading matched to the one read it comes from
// and how; not ready where a reading matches none, or more than one.
Plan make_plan(const Tape& t, const ProgressReading& r, std::string_view segment) {
  Plan plan;
  if (t.overflow) return plan;
  plan.n = t.n;
  std::copy(t.reads.begin(), t.reads.begin() + static_cast<std::ptrdiff_t>(t.n), plan.reads.begin());
  for (std::size_t k = 0; k < t.n; ++k) plan.reads[k].form = form_of(segment, t.reads[k]);
  bool ok = true;
  auto same_read = [&](std::size_t a, std::size_t b) {
    return t.reads[a].kind == t.reads[b].kind && t.reads[a].pos == t.reads[b].pos;
  };
  auto match = [&](const std::optional<double>& x, Source& out) {
    if (!x || !ok) return;
    const auto bits = std::bit_cast<std::uint64_t>(*x);
    int found = -1;
    for (std::size_t k = 0; k < t.n; ++k) {
      const Taped& read = t.reads[k];
      if (!(read.answers & 1) || read.kind == Read::whole) continue;
      // A value is taken as read, a number before a unit maybe inverted (a
      // rate), seconds as their unit said.
      static constexpr Derive kBefore[] = {Derive::same, Derive::inverse};
      const std::span<const Derive> ways =
          read.kind == Read::before ? std::span<const Derive>(kBefore) : std::span<const Derive>(&read.how, 1);
      for (const Derive how : ways) {
        if (std::bit_cast<std::uint64_t>(derive(how, read.value)) != bits) continue;
        if (found >= 0 && !(same_read(static_cast<std::size_t>(found), k) && out.how == how)) {
          ok = false;  // two reads could have given it
          return;
        }
        found = static_cast<int>(k);
        out = {static_cast<std::uint8_t>(k), how};
      }
    }
    if (found < 0) ok = false;
  };
  auto match_whole = [&](const std::optional<std::uint64_t>& x, Source& out) {
    if (!x || !ok) return;
    int found = -1;
    for (std::size_t k = 0; k < t.n; ++k) {
      if (t.reads[k].kind != Read::whole || !(t.reads[k].answers & 1) || t.reads[k].whole != *x) continue;
      if (found >= 0 && !same_read(static_cast<std::size_t>(found), k)) {
        ok = false;
        return;
      }
      found = static_cast<int>(k);
      out = {static_cast<std::uint8_t>(k), Derive::same};
    }
    if (found < 0) ok = false;
  };
  match(r.step, plan.step);
  match(r.epoch, plan.epoch);
  match(r.loss, plan.loss);
  match(r.evaluation_loss, plan.evaluation_loss);
  match(r.step_seconds, plan.step_seconds);
  match(r.grad_norm, plan.grad_norm);
  match(r.learning_rate, plan.learning_rate);
  match(r.loss_scale, plan.loss_scale);
  match(r.items_per_second, plan.items_per_second);
  match_whole(r.bar_position, plan.bar_position);
  match_whole(r.bar_total, plan.bar_total);
  plan.ready = ok;
  if (ok) plan_skims(plan, segment.size());
  return plan;
}

// Reads a segment of a planned layout by its plan: false, with `r` unset,
// where a number answers otherwise than the planned one did.
bool replay(const Plan& plan, std::string_view s, ProgressReading& r) {
  std::array<double, Tape::kMax> values;
  std::array<std::uint64_t, Tape::kMax> wholes;
  for (std::size_t k = 0; k < plan.n; ++k) {
    const Taped& t = plan.reads[k];
    if (t.form.plain) {
      // Where the layout holds a number, every segment of it does, and where
      // it ended; only its value, and so its answers, differ.
      if (t.kind == Read::whole) {
        wholes[k] = mantissa_of(s.data() + t.form.start, t.form);
        if (answers_of(std::optional<std::uint64_t>(wholes[k]), t.asks) != t.answers) return false;
        continue;
      }
      if (read_plain(s, t, values[k])) {
        if (answers_of(std::optional<double>(values[k]), t.asks) != t.answers) return false;
        continue;
      }
    }
    std::size_t end = 0;
    std::uint16_t answers = 0;
    switch (t.kind) {
      case Read::value: {
        const auto v = read_value_at(s, t.pos, &end);
        answers = answers_of(v, t.asks);
        values[k] = v.value_or(0);
        break;
      }
      case Read::before: {
        const auto v = number_before_at(s, t.pos);
        end = t.pos;
        answers = answers_of(v, t.asks);
        values[k] = v.value_or(0);
        break;
      }
      case Read::seconds: {
        const auto v = seconds_number_at(s, t.pos, end);
        answers = answers_of(v, t.asks);
        values[k] = v.value_or(0);
        break;
      }
      case Read::whole: {
        const auto v = whole_number_at(s, t.pos, end);
        answers = answers_of(v, t.asks);
        wholes[k] = v.value_or(0);
        break;
      }
    }
    if (answers != t.answers || (answers != 0 && end != t.end)) return false;
  }
  auto put = [&](const Source& from, std::optional<double>& x) {
    if (from.how != Derive::absent) x = derive(from.how, values[from.read]);
  };
  auto put_whole = [&](const Source& from, std::optional<std::uint64_t>& x) {
    if (from.how != Derive::absent) x = wholes[from.read];
  };
  put(plan.step, r.step);
  put(plan.epoch, r.epoch);
  put(plan.loss, r.loss);
  put(plan.evaluation_loss, r.evaluation_loss);
  put(plan.step_seconds, r.step_seconds);
  put(plan.grad_norm, r.grad_norm);
  put(plan.learning_rate, r.learning_rate);
  put(plan.loss_scale, r.loss_scale);
  put(plan.items_per_second, r.items_per_second);
  put_whole(plan.bar_position, r.bar_position);
  put_whole(plan.bar_total, r.bar_total);
  r.grad_non_finite = r.grad_norm && !std::isfinite(*r.grad_norm);
  return true;
}

// The whole number of at most `max` digits at `i`, `i` moved past it; false
// where no digit is there.
bool read_whole(std::string_view s, std::size_t& i, double& out, std::size_t max = 15) {
  const std::size_t from = i;
  out = 0;
  while (i < s.size() && is_digit(s[i]) && i - from < max) out = out * 10 + (s[i++] - '0');
  return i > from;
}

// A counter "N/M" from `at` on (spaces around the slash allowed), as whole
// numbers: where it ends, or npos where none is there.
std::size_t read_counter(std::string_view s, std::size_t at, double& value, double& total) {
  auto number = [&](std::size_t& i, double& out) {
    return read_whole(s, i, out) && !(i < s.size() && is_word_char(s[i]) && s[i] != '_');
  };
  std::size_t i = at;
  if (!number(i, value)) return std::string_view::npos;
  while (i < s.size() && s[i] == ' ') ++i;
  if (i >= s.size() || s[i] != '/') return std::string_view::npos;
  ++i;
  while (i < s.size() && s[i] == ' ') ++i;
  if (!number(i, total)) return std::string_view::npos;
  return i;
}

// Where the number behind the epoch key at `pos` begins ("Epoch 3",
// "epoch=3/10", "Epoch: [5/5]"); npos where the key is part of a word or
// no number follows it.
std::size_t epoch_number_at(std::string_view s, std::size_t pos) {
  if ((pos > 0 && is_alpha(s[pos - 1])) || (pos + 5 < s.size() && is_alpha(s[pos + 5]))) return std::string_view::npos;
  std::size_t at = skip_separator(s, pos + 5);
  if (at < s.size() && s[at] == '[') ++at;
  while (at < s.size() && s[at] == ' ') ++at;
  return at < s.size() && is_digit(s[at]) ? at : std::string_view::npos;
}

// Where the counter behind the epoch key at `pos` ends ("Epoch[100/100]"),
// with its values; npos where it holds none.
std::size_t epoch_counter_at(std::string_view s, std::size_t pos, double& epoch, double& epochs) {
  const std::size_t at = epoch_number_at(s, pos);
  return at == std::string_view::npos ? at : read_counter(s, at, epoch, epochs);
}

ProgressReading parse_sites(std::string_view segment, const KeywordSites& sites) {
  ProgressReading r;
  const std::optional<double> step = find_step(segment, sites);
  // tqdm's rate, as it prints it (the sites are found whatever the case).
  auto printed = [&](const KeywordSites::List& at, std::string_view unit) {
    return std::any_of(at.begin(), at.end(), [&](std::size_t pos) { return segment.compare(pos, 4, unit) == 0; });
  };
  const bool bar = printed(sites.it_per, "it/s") || printed(sites.per_it, "s/it");
  // An epoch's counter with its total ("epoch=3/250") reports where the run
  // is as a step does: a line with one is a reading, not a run's summary.
  const bool epoch_counter = std::any_of(sites.epoch.begin(), sites.epoch.end(), [&](std::size_t pos) {
    double epoch = 0, epochs = 0;
    return epoch_counter_at(segment, pos, epoch, epochs) != std::string_view::npos;
  });
  // "Epoch 3 - Average Loss: 4.1": an epoch's summary (its epoch stated, as
  // a number behind the key, and no step).
  const bool epoch_stated = std::any_of(sites.epoch.begin(), sites.epoch.end(), [&](std::size_t pos) {
    return epoch_number_at(segment, pos) != std::string_view::npos;
  });
  r.loss = find_loss(segment, sites, step.has_value() || bar || epoch_counter, !step && !bar && epoch_stated);
  if (sites.evaluation) r.evaluation_loss = find_evaluation_loss(segment, sites);
  if (r.loss || r.evaluation_loss) {
    r.step = step;
    r.epoch = find_epoch(segment, sites);
  }
  if (r.loss) {
    if (bar) read_epoch_bar(segment, r);
    r.step_seconds = find_step_seconds(segment, sites);
    if (sites.per_second.n) r.items_per_second = find_items_per_second(segment, sites);
  }
  r.grad_norm = value_after(segment, sites.grad_norm, 9);
  r.grad_non_finite = r.grad_norm && !std::isfinite(*r.grad_norm);
  if (r.loss) {
    r.learning_rate = value_after(segment, sites.lr, 2);
    if (!r.learning_rate) r.learning_rate = value_after(segment, sites.learning_rate, 13);
    r.loss_scale = find_loss_scale(segment, sites);
  }
  return r;
}

}  // namespace

namespace {

// The seconds of a clock time at `at` ("0:00:07", "12:30", "1 day, 2:03:04"),
// where one is there.
std::optional<double> clock_seconds_at(std::string_view s, std::size_t at) {
  double days = 0;
  std::size_t i = at;
  auto number = [&](double& out) { return read_whole(s, i, out, 6); };
  double first = 0;
  if (!number(first)) return std::nullopt;
  if (s.compare(i, 4, " day") == 0) {  // Python's timedelta: "1 day, 2:03:04", "3 days, 0:10:00"
    days = first;
    i += 4;
    if (i < s.size() && s[i] == 's') ++i;
    if (s.compare(i, 2, ", ") != 0) return std::nullopt;
    i += 2;
    if (!number(first)) return std::nullopt;
  }
  double total = first;
  int parts = 1;
  for (double next = 0; parts < 3 && i + 1 < s.size() && s[i] == ':' && is_digit(s[i + 1]); ++parts) {
    ++i;
    number(next);
    total = total * 60 + next;
  }
  if (parts < 2 || (i < s.size() && is_digit(s[i]))) return std::nullopt;
  return days * 86400 + total;
}

// The time left that an `eta` key states, where the segment names one and
// no epoch.
std::optional<double> stated_eta(std::string_view s, const KeywordSites& sites) {
  if (sites.epoch.n != 0) return std::nullopt;
  for (std::size_t i = 0; i + 3 <= s.size(); ++i) {
    if (!iequals_at(s, i, "eta") || (i > 0 && is_alpha(s[i - 1])) || (i + 3 < s.size() && is_alpha(s[i + 3])))
      continue;
    std::size_t at = i + 3;
    if (at < s.size() && (s[at] == ':' || s[at] == '=')) ++at;
    while (at < s.size() && s[at] == ' ') ++at;
    if (const auto seconds = clock_seconds_at(s, at)) return seconds;
  }
  return std::nullopt;
}

}  // namespace

std::optional<StatedCount> stated_count(std::string_view body) {
  const KeywordSites sites(body);
  StatedCount c;
  double value = 0, total = 0;
  // The step counter: behind the key the step is read by, or tqdm's n/total.
  std::size_t end = 0;
  if (find_step(body, sites, &end)) {
    std::size_t from = end;
    while (from > 0 && is_digit(body[from - 1])) --from;
    if (read_counter(body, from, value, total) != std::string_view::npos) c.step = value, c.total = total;
  }
  // Keras's progress bar opens its line with its count of the epoch's
  // batches: "313/313 [======] - 331s 1s/step - loss: 0.36", or with
  // verbose=2 "1688/1688 - 5s - loss: 0.47".
  if (const std::size_t at = body.find_first_not_of(' '); !c.total && at != std::string_view::npos)
    if (const std::size_t e = read_counter(body, at, value, total);
        e != std::string_view::npos && (body.substr(e, 2) == " [" || body.substr(e, 3) == " - "))
      c.step = value, c.total = total;
  if (!c.total)
    for (std::size_t bar = body.find("| "); bar != std::string_view::npos; bar = body.find("| ", bar + 2))
      if (const std::size_t e = read_counter(body, bar + 2, value, total); e != std::string_view::npos &&
          e + 1 < body.size() && body[e] == ' ' && body[e + 1] == '[') {
        c.step = value, c.total = total;
        break;
      }
  // The epoch the first numbered epoch key names ("epoch: 19 done", "Epoch
  // [3]"; not a fraction, "epoch 0.37"), with the epochs where its counter
  // states them ("Epoch[100/100]", "epoch 3/10", "Epoch: [5/5]"); a counter
  // right behind it counts that epoch's steps ("Epoch:[1/1](50/56608)",
  // "Epoch [3][400/500]", "Epoch: [3]  [1250/1251]").
  for (std::size_t pos : sites.epoch) {
    const std::size_t at = epoch_number_at(body, pos);
    if (at == std::string_view::npos) continue;
    std::size_t end = at;
    double named = 0;
    read_whole(body, end, named, 9);
    if (end + 1 < body.size() && body[end] == '.' && is_digit(body[end + 1])) break;
    c.epoch_named = named;
    if (const std::size_t counted = read_counter(body, at, value, total); counted != std::string_view::npos) {
      c.epoch = value, c.epochs = total;
      end = counted;
    }
    if (end < body.size() && body[end] == ']') ++end;
    while (end < body.size() && body[end] == ' ') ++end;
    if (!c.total && end < body.size() && (body[end] == '(' || body[end] == '[')) {
      std::size_t in = end + 1;
      while (in < body.size() && body[in] == ' ') ++in;
      if (read_counter(body, in, value, total) != std::string_view::npos) c.step = value, c.total = total;
    }
    break;
  }
  c.eta_seconds = stated_eta(body, sites);
  if (!c.total && !c.epochs && !c.eta_seconds && !c.epoch_named) return std::nullopt;
  return c;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

namespace {

// A segment read through the entry of its layout.
ProgressReading read_entry(SitesCache::Entry& layout, std::string_view segment) {
  ProgressReading r;  // the one object returned (a copy of it cost more than a replay)
  if (layout.sites.loss.n == 0) return r;
  if (!(layout.plan.ready && replay(layout.plan, segment, r))) {
    Tape t;
    tape = &t;
    r = parse_sites(segment, layout.sites);
    tape = nullptr;
    if (layout.kept) layout.plan = make_plan(t, r, segment);
  }
  r.reward = layout.sites.reward;
  return r;
}

}  // namespace

ProgressReading parse_progress(std::string_view segment, std::uint64_t tag) {
  return read_entry(sites_cache.of(segment, tag), segment);
}

namespace {

// Whether a series keeps its `ordinal`-th reading: one in each `stride`, a
// power of two (a division cost more).
bool on_stride(std::uint64_t ordinal, std::size_t stride) { return ((ordinal - 1) & (stride - 1)) == 0; }

// The step of a reading: the one its segment states, else its ordinal.
std::uint64_t step_of(const ProgressReading& r, std::uint64_t ordinal) {
  return r.step ? static_cast<std::uint64_t>(*r.step) : ordinal;
}

// Whether a plain number answers the questions asked of it as its planned one
// did, as replay() reads it (false also where it is off the exact path).
bool answers_alike(std::string_view s, const Taped& t) {
  const NumberForm& f = t.form;
  // A fixed-point number answers by its digits where that is sure: it is
  // finite, zero where every digit is, negative where signed and not zero,
  // whole without a point, far from 1e6 and 1e15 with few digits before its
  // point.
  if (t.kind != Read::whole && f.exponent == 0 && !((t.asks & kWhole) && f.point != NumberForm::kNoPoint) &&
      !((t.asks & (kMillion | kHuge)) && whole_digits(f) >= 6)) {
    const char* p = s.data() + f.start;
    bool zero = true;
    for (std::size_t i = 0; i < f.mantissa && zero; ++i) zero = p[i] == '0' || p[i] == '.';
    const std::uint16_t a = 1 | (f.negative && !zero ? kNegative : 0) | (zero ? kZero : 0) | kWhole;
    return (a & (t.asks | 1)) == t.answers;
  }
  if (t.kind == Read::whole)
    return answers_of(std::optional<std::uint64_t>(mantissa_of(s.data() + t.form.start, t.form)), t.asks) ==
           t.answers;
  double v = 0;
  return read_plain(s, t, v) && answers_of(std::optional<double>(v), t.asks) == t.answers;
}

}  // namespace

// A segment of a planned layout whose numbers each lie within the lowest and
// highest its layout's segments gave this run (compared as text, NumberKey),
// and whose readings no series keeps (its stride), changes only the counts:
// were it read, no first, lowest or highest reading, no largest step and no
// kept reading would change (each reading is the same function of its
// number, monotonic, as the plan derives it), and the answers the parse
// asks are checked as a replay checks them. Its readings may be the last of
// their series: the last such segment of each plan is read when the piece
// ends (or another plan takes its slot), and its readings become their
// series' last where no reading came after them.
struct TrajectoryBuilder::Skims {
  // The series beside the loss that a plan's readings feed.
  struct Feed {
    std::optional<double> ProgressReading::*value;
    Series Trajectory::*series;
    std::size_t TrajectoryBuilder::*stride;
  };
  static constexpr Feed kFeeds[] = {
      {&ProgressReading::evaluation_loss, &Trajectory::evaluation, &TrajectoryBuilder::evaluation_stride_},
      {&ProgressReading::grad_norm, &Trajectory::grad_norm, &TrajectoryBuilder::grad_norm_stride_},
      {&ProgressReading::learning_rate, &Trajectory::learning_rate, &TrajectoryBuilder::learning_rate_stride_},
      {&ProgressReading::loss_scale, &Trajectory::loss_scale, &TrajectoryBuilder::loss_scale_stride_},
      {&ProgressReading::step_seconds, &Trajectory::step_time, &TrajectoryBuilder::step_time_stride_},
      {&ProgressReading::items_per_second, &Trajectory::throughput, &TrajectoryBuilder::throughput_stride_},
  };
  static constexpr std::size_t kFeeds_n = std::size(kFeeds);
  static_assert(kFeeds_n == std::size(kBeside));

  // One plan's bounds and its last segment counted unread.
  struct Slot {
    std::uint64_t plan = 0;     // Plan::id; 0: free
    std::uint32_t bounded = 0;  // bit i: tracked read i has its bounds
    std::array<NumberKey, Plan::kTracked> lowest, highest;
    bool pending = false;
    std::string_view segment;
    std::uint64_t tag = 0, line = 0;
    // The segment counted unread whose step was the highest, read for the
    // largest step when the piece ends (often the last one).
    bool step_pending = false;
    std::string_view step_segment;
    std::uint64_t step_tag = 0;
    std::uint64_t loss_ordinal = 0;
    std::array<std::uint64_t, kFeeds_n> ordinals{};  // each series' count with that segment's reading
  };
  // By plan number (plans are numbered in turn: the few a run uses lately
  // seldom share a slot).
  static constexpr std::size_t kSlots = 16;
  std::array<Slot, kSlots> slots;
  bool on = true;
  std::uint64_t skimmed = 0;
  // Each feed's series and stride in the builder that owns these (its
  // members stay where they are: it is neither copied nor moved).
  std::array<Series*, kFeeds_n> series{};
  std::array<std::size_t*, kFeeds_n> strides{};

  // Counts the segment unread where it may be (above): whether it was.
  bool skim(TrajectoryBuilder& b, const SitesCache::Entry& e, std::string_view s, std::uint64_t tag,
            std::uint64_t line) {
    const Plan& plan = e.plan;
    if (!on || !plan.ready || !plan.skimmable || !b.rank_chosen_) return false;
    Slot& slot = slots[plan.id % kSlots];
    if (slot.plan != plan.id || slot.bounded != (1u << plan.tracked_n) - 1) return false;
    if (on_stride(b.t_.readings + 1, b.stride_)) return false;
    for (unsigned bits = plan.beside; bits; bits &= bits - 1) {
      const int i = std::countr_zero(bits);
      if (on_stride(series[i]->readings + 1, *strides[i])) return false;
    }
    for (std::size_t i = 0; i < plan.asked_n; ++i)
      if (!answers_alike(s, plan.reads[plan.asked[i]])) return false;
    // A step past the highest its layout gave is the largest step so far:
    // its segment is read when the piece ends.
    NumberKey step;
    bool step_rose = false;
    std::size_t i = 0;
    if (plan.step_only == 0) {
      if (!key_of(s, plan.tracked[0], step)) return false;
      step_rose = slot.highest[0] < step;
      i = 1;
    }
    for (; i < plan.tracked_n; ++i) {
      NumberKey k;
      if (!key_of(s, plan.tracked[i], k) || k < slot.lowest[i] || slot.highest[i] < k) return false;
    }
    if (step_rose) {
      slot.highest[plan.step_only] = step;
      slot.step_pending = true;
      slot.step_segment = s;
      slot.step_tag = tag;
    }
    // Its loss is finite (a plain number) and so is its gradient norm.
    slot.loss_ordinal = ++b.t_.readings;
    ++b.finite_;
    b.rewarded_ = b.rewarded_ || e.sites.reward;
    b.last_grad_non_finite_ = false;
    for (unsigned bits = plan.beside; bits; bits &= bits - 1) {
      const int i = std::countr_zero(bits);
      slot.ordinals[i] = ++series[i]->readings;
    }
    slot.pending = true;
    slot.segment = s;
    slot.tag = tag;
    slot.line = line;
    ++skimmed;
    return true;
  }

  // Widens the bounds of the segment's plan by the segment, read in full by it.
  void bound(TrajectoryBuilder& b, const SitesCache::Entry& e, std::string_view s) {
    const Plan& plan = e.plan;
    if (!plan.ready || !plan.skimmable) return;
    Slot& slot = slots[plan.id % kSlots];
    Slot evicted;
    if (slot.plan != plan.id) {
      evicted = slot;
      slot = Slot{};
      slot.plan = plan.id;
    }
    for (std::size_t i = 0; i < plan.tracked_n; ++i) {
      NumberKey k;
      if (!key_of(s, plan.tracked[i], k)) continue;
      const std::uint32_t bit = 1u << i;
      if (!(slot.bounded & bit)) {
        slot.lowest[i] = slot.highest[i] = k;
        slot.bounded |= bit;
      }
      slot.lowest[i] = std::min(slot.lowest[i], k);
      slot.highest[i] = std::max(slot.highest[i], k);
    }
    // Read last: reading it may replace the entry of `e`.
    settle(b, evicted);
  }

  // Reads the slot's last segment counted unread: its readings are the last
  // of each series where none came after them; and the segment of its
  // highest step, for the largest step.
  static void settle(TrajectoryBuilder& b, Slot& slot) {
    auto note_step = [&](const ProgressReading& r) {
      if (r.step) b.t_.max_step = std::max(b.t_.max_step.value_or(0), static_cast<std::uint64_t>(*r.step));
    };
    const bool step_with_last = slot.step_pending && slot.pending && slot.step_segment.data() == slot.segment.data();
    if (slot.step_pending && !step_with_last) note_step(parse_progress(slot.step_segment, slot.step_tag));
    slot.step_pending = false;
    if (!slot.pending) return;
    slot.pending = false;
    const ProgressReading r = parse_progress(slot.segment, slot.tag);
    if (step_with_last) note_step(r);
    if (!r.loss) return;  // a segment read alike each time: not reached
    const bool reported = r.step.has_value();
    const std::uint64_t step = step_of(r, slot.loss_ordinal);
    if (b.t_.readings == slot.loss_ordinal) b.t_.last = LossReading{step, *r.loss, slot.line, reported};
    for (std::size_t i = 0; i < kFeeds_n; ++i) {
      const std::optional<double>& v = r.*kFeeds[i].value;
      Series& series = b.t_.*kFeeds[i].series;
      if (!v || series.readings != slot.ordinals[i]) continue;
      // An evaluation without a step counts its own readings (add_evaluation()).
      const bool evaluation = kFeeds[i].series == &Trajectory::evaluation;
      series.last = Reading{evaluation ? step_of(r, slot.ordinals[i]) : step, *v, slot.line, reported};
    }
  }

  void settle_all(TrajectoryBuilder& b) {
    for (Slot& slot : slots) settle(b, slot);
  }
};

TrajectoryBuilder::TrajectoryBuilder(const RuleSet::Impl& rules, std::size_t capacity, bool skim)
    : rules_(rules), capacity_(std::max<std::size_t>(capacity, 16)), skims_(std::make_unique<Skims>()) {
  skims_->on = skim;
  for (std::size_t i = 0; i < Skims::kFeeds_n; ++i) {
    skims_->series[i] = &(t_.*Skims::kFeeds[i].series);
    skims_->strides[i] = &(this->*Skims::kFeeds[i].stride);
  }
}

std::uint64_t TrajectoryBuilder::skimmed() const { return skims_->skimmed; }

TrajectoryBuilder::~TrajectoryBuilder() = default;

void TrajectoryBuilder::on_hit(const LineHit& hit) {
  if (reads(rules_.rules[hit.rule].role)) take(hit);
}

// The other ranks' lines are not read at all once one is followed, which
// is most of a multi-rank log's progress lines: their launcher tag alone
// says so. A line of a layout read lately takes its fields from where that
// layout has them (inline: most progress lines are so).
inline bool TrajectoryBuilder::read_tags(std::string_view text, std::uint64_t layout, std::optional<int>& rank,
                                         std::string_view& body, bool& may_redraw) {
  if (layout == 0 || shape_of(layout).layout != layout) return read_tags_by_model(text, layout, rank, body, may_redraw);
  const LineShape& shape = shape_of(layout);
  auto digits = [&](std::uint32_t at, std::uint32_t size) {
    int value = 0;
    for (std::uint32_t i = at; i < at + size; ++i) value = value * 10 + (text[i] - '0');
    return value;  // at most six digits: an int
  };
  if (rank_chosen_ && shape.launcher_rank && rank_ != digits(shape.launcher_rank_at, shape.launcher_rank_size))
    return false;
  rank = shape.tag_rank ? std::optional<int>(digits(shape.tag_rank_at, shape.tag_rank_size)) : std::nullopt;
  body = text.substr(shape.body_at, shape.body_size);
  may_redraw = shape.redraws;
  return !(rank_chosen_ && rank != rank_);
}

bool TrajectoryBuilder::read_tags_by_model(std::string_view text, std::uint64_t layout, std::optional<int>& rank,
                                           std::string_view& body, bool& may_redraw) {
  may_redraw = true;
  auto other_rank = [&](const std::optional<int>& launcher_rank) {
    return rank_chosen_ && launcher_rank && launcher_rank != rank_;
  };
  const LineFields launcher = read_line(text, Depth::launcher);
  // A layout's shape is kept before the rank is checked: the next line of
  // it may be the followed rank's.
  if (layout == 0 && other_rank(launcher.rank)) return false;
  const LineFields tag = read_line(text, launcher);
  if (layout != 0) {
    auto at = [&](std::string_view field) { return static_cast<std::uint32_t>(field.data() - text.data()); };
    shape_of(layout) = LineShape{layout,
                                 launcher.rank.has_value(),
                                 tag.rank.has_value(),
                                 launcher.rank ? at(launcher.rank_text) : 0,
                                 static_cast<std::uint32_t>(launcher.rank_text.size()),
                                 tag.rank ? at(tag.rank_text) : 0,
                                 static_cast<std::uint32_t>(tag.rank_text.size()),
                                 at(tag.body),
                                 static_cast<std::uint32_t>(tag.body.size()),
                                 tag.body.find('\r') != std::string_view::npos};
    if (other_rank(launcher.rank)) return false;
  }
  rank = tag.rank;
  body = tag.body;
  return !(rank_chosen_ && rank != rank_);
}

bool TrajectoryBuilder::add_line(std::string_view text, std::uint64_t line, std::uint64_t layout) {
  std::optional<int> tag_rank;
  std::string_view body;
  bool may_redraw = true;
  if (!read_tags(text, layout, tag_rank, body, may_redraw)) return false;
  text = body;
  bool read = false;
  // tqdm redraws its bar with carriage returns: one line, many readings.
  std::size_t start = 0;
  for (std::uint64_t segment = 0; start <= text.size(); ++segment) {
    std::size_t cr = may_redraw ? text.find('\r', start) : std::string_view::npos;
    std::string_view seg = text.substr(start, cr == std::string_view::npos ? text.npos : cr - start);
    if (seg.empty()) {  // before a bar's first carriage return: nothing to read
      if (cr == std::string_view::npos) break;
      start = cr + 1;
      continue;
    }
    // The line's layout and the segment's place make the segment's layout.
    const std::uint64_t tag = layout != 0 && segment < 64 ? layout * 64 + segment + 1 : 0;
    SitesCache::Entry& entry = sites_cache.of(seg, tag);
    bool took = skims_->skim(*this, entry, seg, tag, line);
    if (!took) {
      ProgressReading r = read_entry(entry, seg);
      if (!r.loss && !r.evaluation_loss) {
        if (std::vector<Column> header = read_header(seg); !header.empty()) columns_ = std::move(header);
        else if (!columns_.empty()) r = read_row(seg, columns_);
      }
      took = r.loss.has_value();
      if (took) {
        if (!rank_chosen_) {
          rank_chosen_ = true;
          rank_ = tag_rank;
          t_.rank = tag_rank;
        }
        add(r, line);
      }
      if (r.evaluation_loss) add_evaluation(r, line);
      if (took) skims_->bound(*this, entry, seg);  // last: it may replace the entry
    }
    if (took) {
      read = true;
      last_segment_ = seg;
      last_segment_kept_ = false;
    }
    if (cr == std::string_view::npos) break;
    start = cr + 1;
  }
  return read;
}

void TrajectoryBuilder::add(const ProgressReading& r, std::uint64_t line) {
  LossReading x;
  x.loss = *r.loss;
  x.line = line;
  x.step_reported = r.step.has_value();
  x.step = step_of(r, t_.readings + 1);
  ++t_.readings;
  rewarded_ = rewarded_ || r.reward;
  last_grad_non_finite_ = r.grad_non_finite;
  if (r.step) t_.max_step = std::max(t_.max_step.value_or(0), x.step);
  if (!t_.first) {
    t_.first = x;
    t_.first_epoch = r.epoch;
  }
  t_.last = x;
  auto beside = [&](Series& s, std::size_t& stride, const std::optional<double>& v) {
    if (v) add_value(s, stride, *v, x.step, x.step_reported, line);
  };
  beside(t_.grad_norm, grad_norm_stride_, r.grad_norm);
  beside(t_.learning_rate, learning_rate_stride_, r.learning_rate);
  beside(t_.loss_scale, loss_scale_stride_, r.loss_scale);
  beside(t_.step_time, step_time_stride_, r.step_seconds);
  beside(t_.throughput, throughput_stride_, r.items_per_second);
  if (r.bar_position && r.epoch) add_bar(*r.epoch, *r.bar_position, *r.bar_total, line);
  // Every reading has its place in the series, a NaN as much as a number: a
  // plot of a run that went NaN must not look healthy.
  keep_evenly(t_.series, stride_, t_.readings, x);
  if (!std::isfinite(x.loss)) {
    if (!t_.first_non_finite) t_.first_non_finite = x;
    return;
  }
  ++finite_;
  if (!t_.lowest || x.loss < t_.lowest->loss) t_.lowest = x;
  if (!t_.peak || x.loss > t_.peak->loss) t_.peak = x;
}

// A bar of a new epoch closes the last one at the count it reached; tqdm's
// redraws of one bar only move its count on.
void TrajectoryBuilder::add_bar(double epoch, std::uint64_t position, std::uint64_t total,
                                std::uint64_t line) {
  if (!bars_) {
    bars_ = EpochBars{epoch, epoch};
  } else if (epoch != bars_->epoch) {
    bars_->finished += bars_->position;
    bars_->epoch = epoch;
    bars_->position = 0;
  }
  bars_->position = std::max(bars_->position, position);
  bars_->total = total;
  bars_->line = line;
}

void TrajectoryBuilder::add_evaluation(const ProgressReading& r, std::uint64_t line) {
  Series& e = t_.evaluation;
  add_value(e, evaluation_stride_, *r.evaluation_loss,
            step_of(r, e.readings + 1), r.step.has_value(), line);
}

void TrajectoryBuilder::add_value(Series& s, std::size_t& stride, double value, std::uint64_t step,
                                  bool step_reported, std::uint64_t line) const {
  const Reading x{step, value, line, step_reported};
  ++s.readings;
  if (!s.first) s.first = x;
  s.last = x;
  if (std::isfinite(value)) {
    if (!s.lowest || value < s.lowest->value) s.lowest = x;
    if (!s.peak || value > s.peak->value) s.peak = x;
  }
  keep_evenly(s.series, stride, s.readings, x);
}

// Keeps the `ordinal`-th reading when it falls on the stride; past capacity,
// every other kept reading is dropped and the stride doubles, so the series
// stays evenly spread over the run in bounded memory.
template <class R>
void TrajectoryBuilder::keep_evenly(std::vector<R>& series, std::size_t& stride, std::uint64_t ordinal,
                                    const R& x) const {
  if (!on_stride(ordinal, stride)) return;
  series.push_back(x);
  if (series.size() < capacity_) return;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < series.size(); i += 2) series[kept++] = series[i];
  series.resize(kept);
  stride *= 2;
}

std::optional<int> chance_classes(const Trajectory& t) {
  constexpr std::size_t kMinReadings = 4;
  constexpr double kTolerance = 1e-3;
  const auto& series = t.series;
  if (series.size() < kMinReadings) return std::nullopt;
  const std::size_t n = std::max(kMinReadings, series.size() / 4);
  const double last = series.back().loss;
  if (!(last > 0)) return std::nullopt;
  const int k = static_cast<int>(std::lround(std::exp(last)));
  if (k < 2 || k > 100) return std::nullopt;
  const double chance = std::log(static_cast<double>(k));
  for (std::size_t i = series.size() - n; i < series.size(); ++i)
    if (!(std::fabs(series[i].loss - chance) <= kTolerance * chance)) return std::nullopt;
  return k;
}

std::vector<Column> read_header(std::string_view segment) {
  const std::vector<std::string_view> cells = split_cells(segment);
  std::vector<Column> columns;
  bool loss = false, counter = false;
  for (std::string_view cell : cells) {
    if (!std::all_of(cell.begin(), cell.end(), [](char c) { return is_word_char(c) || c == ' ' || c == '/'; }) ||
        is_digit(cell.front()))
      return {};
    columns.push_back(column_of(cell));
    loss = loss || columns.back() == Column::training_loss || columns.back() == Column::evaluation_loss;
    counter = counter || columns.back() == Column::step || columns.back() == Column::epoch;
  }
  if (!loss || !counter) return {};
  return columns;
}

ProgressReading read_row(std::string_view segment, const std::vector<Column>& columns) {
  ProgressReading r;
  const std::vector<std::string_view> cells = split_cells(segment);
  if (cells.size() != columns.size()) return r;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    std::size_t end = 0;
    const std::optional<double> v = read_value(cells[i], 0, &end);
    if (!v || end != cells[i].size()) continue;  // "No log", "#na#", a time "00:08"
    switch (columns[i]) {
      case Column::step:
        if (std::isfinite(*v) && *v >= 0 && *v == std::floor(*v)) r.step = v;
        break;
      case Column::epoch:
        if (std::isfinite(*v) && *v >= 0) r.epoch = v;
        break;
      case Column::training_loss: r.loss = v; break;
      case Column::evaluation_loss: r.evaluation_loss = v; break;
      case Column::other: break;
    }
  }
  return r;
}

std::optional<int> evaluation_at_chance(const Series& e) {
  constexpr int kMaxClasses = 5;
  constexpr double kTolerance = 5e-3;
  if (!e.last || !(e.last->value > 0)) return std::nullopt;
  const int k = static_cast<int>(std::lround(std::exp(e.last->value)));
  if (k < 2 || k > kMaxClasses) return std::nullopt;
  const double chance = std::log(static_cast<double>(k));
  if (!(std::fabs(e.last->value - chance) <= kTolerance * chance)) return std::nullopt;
  return k;
}

std::optional<StepTimeChange> TrajectoryBuilder::step_time_change() const {
  // The first tenth is warm-up (compilation, caches, a first evaluation); the
  // early window is the next quarter, the late one the last quarter.
  constexpr std::size_t kMinReadings = 16;
  constexpr double kCollapse = 3, kRise = 1.5, kSteady = 0.6;
  const auto& v = t_.step_time.series;
  const std::size_t n = v.size();
  // From as many lines: the redraws of one progress bar are one stretch of
  // the run, whose rate tqdm smooths from a noisy start.
  std::size_t lines = 0;
  for (std::size_t i = 0; i < n; ++i) lines += i == 0 || v[i].line != v[i - 1].line;
  if (lines < kMinReadings) return std::nullopt;
  const std::size_t warm = n / 10, early_end = warm + n / 4, late_begin = n - n / 4;
  auto window = [&](std::size_t from, std::size_t to) {
    std::vector<double> out;
    for (std::size_t i = from; i < to; ++i) out.push_back(v[i].value);
    return out;
  };
  StepTimeChange c;
  c.early = median(window(warm, early_end));
  c.late = median(window(late_begin, n));
  if (!(c.early > 0)) return std::nullopt;
  const double ratio = c.late / c.early;
  c.collapse = ratio >= kCollapse;
  if (!c.collapse && !(ratio >= kRise && trend(window(warm, n)) >= kSteady)) return std::nullopt;
  c.early_from = v[warm].line;
  c.early_to = v[early_end - 1].line;
  c.late_from = v[late_begin].line;
  c.late_to = v[n - 1].line;
  c.readings = t_.step_time.readings;
  return c;
}

// Whether the loss rose for good above its running minimum: the median of the
// last quarter 3x or more the lowest the loss had reached before it, each
// point of the earlier curve taken as the median of a window an eighth of
// the series wide (five readings at least), so that the low readings of a
// noisy per-batch loss make no minimum. A run that fell far from its start
// and climbed back part of the way has diverged, though it never rose above
// its first reading.
std::optional<RunningMinimumRise> rose_above_running_minimum(const std::vector<LossReading>& series) {
  constexpr std::size_t kMinReadings = 8;
  constexpr double kRise = 3;
  const std::size_t n = series.size();
  if (n < kMinReadings) return std::nullopt;
  const std::size_t late_begin = n - n / 4, width = std::min(late_begin, std::max<std::size_t>(5, n / 8));
  auto median_of = [&](std::size_t from, std::size_t to) {
    std::vector<double> v;
    for (std::size_t i = from; i < to; ++i) v.push_back(series[i].loss);
    return median(std::move(v));
  };
  RunningMinimumRise r;
  r.minimum = INFINITY;
  for (std::size_t i = 0; i + width <= late_begin; ++i) r.minimum = std::min(r.minimum, median_of(i, i + width));
  r.late = median_of(late_begin, n);
  r.late_from = series[late_begin];
  if (!(r.minimum > 0 && r.late >= kRise * r.minimum)) return std::nullopt;
  return r;
}

// The readings a downsampled series must show, wherever the stride fell:
// the first, the last, the extremes and the first non-finite one, each at its
// place in line order (a few points past the capacity at most).
template <class R>
void keep_landmarks(std::vector<R>& series, std::initializer_list<const std::optional<R>*> landmarks) {
  for (const std::optional<R>* landmark : landmarks) {
    if (!*landmark) continue;
    const R& x = **landmark;
    // tqdm's redraws put many readings on one line: within it, by step.
    auto [at, end] = std::equal_range(series.begin(), series.end(), x,
                                      [](const R& a, const R& b) { return a.line < b.line; });
    if (std::any_of(at, end, [&](const R& r) { return r.step == x.step; })) continue;
    while (at != end && at->step < x.step) ++at;
    series.insert(at, x);
  }
}

void TrajectoryBuilder::keep_texts() {
  skims_->settle_all(*this);
  if (last_segment_kept_) return;
  last_segment_copy_.assign(last_segment_);
  last_segment_ = last_segment_copy_;
  last_segment_kept_ = true;
}

std::optional<StatedCount> TrajectoryBuilder::last_count() const {
  if (t_.readings == 0) return std::nullopt;
  return stated_count(last_segment_);
}

Trajectory TrajectoryBuilder::finish() {
  skims_->settle_all(*this);
  Trajectory t = shaped();
  keep_landmarks(t.series, {&t.first, &t.last, &t.lowest, &t.peak, &t.first_non_finite});
  for (auto [name, s] : value_series(t)) keep_landmarks(s->series, {&s->first, &s->last, &s->lowest, &s->peak});
  return t;
}

// The trajectory with its shape, read from the evenly kept finite readings.
Trajectory TrajectoryBuilder::shaped() const {
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
    t.shape = TrajectoryShape::non_finite;
  } else if (finite_ < 3 || !first) {
    t.shape = TrajectoryShape::too_short;
  } else if (rewarded_) {
    // An online RL trainer's loss (GRPO, PPO: its lines report the reward)
    // is a policy-gradient surrogate that starts near zero and follows the
    // KL penalty: no objective that should fall.
    t.shape = TrajectoryShape::inconclusive;
  } else if ((first->loss > 0 && (t.peak->loss > 10 * first->loss || t.last->loss > 2 * first->loss)) ||
             rose_above_running_minimum(t.series)) {
    t.shape = TrajectoryShape::diverged;
  } else if (chance_classes(t)) {
    // The model predicts nothing: a collapse, however few the readings.
    t.shape = TrajectoryShape::plateau;
  } else if (t.series.size() < 8) {
    t.shape = t.last->loss < first->loss ? TrajectoryShape::decreasing : TrajectoryShape::inconclusive;
  } else {
    std::vector<double> loss;
    for (const auto& r : t.series) loss.push_back(r.loss);
    double mid = median(loss);
    double range = t.peak->loss - t.lowest->loss;
    std::size_t q = std::max<std::size_t>(2, loss.size() / 4);
    double late = median(std::vector<double>(loss.end() - static_cast<std::ptrdiff_t>(q), loss.end()));
    if (mid != 0 && range / std::fabs(mid) < 0.01) t.shape = TrajectoryShape::plateau;
    else if (first->loss > 0 && late >= 0.5 * first->loss && trend(loss) > -0.6) t.shape = TrajectoryShape::no_decrease;
    else t.shape = TrajectoryShape::decreasing;
  }
  return t;
}

}  // namespace gpudiag::detail

namespace gpudiag {

std::string_view to_string(TrajectoryShape shape) {
  switch (shape) {
    case TrajectoryShape::none: return "none";
    case TrajectoryShape::too_short: return "too_short";
    case TrajectoryShape::inconclusive: return "inconclusive";
    case TrajectoryShape::decreasing: return "decreasing";
    case TrajectoryShape::non_finite: return "non_finite";
    case TrajectoryShape::diverged: return "diverged";
    case TrajectoryShape::plateau: return "plateau";
    case TrajectoryShape::no_decrease: return "no_decrease";
  }
  return "none";
}

}  // namespace gpudiag
