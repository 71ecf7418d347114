#include "line_scanner.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <new>
#include <stdexcept>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "line_fields.hpp"
#include "rule_compiler.hpp"
#include "text_util.hpp"

namespace gpudiag::detail {
namespace {

// Every byte of a log passes through here once: sixteen at a time, the
// matches summed in byte lanes (at most 255 blocks before they are widened).
// std::count compiled to a byte-at-a-time loop, a tenth of a scan's work.
std::uint64_t count_newlines(const char* begin, const char* end) {
  std::uint64_t n = 0;
#if defined(__SSE2__)
  const __m128i newline = _mm_set1_epi8('\n');
  while (end - begin >= 16) {
    const std::ptrdiff_t blocks = std::min<std::ptrdiff_t>((end - begin) / 16, 255);
    __m128i lanes = _mm_setzero_si128();
    for (std::ptrdiff_t i = 0; i < blocks; ++i, begin += 16) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(begin));
      lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(bytes, newline));  // a match is -1
    }
    const __m128i sums = _mm_sad_epu8(lanes, _mm_setzero_si128());
    n += static_cast<std::uint64_t>(_mm_cvtsi128_si64(sums)) +
         static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums)));
  }
#endif
  return n + static_cast<std::uint64_t>(std::count(begin, end, '\n'));
}

const char* find_last_newline(const char* begin, const char* end) {
  const void* p = ::memrchr(begin, '\n', static_cast<std::size_t>(end - begin));
  return static_cast<const char*>(p);
}

std::string_view strip_cr(std::string_view s) {
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

}  // namespace

// Hyperscan's scratch space, per thread and rule set. Allocating it (which
// checks the database) cost every diagnosis more than scanning a small log;
// a thread scans one piece at a time, so all its streams share one. The few
// rule sets used last are kept; a scan fetches its scratch when it starts,
// so a stream may move between threads.
class ThreadScratch {
 public:
  ~ThreadScratch() {
    for (const Entry& e : entries_) {
      hs_free_scratch(e.scratch.scan);
      hs_free_scratch(e.scratch.confirm);
    }
  }

  const LineScanner::Scratch& of(const RuleSet::Impl& rules) {
    for (std::size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].rule_set == rules.id) {
        std::rotate(entries_.begin() + static_cast<std::ptrdiff_t>(i),
                    entries_.begin() + static_cast<std::ptrdiff_t>(i) + 1, entries_.end());
        return entries_.back().scratch;
      }
    if (entries_.size() == kKept) {
      hs_free_scratch(entries_.front().scratch.scan);
      hs_free_scratch(entries_.front().scratch.confirm);
      entries_.erase(entries_.begin());
    }
    Entry e{rules.id, {}};
    if (const auto [scan, confirm] = rules.spare.take(); scan)
      e.scratch = {scan, confirm};
    else if (!allocate_scratch(rules.db.get(), rules.confirm_db.get(), e.scratch.scan, e.scratch.confirm))
      throw std::bad_alloc();
    entries_.push_back(e);
    return entries_.back().scratch;
  }

 private:
  static constexpr std::size_t kKept = 4;
  struct Entry {
    std::uint64_t rule_set;
    LineScanner::Scratch scratch;
  };
  std::vector<Entry> entries_;  // the one used last at the back
};

thread_local ThreadScratch thread_scratch;

namespace {

// Lines longer than this are scanned each time (a few per log at most).
constexpr std::size_t kMaxLayoutLine = 4096;

// A line's layout: its bytes with every digit read as '0'. Sixteen bytes at
// a time where they lie in memory; a line of fewer is read into a copy.
#if defined(__SSE2__)
inline __m128i layout_block(const char* at) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
  const __m128i zero = _mm_set1_epi8('0');
  const __m128i value = _mm_sub_epi8(bytes, zero);  // a digit is 0..9, unsigned
  const __m128i digit = _mm_cmpeq_epi8(_mm_min_epu8(value, _mm_set1_epi8(9)), value);
  return _mm_or_si128(_mm_andnot_si128(digit, bytes), _mm_and_si128(digit, zero));
}
#endif

