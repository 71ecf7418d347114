#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpudiag/diagnosis.hpp"
#include "match_sink.hpp"
#include "rule_set_impl.hpp"

namespace gpudiag::detail {

struct RecordedHit {
  std::uint64_t line = 0, offset = 0;
  std::string text;  // raw bytes of the line (or its excerpt)
  bool truncated = false;
};

// Per rule: how many lines matched, and the first and last of them.
struct RuleEvidence {
  std::uint64_t count = 0;
  RecordedHit first, last;
};

// Counts a hit and keeps it as the first or (so far) last one.
void record_hit(RuleEvidence& ev, const LineHit& hit);

class EvidenceCollector : public MatchSink {
 public:
  explicit EvidenceCollector(std::size_t rule_count) : per_rule_(rule_count) {}
  void on_hit(const LineHit& hit) override { record_hit(per_rule_[hit.rule], hit); }
  const std::vector<RuleEvidence>& per_rule() const { return per_rule_; }

 private:
  std::vector<RuleEvidence> per_rule_;
};

// The public Evidence for one recorded hit, with the rule's values extracted.
Evidence make_evidence(const RuleSet::Impl& rules, unsigned rule, const RuleEvidence& ev,
                       const RecordedHit& hit);

}  // namespace gpudiag::detail
