#pragma once

#include <hs.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "match_sink.hpp"
#include "rule_set_impl.hpp"

namespace gpudiag::detail {

// Runs one Hyperscan stream over the log, fed as consecutive pieces, and turns
// match end offsets into (rule, line, offset, text) hits. Pieces normally end
// at a newline so every matched line is whole in memory; a piece of an
// over-long line is accepted too (its evidence text is then an excerpt).
class LineScanner {
 public:
  LineScanner(const RuleSet::Impl& rules, MatchSink& sink, std::size_t text_cap);
  ~LineScanner();
  LineScanner(const LineScanner&) = delete;
  LineScanner& operator=(const LineScanner&) = delete;

  void scan(std::string_view piece);
  void finish();  // reports end-of-data matches; call once

  std::uint64_t bytes() const { return piece_start_; }
  std::uint64_t lines() const;

  // The scratch space of one scan: the stream's and the confirming scans'.
  struct Scratch {
    hs_scratch_t* scan = nullptr;
    hs_scratch_t* confirm = nullptr;
  };

 private:
  static int on_match(unsigned id, unsigned long long from, unsigned long long to,
                      unsigned flags, void* context);
  // A hit as Hyperscan reports it: a pattern whose trailing word boundary
  // the scanner checks (kConfirmWordEnd) is checked here, and held back
  // where its last byte ends the piece.
  void report(unsigned pattern, std::uint64_t end);
  // Delivers the hits held back at the last piece's end, where `boundary`:
  // the byte after it (the next piece's first) is no word character, or the
  // data ended; drops them otherwise.
  void settle_word_ends(bool boundary);
  // A hit that stands: found on its line, confirmed as the plan says, sent on.
  void deliver(unsigned pattern, std::uint64_t end);
  // Whether `line` (kind 0), or its message (kind 1), where the scan found
  // a prefilter or a line_start pattern, matches the pattern's full form.
  bool confirmed(unsigned pattern, std::string_view line, int kind);
  // Whether a stream hit of `pattern` on `line` stands, confirmed as its
  // compile plan says: not at all, on the line, or on the line's message.
  bool confirmed_on(unsigned pattern, std::string_view line);
  void remember_tail(std::uint64_t piece_newlines);

  const RuleSet::Impl& rules_;
  MatchSink& sink_;
  std::size_t text_cap_;
  Scratch scratch_;  // this thread's, fetched as each scan starts
  hs_stream_t* stream_ = nullptr;

  struct WordEnd {
    unsigned pattern;
    std::uint64_t end;
  };
  std::vector<WordEnd> word_ends_;  // hits at the last piece's end, boundary unknown

  std::string_view piece_;           // the piece being scanned
  std::uint64_t piece_start_ = 0;    // its absolute offset (= bytes scanned before it)
  std::uint64_t piece_line_ = 1;     // line number of its first byte
  std::uint64_t open_line_start_ = 0;  // absolute start of the line its first byte is in
  bool last_byte_newline_ = true;

  // Line counting inside a piece resumes where the previous hit left off,
  // because Hyperscan reports matches in end-offset order.
  std::size_t cursor_pos_ = 0;
  std::uint64_t cursor_line_ = 1;

  // The last line of the previous piece, for matches reported after it is gone
  // (end-of-data anchors reported when the stream closes).
  std::string tail_;
  std::uint64_t tail_start_ = 0, tail_line_ = 1;
  bool tail_truncated_ = false;

  std::vector<std::uint64_t> last_line_;  // per rule: line of the last hit

  // The confirm patterns that the text last confirmed matches, per kind (the
  // line, its message): one line often holds hits of several (a traceback
  // frame, an exception line), and one scan of it answers for all of them.
  struct Confirmed {
    std::uint64_t piece = ~std::uint64_t{0};  // piece_start_ when it was scanned
    const char* data = nullptr;
    std::size_t size = 0;
    std::vector<unsigned> patterns;
  };
  Confirmed confirmed_[2];
};

}  // namespace gpudiag::detail