void layout_of(const char* line, std::size_t size, std::string& out) {
  out.resize(size);
  char* to = out.data();
  std::size_t i = 0;
#if defined(__SSE2__)
  if (size >= 16) {
    for (; i + 16 <= size; i += 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(to + i), layout_block(line + i));
    // The last sixteen again, overlapping: the same bytes out.
    if (i < size) _mm_storeu_si128(reinterpret_cast<__m128i*>(to + size - 16), layout_block(line + size - 16));
    return;
  }
#endif
  for (; i < size; ++i) to[i] = is_digit(line[i]) ? '0' : line[i];
}

// A key to look a layout up by, from the line's length and its first,
// second and last sixteen bytes: cheap, and the lookup compares the whole
// layout anyway.
std::uint64_t layout_key(const char* line, std::size_t size) {
  std::uint64_t w[6] = {};
#if defined(__SSE2__)
  if (size >= 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(w), layout_block(line));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(w + 2), layout_block(line + std::min<std::size_t>(16, size - 16)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(w + 4), layout_block(line + size - 16));
  } else
#endif
  {
    char head[48] = {};
    for (std::size_t i = 0; i < size && i < sizeof head; ++i) head[i] = is_digit(line[i]) ? '0' : line[i];
    std::memcpy(w, head, sizeof w);
  }
  std::uint64_t h = size * 0x9E3779B97F4A7C15ull;
  for (const std::uint64_t x : w) h = (h ^ x) * 0xBF58476D1CE4E5B9ull, h ^= h >> 31;
  return h;
}

#if defined(__x86_64__) && defined(__GNUC__)
// has_layout() 32 bytes at a time, where the CPU has AVX2 (the build's
// baseline is SSE2): comparing a known line with its layout takes a tenth of
// the realistic mix's time.
__attribute__((target("avx2"))) inline bool same_layout_avx2(const char* line, const char* layout) {
  const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(line));
  const __m256i zero = _mm256_set1_epi8('0');
  const __m256i value = _mm256_sub_epi8(bytes, zero);  // a digit is 0..9, unsigned
  const __m256i digit = _mm256_cmpeq_epi8(_mm256_min_epu8(value, _mm256_set1_epi8(9)), value);
  const __m256i form = _mm256_or_si256(_mm256_andnot_si256(digit, bytes), _mm256_and_si256(digit, zero));
  const __m256i stored = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(layout));
  return _mm256_movemask_epi8(_mm256_cmpeq_epi8(form, stored)) == -1;
}

__attribute__((target("avx2"))) bool has_layout_avx2(const char* line, const char* layout, std::size_t size) {
  std::size_t i = 0;
  for (; i + 32 <= size; i += 32)
    if (!same_layout_avx2(line + i, layout + i)) return false;
  return i == size || same_layout_avx2(line + size - 32, layout + size - 32);
}
// Asked during static initialisation, which may run before the CPU's
// features are read for the program: read them first.
const bool kHasAvx2 = (__builtin_cpu_init(), __builtin_cpu_supports("avx2"));
#endif

// has_layout(), inlined where the scanner compares.
inline bool layout_holds(const char* line, const char* layout, std::size_t size, bool portable = false) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (size >= 32 && kHasAvx2 && !portable) return has_layout_avx2(line, layout, size);
#else
  (void)portable;
#endif
  std::size_t i = 0;
#if defined(__SSE2__)
  if (size >= 16) {
    auto same = [&](std::size_t at) {
      const __m128i stored = _mm_loadu_si128(reinterpret_cast<const __m128i*>(layout + at));
      return _mm_movemask_epi8(_mm_cmpeq_epi8(layout_block(line + at), stored)) == 0xffff;
    };
    for (; i + 16 <= size; i += 16)
      if (!same(i)) return false;
    return i == size || same(size - 16);
  }
#endif
  for (; i < size; ++i)
    if ((is_digit(line[i]) ? '0' : line[i]) != layout[i]) return false;
  return true;
}

// The stream's reports on each line layout seen, for one rule set, on one
// thread: a line's reports depend only on its layout and the rules, so a
// cache shared by every scan on the thread answers for any of them. Entries
// go into flat arrays (no allocation a line), found through a table of
// buckets of four, the one used last first; when the arrays are full
// everything is dropped and refilled.
class LayoutCache {
 public:
  using Report = LayoutReport;
  struct Found {
    const Report* reports = nullptr;
    std::size_t count = 0;
    bool known = false;
    std::uint64_t id = 0;     // LineHit::layout
    std::uint32_t index = 0;  // the entry's, + 1
    std::size_t size = 0;     // the line's, without its newline
    std::uint32_t sole_rule = 0;  // see insert()
  };

