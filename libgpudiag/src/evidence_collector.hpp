#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpudiag/diagnosis.hpp"
#include "match_sink.hpp"
#include "rule_set_impl.hpp"
#include "traceback_reader.hpp"

namespace gpudiag::detail {

struct RecordedHit {
  std::uint64_t line = 0, offset = 0;
  // Where the event the line belongs to began: the first line of the Python
  // traceback it closes or lies in; else the line itself.
  std::uint64_t event = 0;
  std::string text;  // raw bytes of the line (or its excerpt)
  bool truncated = false;
};

// Per rule: how many lines matched, and the first and last of them.
struct RuleEvidence {
  std::uint64_t count = 0;
  RecordedHit first, last;
  // The last hit's text while it still lies in the scanner's piece (see
  // EvidenceCollector::keep_texts()).
  std::string_view unkept;
};

// Each rule's evidence, by rule index. Most of a rule set matches nothing in
// a log: only the rules that matched hold a RuleEvidence (a dense table of
// them, built and torn down for every log, cost a small log's diagnosis more
// than its scan of most lines). References stay valid once collecting ends.
class EvidenceTable {
 public:
  explicit EvidenceTable(std::size_t rules) : slot_(rules, 0) {}
  // The rule's evidence; an empty one (count 0) where it matched nothing.
  const RuleEvidence& operator[](std::size_t rule) const {
    return slot_[rule] ? held_[slot_[rule] - 1] : kNone;
  }
  RuleEvidence& add(std::size_t rule) {
    if (!slot_[rule]) {
      held_.emplace_back();
      slot_[rule] = static_cast<std::uint32_t>(held_.size());
    }
    return held_[slot_[rule] - 1];
  }
  std::size_t size() const { return slot_.size(); }

 private:
  static inline const RuleEvidence kNone{};
  std::vector<std::uint32_t> slot_;  // per rule: 1 + its index in held_, or 0
  std::vector<RuleEvidence> held_;
};

// Counts a hit and keeps it as the first or (so far) last one; `event`: where
// its event began (0: at the line itself). Its text is left as it was
// unless `copy_text`.
inline void record_hit(RuleEvidence& ev, const LineHit& hit, std::uint64_t event = 0, bool copy_text = true) {
  RecordedHit& slot = ev.count == 0 ? ev.first : ev.last;
  slot.line = hit.line;
  slot.event = event != 0 ? event : hit.line;
  slot.offset = hit.offset;
  if (copy_text) slot.text.assign(hit.text);  // validated once, when it becomes evidence
  slot.truncated = hit.truncated;
  ++ev.count;
}

// Keeps each rule's hits; a cause rule's line below the rule's severity (an
// INFO or WARNING line that names an error) is kept apart, as logged context.
class TrajectoryBuilder;

// A cause rule with conditions on its exception (frames, phase) counts a line
// only when they hold, asked of the traceback and trajectory readers ahead of
// it in the chain.
class EvidenceCollector : public MatchSink {
 public:
  explicit EvidenceCollector(const RuleSet::Impl& rules, const TracebackReader* tracebacks = nullptr,
                             const TrajectoryBuilder* trajectory = nullptr)
      : rules_(rules), tracebacks_(tracebacks), trajectory_(trajectory),
        per_rule_(rules.rules.size()), logged_(rules.rules.size()), plain_(rules.rules.size()) {
    for (std::size_t i = 0; i < plain_.size(); ++i) plain_[i] = !rules.unless[i] && rules.rules[i].role != Role::cause;
  }
  // Inline for a later hit of a rule that is no cause and has no `unless`
  // (a progress rule's, on most lines of a run): counted, its text left a
  // view until keep_texts().
  void on_hit(const LineHit& hit) override {
    if (plain_[hit.rule]) {
      RuleEvidence& ev = per_rule_.add(hit.rule);
      if (ev.count != 0 && ev.unkept.data() != nullptr) {
        record_hit(ev, hit, 0, false);
        ev.unkept = hit.text.data() ? hit.text : std::string_view("", 0);
        return;
      }
    }
    on_any_hit(hit);
  }
  // Copies the texts of the last hits, which until then are views of the
  // scanned piece: a rule that matches most lines (a progress line's) has
  // only its last line of each piece copied. Call it before the bytes that
  // were scanned change, and before reading the tables.
  void keep_texts();
  const EvidenceTable& per_rule() const { return per_rule_; }
  const EvidenceTable& logged() const { return logged_; }

 private:
  // Records a hit, leaving a last hit's text a view until keep_texts().
  void record(EvidenceTable& table, const LineHit& hit, std::uint64_t event);
  // A cause rule's hit: recorded where its conditions hold, as logged
  // context where its line's severity is below the rule's.
  void on_cause(const LineHit& hit);
  void on_any_hit(const LineHit& hit);  // on_hit() but for its inline part

  bool conditions_hold(unsigned rule, std::uint64_t line,
                       const std::optional<PythonException>& exception) const;

  const RuleSet::Impl& rules_;
  const TracebackReader* tracebacks_;
  const TrajectoryBuilder* trajectory_;
  EvidenceTable per_rule_;
  EvidenceTable logged_;
  std::vector<std::pair<EvidenceTable*, unsigned>> unkept_;  // rules with a text to copy
  std::vector<char> plain_;  // per rule: no cause, no `unless`
};

// The public Evidence for one recorded hit, with the rule's values extracted.
Evidence make_evidence(const RuleSet::Impl& rules, unsigned rule, const RuleEvidence& ev,
                       const RecordedHit& hit);

}  // namespace gpudiag::detail
