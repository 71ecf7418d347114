#pragma once

#include <hs.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "match_sink.hpp"
#include "rule_set_impl.hpp"

namespace gpudiag::detail {

// Whether `line` has the layout `layout` (its bytes with every digit read as
// '0'), both `size` bytes: by AVX2 where the CPU has it, else (and where
// `portable`, for tests of both ways) by SSE2.
bool has_layout(const char* line, const char* layout, std::size_t size, bool portable = false);

// A stream report on a line, as the layout cache keeps it.
struct LayoutReport {
  unsigned pattern;
  std::uint32_t end;  // past the match's last byte, from the line's first
};

// Runs one Hyperscan stream over the log, fed as consecutive pieces, and turns
// match end offsets into (rule, line, offset, text) hits. Pieces normally end
// at a newline so every matched line is whole in memory; a piece of an
// over-long line is accepted too (its evidence text is then an excerpt).
//
// Where every pattern is held to one line and blind to digits
// (RuleSet::Impl::line_local), a line's hits depend on its layout alone: its
// bytes with every digit read as 0. Logs repeat a few layouts (a training
// step, an NCCL channel line, a warning per rank: 93% of the lines of the
// real logs in ../shared/corpora/wild repeat an earlier line's layout), so
// the scanner keeps the reports of each layout it scanned (per thread, per
// rule set) and hands a line of a known layout its reports without scanning
// it; the stream reads only the runs of new lines between, reset where it
// skipped. Patterns that tell digits apart were compiled as skeletons and are
// confirmed on each line, so a line's hits are the same either way.
class LineScanner {
 public:
  // `by_layout`: look whole lines up by layout where the rules allow it (the
  // tests compare the two ways).
  LineScanner(const RuleSet::Impl& rules, MatchSink& sink, std::size_t text_cap, bool by_layout = true);
  ~LineScanner();
  LineScanner(const LineScanner&) = delete;
  LineScanner& operator=(const LineScanner&) = delete;

  void scan(std::string_view piece);
  void finish();  // reports end-of-data matches; call once

  std::uint64_t bytes() const { return piece_start_; }
  std::uint64_t lines() const;
  // The lines handed the hits of their known layout without a scan.
  std::uint64_t replayed() const { return replayed_; }

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
  // a prefilter or a line_start pattern, matches the pattern's full form;
  // where it does, `end` is set past the full form's first match, from the
  // line's first byte.
  bool confirmed(unsigned pattern, std::string_view line, int kind, std::size_t* end = nullptr);
  // Whether a stream hit of `pattern` on `line` stands, confirmed as its
  // compile plan says: not at all, on the line, or on the line's message.
  // `end`, where given and the hit was confirmed, is moved to the full
  // form's match: a skeleton's (a prefilter's) may end elsewhere.
  bool confirmed_on(unsigned pattern, std::string_view line, std::size_t* end = nullptr);
  void remember_tail(std::uint64_t piece_newlines);
  // The rule (+ 1) whose hit a layout's reports all are, where none is
  // confirmed on the line; 0 otherwise.
  std::uint32_t sole_rule(const std::vector<LayoutReport>& reports) const;
  // Sends a hit of `pattern` on the whole line `text` (no line ending) on, if
  // its rule has none there yet and it is confirmed; `at`: the match's last
  // byte in `text`; `layout`: LineHit::layout.
  void emit(unsigned pattern, std::uint64_t number, std::uint64_t offset, std::string_view text,
            std::size_t at, bool truncated, std::uint64_t layout = 0);

  // Scans a piece by layout (see above); its newlines.
  std::uint64_t scan_lines(std::string_view piece);
  // What every piece ends with: the lines counted, the last line kept.
  void end_piece(std::uint64_t newlines);
  struct FreshLine {
    std::size_t begin, size;  // in the piece; size with the newline, if any
    std::uint64_t number;
    std::uint64_t layout;     // its layout's key, if `cached`
    bool cached;              // whole, and short enough to keep
    bool whole;               // begins and ends in this piece
    bool lines;               // not one line but a stretch of whole lines
    std::uint64_t known = 0;  // LineHit::layout of a known line scanned with the run around it
  };
  // After windows of lookups that let the scan skip few lines, gathers the
  // next stretch of whole lines as one fresh run: past it, or null where none
  // is taken.
  const char* skip_stretch(const char* p, const char* end, std::uint64_t& number);
  // Sends on the hits a known layout keeps, for the whole line at `line`.
  template <class Found>
  void replay(const Found& found, const char* line, std::uint64_t number);
  void scan_fresh();  // scans the fresh lines gathered, in one run, and delivers their hits
  struct Report {
    unsigned pattern;
    std::uint64_t end;
  };
  std::vector<FreshLine> fresh_;
  std::vector<Report> run_reports_;  // of the run being scanned, absolute ends
  bool collecting_ = false;          // report() gathers into run_reports_
  std::uint64_t stream_end_ = 0;     // absolute offset past the stream's last byte
  std::uint64_t stream_origin_ = 0;  // absolute offset of its first byte since its last reset
  // Lines looked up in the current window, and those of them the scan
  // skipped (known, and not amid new ones); the stretch scanned without
  // lookups after a window that skipped few.
  static constexpr std::size_t kWindow = 64, kMinBypass = 64 << 10, kMaxBypass = 4 << 20;
  std::size_t looked_ = 0, skipped_ = 0, bypass_ = 0, poor_windows_ = 0;
  std::uint64_t replayed_ = 0;
  std::uint32_t last_layout_ = 0;  // the layout cache's entry (+ 1) of the line before, if known
  // Known lines since the last fresh one, gathered into the fresh run: a
  // few are scanned with it rather than the stream reset after them.
  static constexpr std::size_t kKnownInRun = 3;
  std::size_t known_in_run_ = 0;
  // New lines are scanned, and their layouts kept, this many at a time at
  // most: a run that lasted until the piece's end learned no layout for the
  // whole first piece of a log (a megabyte), so none of its lines, of a
  // handful of layouts, could be skipped, and its windows of lookups, all
  // poor, had the next stretches scanned without lookups.
  static constexpr std::size_t kFreshRun = 32;
  std::string fresh_layout_;         // the layout of a fresh line being kept
  std::vector<LayoutReport> line_reports_;  // a fresh line's, as the cache keeps them

  const RuleSet::Impl& rules_;
  MatchSink& sink_;
  bool by_layout_;
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
    std::vector<std::size_t> ends;  // of each, past its first match in the text
    std::size_t text_offset = 0;    // of the text scanned (the message) in the line
  };
  Confirmed confirmed_[2];
};

}  // namespace gpudiag::detail