  void use(std::uint64_t rule_set) {
    if (rule_set == rule_set_) return;
    clear();
    rule_set_ = rule_set;
  }

  // The id of the entry at `index`: unique in the process, as each filling
  // of a cache, on any thread, has a generation of its own.
  std::uint64_t id(std::size_t index) const { return generation_ << 16 | (index + 1); }

  Found find(std::uint64_t key, const char* line, std::size_t size) const {
    if (slots_.empty()) return {};
    const std::uint32_t* bucket = slots_.data() + (key & kBucketMask) * kWays;
    for (std::size_t way = 0; way < kWays && bucket[way] != 0; ++way) {
      const Entry& e = entries_[bucket[way] - 1];
      if (e.key == key && e.size == size && layout_holds(line, bytes_.data() + e.bytes, size))
        return found(bucket[way]);
    }
    return {};
  }

  // The layout of the line at `line` (before `end`) among those it likely
  // has: the one that followed the layout `after` (an entry's index + 1) last
  // time, then those found lately that begin as it does (its first sixteen
  // bytes, digits read as 0). Logs repeat sequences of layouts (one rank's
  // lines, then the next's) and mixes of a few kinds; a guess costs a byte
  // (the line must end where the layout does) and rarely more, where a
  // lookup also finds the newline and hashes it. (A line's first bytes had
  // it compared with the eight layouts found last, in turn: in a mix of
  // kinds, several each line.)
  Found predict(std::uint32_t after, const char* line, const char* end) {
    const std::uint32_t next = after != 0 && after <= entries_.size() ? entries_[after - 1].next : 0;
    if (next != 0 && holds(next, line, end)) return found(next);
    if (end - line < 16 || prefixes_.empty()) return {};
    std::uint32_t* bucket = prefixes_.data() + prefix_bucket(line) * kPrefixWays;
    for (std::size_t way = 0; way < kPrefixWays && bucket[way] != 0; ++way)
      if (const std::uint32_t index = bucket[way]; index != next && holds(index, line, end)) {
        first_in(bucket, way);
        return found(index);
      }
    return {};
  }

  // Keeps a layout (an entry's index + 1), found by a lookup, first among
  // those that begin as it does.
  void note_found(std::uint32_t index) {
    const Entry& e = entries_[index - 1];
    if (e.size < 16) return;
    std::uint32_t* bucket = prefixes_.data() + prefix_bucket(bytes_.data() + e.bytes) * kPrefixWays;
    std::size_t way = 0;
    while (way + 1 < kPrefixWays && bucket[way] != index && bucket[way] != 0) ++way;
    bucket[way] = index;
    first_in(bucket, way);
  }

  // Notes that the layout `index` followed `after` (indexes + 1).
  void link(std::uint32_t after, std::uint32_t index) {
    if (after != 0 && after <= entries_.size()) entries_[after - 1].next = index;
  }

  // Keeps a layout's reports, and `sole_rule`: the rule (+ 1) whose hit
  // they all are, where none is confirmed on the line (0 otherwise); its id.
  std::uint64_t insert(std::uint64_t key, const std::string& layout, const Report* reports, std::size_t count,
                       std::uint32_t sole_rule) {
    if (entries_.size() >= kMaxEntries || bytes_.size() + layout.size() > kMaxBytes ||
        reports_.size() + count > kMaxReports)
      clear();
    if (slots_.empty()) {
      slots_.assign((kBucketMask + 1) * kWays, 0);
      prefixes_.assign((kPrefixMask + 1) * kPrefixWays, 0);
    }
    entries_.push_back(Entry{key, static_cast<std::uint32_t>(bytes_.size()), static_cast<std::uint32_t>(layout.size()),
                             static_cast<std::uint32_t>(reports_.size()), static_cast<std::uint32_t>(count), 0,
                             sole_rule});
    bytes_.append(layout);
    reports_.insert(reports_.end(), reports, reports + count);
    std::uint32_t* bucket = slots_.data() + (key & kBucketMask) * kWays;
    std::memmove(bucket + 1, bucket, (kWays - 1) * sizeof *bucket);
    bucket[0] = static_cast<std::uint32_t>(entries_.size());
    note_found(static_cast<std::uint32_t>(entries_.size()));
    return id(entries_.size() - 1);
  }

