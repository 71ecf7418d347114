#include "line_scanner.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>

#if defined(__SSE2__)
#include <emmintrin.h>
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

LineScanner::LineScanner(const RuleSet::Impl& rules, MatchSink& sink, std::size_t text_cap)
    : rules_(rules), sink_(sink), text_cap_(std::max<std::size_t>(text_cap, 16)),
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
  if (hs_scan_stream(stream_, piece.data(), static_cast<unsigned>(piece.size()), 0, scratch_.scan,
                     &LineScanner::on_match, this) != HS_SUCCESS)
    throw std::runtime_error("Hyperscan failed while scanning");
  const char* begin = piece.data();
  const char* end = begin + piece.size();
  // The hits have counted the lines up to the last of them; count the rest.
  const std::uint64_t newlines =
      (cursor_line_ - piece_line_) + count_newlines(begin + cursor_pos_, end);
  remember_tail(newlines);
  piece_line_ += newlines;
  if (const char* nl = find_last_newline(begin, end))
    open_line_start_ = piece_start_ + static_cast<std::uint64_t>(nl - begin) + 1;
  last_byte_newline_ = piece.back() == '\n';
  piece_start_ += piece.size();
  piece_ = {};
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
  self->report(id, to);
  return 0;  // keep scanning
}

bool LineScanner::confirmed_on(unsigned pattern, std::string_view line) {
  switch (rules_.confirm[pattern]) {
    case kConfirmNone:
    case kConfirmWordEnd: return true;  // checked as it was reported
    case kConfirmMessage: return confirmed(pattern, line, 1);
    default: return confirmed(pattern, line, 0);
  }
}

bool LineScanner::confirmed(unsigned pattern, std::string_view line, int kind) {
  Confirmed& c = confirmed_[kind];
  // The same bytes of the same piece (a line cut at a piece's end is another
  // text, at the same offset, in the next piece).
  if (c.piece != piece_start_ || c.data != line.data() || c.size != line.size()) {
    c.piece = piece_start_;
    c.data = line.data();
    c.size = line.size();
    c.patterns.clear();
    const std::string_view text = kind == 1 ? read_line(line).message : line;
    auto on_confirm = [](unsigned id, unsigned long long, unsigned long long, unsigned,
                         void* context) -> int {
      static_cast<std::vector<unsigned>*>(context)->push_back(id);  // once each: single-match
      return 0;
    };
    if (hs_scan(rules_.confirm_db.get(), text.data(), static_cast<unsigned>(text.size()), 0,
                scratch_.confirm, on_confirm, &c.patterns) != HS_SUCCESS) {
      c.piece = ~std::uint64_t{0};
      throw std::runtime_error("Hyperscan failed while confirming a match");
    }
  }
  return std::find(c.patterns.begin(), c.patterns.end(), pattern) != c.patterns.end();
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
  LineHit hit{rule, 0, 0, {}, false, {}};

  if (!piece_.empty() && pos >= piece_start_) {
    const char* begin = piece_.data();
    std::size_t rel = std::min<std::size_t>(pos - piece_start_, piece_.size() - 1);
    if (rel < cursor_pos_) {
      cursor_pos_ = 0;
      cursor_line_ = piece_line_;
    }
    cursor_line_ += count_newlines(begin + cursor_pos_, begin + rel);
    cursor_pos_ = rel;
    hit.line = cursor_line_;
    if (last_line_[rule] == hit.line) return;

    const char* at = begin + rel;
    const char* nl = find_last_newline(begin, at);
    const char* line_begin = nl ? nl + 1 : begin;
    hit.offset = nl ? piece_start_ + static_cast<std::uint64_t>(line_begin - begin)
                    : open_line_start_;
    const void* next = std::memchr(at, '\n', piece_.size() - rel);
    const char* line_end = next ? static_cast<const char*>(next) : begin + piece_.size();
    hit.truncated = !nl && open_line_start_ < piece_start_;
    std::string_view text(line_begin, static_cast<std::size_t>(line_end - line_begin));
    text = strip_cr(text);
    hit.full = text;
    if (text.size() > text_cap_) {
      // Keep the part of an over-long line that holds the match, with a
      // quarter of the cap after it: the value a key introduces follows it.
      std::size_t match_end = static_cast<std::size_t>(at - line_begin) + 1;
      std::size_t keep_after = std::min(text_cap_ / 4, text.size() - match_end);
      std::size_t start = match_end + keep_after > text_cap_ ? match_end + keep_after - text_cap_ : 0;
      text = text.substr(start, text_cap_);
      hit.truncated = true;
    }
    if (!confirmed_on(pattern, hit.full)) return;
    hit.text = text;
  } else {
    hit.line = tail_line_;
    if (last_line_[rule] == hit.line) return;
    hit.offset = tail_start_;
    hit.text = strip_cr(tail_);
    hit.full = hit.text;
    hit.truncated = tail_truncated_;
    if (!confirmed_on(pattern, hit.full)) return;
  }
  last_line_[rule] = hit.line;
  sink_.on_hit(hit);
}

}  // namespace gpudiag::detail