 private:
  static constexpr std::uint64_t kBucketMask = 1023;
  static constexpr std::size_t kWays = 4;
  static constexpr std::size_t kMaxEntries = 16384;
  static constexpr std::size_t kMaxBytes = 4u << 20;
  static constexpr std::size_t kMaxReports = 1u << 18;
  static constexpr std::uint64_t kPrefixMask = 1023;
  static constexpr std::size_t kPrefixWays = 4;
  struct Entry {
    std::uint64_t key;
    std::uint32_t bytes, size, reports, count;
    std::uint32_t next;  // the entry (+ 1) of the layout that followed it last
    std::uint32_t sole_rule;
  };
  // Whether the line at `line` is of the layout `index` (+ 1).
  bool holds(std::uint32_t index, const char* line, const char* end) const {
    const Entry& e = entries_[index - 1];
    return e.size < static_cast<std::size_t>(end - line) && line[e.size] == '\n' &&
           layout_holds(line, bytes_.data() + e.bytes, e.size);
  }
  Found found(std::uint32_t index) const {
    const Entry& e = entries_[index - 1];
    return {reports_.data() + e.reports, e.count, true, id(index - 1), index, e.size, e.sole_rule};
  }
  // The bucket of layouts that begin as the bytes at `at` do (sixteen of
  // them, in memory; a layout's are its digits read as 0 already).
  static std::uint64_t prefix_bucket(const char* at) {
    std::uint64_t w[2];
#if defined(__SSE2__)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(w), layout_block(at));
#else
    char head[16];
    for (std::size_t i = 0; i < sizeof head; ++i) head[i] = is_digit(at[i]) ? '0' : at[i];
    std::memcpy(w, head, sizeof w);
#endif
    const std::uint64_t h = (w[0] * 0x9E3779B97F4A7C15ull) ^ (w[1] * 0xBF58476D1CE4E5B9ull);
    return (h >> 32) & kPrefixMask;
  }
  // Moves the layout at `way` of a bucket to its front.
  static void first_in(std::uint32_t* bucket, std::size_t way) {
    const std::uint32_t index = bucket[way];
    for (; way > 0; --way) bucket[way] = bucket[way - 1];
    bucket[0] = index;
  }
  void clear() {
    std::fill(slots_.begin(), slots_.end(), 0);
    std::fill(prefixes_.begin(), prefixes_.end(), 0);
    entries_.clear();
    bytes_.clear();
    reports_.clear();
    generation_ = next_generation();
  }
  static std::uint64_t next_generation() {
    static std::atomic<std::uint64_t> last{0};
    return ++last;
  }
  std::uint64_t rule_set_ = 0;
  std::uint64_t generation_ = next_generation();
  std::vector<std::uint32_t> slots_;  // entry index + 1, 0 where none
  std::vector<Entry> entries_;
  std::string bytes_;
  std::vector<Report> reports_;
  std::vector<std::uint32_t> prefixes_;  // by prefix_bucket(): entries (+ 1), the one found last first
};

thread_local LayoutCache layout_cache;

}  // namespace

bool has_layout(const char* line, const char* layout, std::size_t size, bool portable) {
  return layout_holds(line, layout, size, portable);
}

LineScanner::LineScanner(const RuleSet::Impl& rules, MatchSink& sink, std::size_t text_cap, bool by_layout)
    : rules_(rules), sink_(sink), by_layout_(by_layout && rules.line_local), text_cap_(std::max<std::size_t>(text_cap, 16)),
      last_line_(rules.rules.size(), 0) {
  if (hs_open_stream(rules_.db.get(), 0, &stream_) != HS_SUCCESS) throw std::bad_alloc();
}

LineScanner::~LineScanner() {
  if (stream_) hs_close_stream(stream_, nullptr, nullptr, nullptr);  // no callback: no scratch
}

std::uint64_t LineScanner::lines() const {
  if (piece_start_ == 0) return 0;
  return piece_line_ - (last_byte_newline_ ? 1 : 0);
}

void LineScanner::scan(std::string_view piece) {
  if (piece.empty()) return;
  piece_ = piece;
  cursor_pos_ = 0;
  cursor_line_ = piece_line_;
  settle_word_ends(!is_word_char(piece.front()));
  scratch_ = thread_scratch.of(rules_);
  if (by_layout_) return end_piece(scan_lines(piece));
  if (hs_scan_stream(stream_, piece.data(), static_cast<unsigned>(piece.size()), 0, scratch_.scan,
                     &LineScanner::on_match, this) != HS_SUCCESS)
    throw std::runtime_error("Hyperscan failed while scanning");
  // The hits have counted the lines up to the last of them; count the rest.
  end_piece((cursor_line_ - piece_line_) + count_newlines(piece.data() + cursor_pos_, piece.data() + piece.size()));
}

void LineScanner::end_piece(std::uint64_t newlines) {
  const char* begin = piece_.data();
  const char* end = begin + piece_.size();
  remember_tail(newlines);
  piece_line_ += newlines;
  if (const char* nl = find_last_newline(begin, end))
    open_line_start_ = piece_start_ + static_cast<std::uint64_t>(nl - begin) + 1;
  last_byte_newline_ = piece_.back() == '\n';
  piece_start_ += piece_.size();
  piece_ = {};
}

std::uint64_t LineScanner::scan_lines(std::string_view piece) {
  LayoutCache& cache = layout_cache;
  cache.use(rules_.id);
  const char* begin = piece.data();
  const char* end = begin + piece.size();
  const char* p = begin;
  std::uint64_t number = piece_line_;
  auto at = [&](const char* q) { return static_cast<std::size_t>(q - begin); };
  if (!last_byte_newline_) {
    // The rest of a line begun in an earlier piece.
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', piece.size()));
    const char* next = nl ? nl + 1 : end;
    fresh_.push_back({0, at(next), number, 0, false, false, false});
    if (nl) ++number;
    p = next;
  }
  while (p < end) {
    if (looked_ == kWindow)
      if (const char* after = skip_stretch(p, end, number)) {
        p = after;
        continue;
      }
    if (fresh_.empty()) {
      if (const LayoutCache::Found found = cache.predict(last_layout_, p, end); found.known) {
        ++looked_;
        ++skipped_;
        replay(found, p, number);
        last_layout_ = found.index;
        ++number;
        p += found.size + 1;
        continue;
      }
    }
    const std::uint32_t previous = last_layout_;
    last_layout_ = 0;
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    if (!nl) {  // a line that goes on in the next piece
      fresh_.push_back({at(p), at(end), number, 0, false, false, false});
      break;
    }
    const std::size_t size = static_cast<std::size_t>(nl - p);
    if (size <= kMaxLayoutLine) {
      ++looked_;
      const std::uint64_t key = layout_key(p, size);
      LayoutCache::Found found = cache.find(key, p, size);
      if (found.known && !fresh_.empty()) {
        // A known line right after new ones is scanned with them: a few
        // such cost less than the stream's reset after them.
        if (known_in_run_ < kKnownInRun) {
          ++known_in_run_;
          fresh_.push_back({at(p), size + 1, number, 0, false, true, false, found.id});
          cache.link(previous, found.index);
          last_layout_ = found.index;
          ++number;
          p = nl + 1;
          continue;
        }
        scan_fresh();  // which adds to the cache (or empties it)
        found = cache.find(key, p, size);
      }
      if (found.known) {
        ++skipped_;
        replay(found, p, number);
        cache.note_found(found.index);
        cache.link(previous, found.index);
        last_layout_ = found.index;
      } else {
        known_in_run_ = 0;
        fresh_.push_back({at(p), size + 1, number, key, true, true, false});
        if (fresh_.size() >= kFreshRun) {
          ++number;
          p = nl + 1;
          scan_fresh();
          continue;
        }
      }
    } else {
      known_in_run_ = 0;
      fresh_.push_back({at(p), size + 1, number, 0, false, true, false});
    }
    ++number;
    p = nl + 1;
  }
  scan_fresh();
  cursor_pos_ = piece.size();
  cursor_line_ = number;
  return number - piece_line_;
}

const char* LineScanner::skip_stretch(const char* p, const char* end, std::uint64_t& number) {
  // Lines looked up cost a lookup each and save nothing unless their layout
  // is known and the scan skips them (a known line amid new ones is scanned
  // with them): after two windows in a row where fewer than one in four were
  // skipped, the next stretch of whole lines is scanned as it comes, a longer
  // one each time the window after it saves as little. Two at first, because
  // the first window of a log, or of a new kind of lines, skips few while it
  // learns their layouts.
  const bool saved = skipped_ * 4 >= looked_;
  looked_ = skipped_ = 0;
  if (saved) {
    bypass_ = 0;
    poor_windows_ = 0;
    return nullptr;
  }
  if (++poor_windows_ < 2) return nullptr;
  bypass_ = std::clamp(bypass_ * 2, kMinBypass, kMaxBypass);
  last_layout_ = 0;
  const char* last = find_last_newline(p, p + std::min<std::size_t>(bypass_, static_cast<std::size_t>(end - p)));
  if (!last) return nullptr;
  fresh_.push_back({static_cast<std::size_t>(p - piece_.data()), static_cast<std::size_t>(last - p) + 1, number, 0, false,
             true, true});
  number += count_newlines(p, last + 1);
  return last + 1;
}

template <class Found>
void LineScanner::replay(const Found& found, const char* line, std::uint64_t number) {
  const std::uint64_t offset = piece_start_ + static_cast<std::uint64_t>(line - piece_.data());
  ++replayed_;
  if (found.sole_rule != 0) {
    // One hit, as emit() makes it of the first report (the others, of the
    // same rule on the same line, add none), where the line is quoted whole.
    const unsigned rule = found.sole_rule - 1;
    const std::string_view text = strip_cr(std::string_view(line, found.size));
    if (text.size() <= text_cap_) {
      if (last_line_[rule] == number) return;
      last_line_[rule] = number;
      sink_.on_hit(LineHit{rule, number, offset, text, false, text, found.id});
      return;
    }
  }
  for (std::size_t k = 0; k < found.count; ++k)
    emit(found.reports[k].pattern, number, offset, std::string_view(line, found.size), found.reports[k].end - 1, false,
         found.id);
}

void LineScanner::scan_fresh() {
  if (fresh_.empty()) return;
  const std::size_t run_begin = fresh_.front().begin;
  const std::size_t run_end = fresh_.back().begin + fresh_.back().size;
  // Lines were skipped since the stream's last byte: a stream held to lines
  // starts afresh at a line's start as it would go on there.
  if (piece_start_ + run_begin != stream_end_) {
    if (hs_reset_stream(stream_, 0, nullptr, nullptr, nullptr) != HS_SUCCESS)
      throw std::runtime_error("Hyperscan failed while scanning");
    stream_origin_ = piece_start_ + run_begin;
  }
  run_reports_.clear();
  collecting_ = true;
  const hs_error_t rc = hs_scan_stream(stream_, piece_.data() + run_begin, static_cast<unsigned>(run_end - run_begin),
                                       0, scratch_.scan, &LineScanner::on_match, this);
  collecting_ = false;
  if (rc != HS_SUCCESS) throw std::runtime_error("Hyperscan failed while scanning");
  stream_end_ = piece_start_ + run_end;
  // One order for a line's hits, whichever way it was read.
  std::sort(run_reports_.begin(), run_reports_.end(), [](const Report& a, const Report& b) {
    return a.end != b.end ? a.end < b.end : a.pattern < b.pattern;
  });
  std::size_t k = 0;
  for (const FreshLine& line : fresh_) {
    const std::uint64_t line_start = piece_start_ + line.begin;
    const std::uint64_t line_stop = line_start + line.size;
    const std::size_t first = k;
    while (k < run_reports_.size() && run_reports_[k].end - 1 < line_stop) ++k;
    if (!line.whole || line.lines) {
      // A piece of a line, or a stretch of whole lines (found by counting).
      const char skip = line.whole ? kScopePart : kScopeWhole;
      cursor_pos_ = line.begin;
      cursor_line_ = line.number;
      for (std::size_t i = first; i < k; ++i)
        if (rules_.line_scope[run_reports_[i].pattern] != skip) deliver(run_reports_[i].pattern, run_reports_[i].end);
      continue;
    }
    const char* text = piece_.data() + line.begin;
    const std::size_t size = line.size - 1;  // without the newline
    // A whole line's hits, as a line of its layout will have them.
    line_reports_.clear();
    for (std::size_t i = first; i < k; ++i)
      if (rules_.line_scope[run_reports_[i].pattern] != kScopePart)
        line_reports_.push_back({run_reports_[i].pattern, static_cast<std::uint32_t>(run_reports_[i].end - line_start)});
    std::uint64_t id = line.known;
    if (line.cached) {
      layout_of(text, size, fresh_layout_);
      id = layout_cache.insert(line.layout, fresh_layout_, line_reports_.data(), line_reports_.size(),
                               sole_rule(line_reports_));
    }
    for (const LayoutReport& r : line_reports_)
      emit(r.pattern, line.number, line_start, std::string_view(text, size), r.end - 1, false, id);
  }
  fresh_.clear();
  known_in_run_ = 0;
}

std::uint32_t LineScanner::sole_rule(const std::vector<LayoutReport>& reports) const {
  if (reports.empty()) return 0;
  const unsigned rule = rules_.pattern_rule[reports.front().pattern];
  for (const LayoutReport& r : reports)
    if (rules_.pattern_rule[r.pattern] != rule ||
        (rules_.confirm[r.pattern] != kConfirmNone && rules_.confirm[r.pattern] != kConfirmWordEnd))
      return 0;
  return rule + 1;
}

void LineScanner::remember_tail(std::uint64_t piece_newlines) {
  // The line holding the piece's last byte, cut to the text cap.
  const char* begin = piece_.data();
  const char* end = begin + piece_.size();
  const char* line_end = end;
  if (line_end > begin && line_end[-1] == '\n') --line_end;
  const char* nl = find_last_newline(begin, line_end);
  const char* line_begin = nl ? nl + 1 : begin;
  tail_truncated_ = !nl && open_line_start_ < piece_start_;
  tail_start_ = nl ? piece_start_ + static_cast<std::uint64_t>(line_begin - begin) : open_line_start_;
  // Every newline of the piece but a final one lies before the tail line.
  tail_line_ = piece_line_ + piece_newlines - (end[-1] == '\n' ? 1 : 0);
  if (static_cast<std::size_t>(line_end - line_begin) > text_cap_) {
    line_begin = line_end - text_cap_;
    tail_truncated_ = true;
  }
  tail_.assign(line_begin, line_end);
}

void LineScanner::finish() {
  if (!stream_) return;
  settle_word_ends(true);  // the end of the data is a boundary
  scratch_ = thread_scratch.of(rules_);
  hs_close_stream(stream_, scratch_.scan, &LineScanner::on_match, this);
  stream_ = nullptr;
}

int LineScanner::on_match(unsigned id, unsigned long long, unsigned long long to, unsigned,
                          void* context) {
  auto* self = static_cast<LineScanner*>(context);
  self->report(id, self->stream_origin_ + to);  // Hyperscan counts from the stream's (re)start
  return 0;  // keep scanning
}

bool LineScanner::confirmed_on(unsigned pattern, std::string_view line, std::size_t* end) {
  switch (rules_.confirm[pattern]) {
    case kConfirmNone:
    case kConfirmWordEnd: return true;  // checked as it was reported
    case kConfirmMessage: return confirmed(pattern, line, 1, end);
    default: return confirmed(pattern, line, 0, end);
  }
}

bool LineScanner::confirmed(unsigned pattern, std::string_view line, int kind, std::size_t* end) {
  Confirmed& c = confirmed_[kind];
  // The same bytes of the same piece (a line cut at a piece's end is another
  // text, at the same offset, in the next piece).
  if (c.piece != piece_start_ || c.data != line.data() || c.size != line.size()) {
    c.piece = piece_start_;
    c.data = line.data();
    c.size = line.size();
    c.patterns.clear();
    c.ends.clear();
    const std::string_view text = kind == 1 ? read_line(line).message : line;
    c.text_offset = static_cast<std::size_t>(text.data() - line.data());
    auto on_confirm = [](unsigned id, unsigned long long, unsigned long long to, unsigned,
                         void* context) -> int {
      auto& into = *static_cast<Confirmed*>(context);
      into.patterns.push_back(id);  // once each: single-match, at its first end
      into.ends.push_back(static_cast<std::size_t>(to));
      return 0;
    };
    if (hs_scan(rules_.confirm_db.get(), text.data(), static_cast<unsigned>(text.size()), 0,
                scratch_.confirm, on_confirm, &c) != HS_SUCCESS) {
      c.piece = ~std::uint64_t{0};
      throw std::runtime_error("Hyperscan failed while confirming a match");
    }
  }
  const auto it = std::find(c.patterns.begin(), c.patterns.end(), pattern);
  if (it == c.patterns.end()) return false;
  if (end) *end = c.text_offset + c.ends[static_cast<std::size_t>(it - c.patterns.begin())];
  return true;
}

void LineScanner::report(unsigned pattern, std::uint64_t end) {
  if (rules_.confirm[pattern] == kConfirmWordEnd && !piece_.empty()) {
    // The boundary after the hit's last byte (a word character): the next
    // byte, or, past the piece's end, the next piece's first or the end.
    const std::uint64_t next = end - piece_start_;
    if (next >= piece_.size()) {
      word_ends_.push_back(WordEnd{pattern, end});
      return;
    }
    if (is_word_char(piece_[next])) return;
  }
  if (collecting_) {
    run_reports_.push_back(Report{pattern, end});
    return;
  }
  // Reported outside a run: the end of the data, or the piece's end, where
  // the line is not whole.
  if (rules_.line_scope[pattern] == kScopeWhole) return;
  deliver(pattern, end);
}

void LineScanner::settle_word_ends(bool boundary) {
  if (word_ends_.empty()) return;
  const std::vector<WordEnd> settled = std::move(word_ends_);
  word_ends_.clear();
  if (boundary)
    for (const WordEnd& w : settled) deliver(w.pattern, w.end);
}

void LineScanner::deliver(unsigned pattern, std::uint64_t end) {
  const unsigned rule = rules_.pattern_rule[pattern];
  // The last byte of the match decides which line it belongs to.
  std::uint64_t pos = end > 0 ? end - 1 : 0;

  if (!piece_.empty() && pos >= piece_start_) {
    const char* begin = piece_.data();
    std::size_t rel = std::min<std::size_t>(pos - piece_start_, piece_.size() - 1);
    if (rel < cursor_pos_) {
      cursor_pos_ = 0;
      cursor_line_ = piece_line_;
    }
    cursor_line_ += count_newlines(begin + cursor_pos_, begin + rel);
    cursor_pos_ = rel;
    if (last_line_[rule] == cursor_line_) return;

    const char* at = begin + rel;
    const char* nl = find_last_newline(begin, at);
    const char* line_begin = nl ? nl + 1 : begin;
    const std::uint64_t offset = nl ? piece_start_ + static_cast<std::uint64_t>(line_begin - begin)
                                    : open_line_start_;
    const void* next = std::memchr(at, '\n', piece_.size() - rel);
    const char* line_end = next ? static_cast<const char*>(next) : begin + piece_.size();
    emit(pattern, cursor_line_, offset,
         std::string_view(line_begin, static_cast<std::size_t>(line_end - line_begin)),
         static_cast<std::size_t>(at - line_begin), !nl && open_line_start_ < piece_start_);
    return;
  }
  if (last_line_[rule] == tail_line_) return;
  LineHit hit{rule, tail_line_, tail_start_, strip_cr(tail_), tail_truncated_, {}, 0};
  hit.full = hit.text;
  if (!confirmed_on(pattern, hit.full)) return;
  last_line_[rule] = hit.line;
  sink_.on_hit(hit);
}

void LineScanner::emit(unsigned pattern, std::uint64_t number, std::uint64_t offset, std::string_view text,
                       std::size_t at, bool truncated, std::uint64_t layout) {
  const unsigned rule = rules_.pattern_rule[pattern];
  if (last_line_[rule] == number) return;
  LineHit hit{rule, number, offset, {}, truncated, {}, layout};
  text = strip_cr(text);
  hit.full = text;
  std::size_t end = at + 1;  // past the match
  if (!confirmed_on(pattern, hit.full, &end)) return;
  if (text.size() > text_cap_) {
    // Keep the part of an over-long line that holds the match, with a
    // quarter of the cap after it: the value a key introduces follows it.
    std::size_t match_end = std::min(end, text.size());
    std::size_t keep_after = std::min(text_cap_ / 4, text.size() - match_end);
    std::size_t start = match_end + keep_after > text_cap_ ? match_end + keep_after - text_cap_ : 0;
    text = text.substr(start, text_cap_);
    hit.truncated = true;
  }
  hit.text = text;
  last_line_[rule] = number;
  sink_.on_hit(hit);
}

}  // namespace gpudiag::detail
