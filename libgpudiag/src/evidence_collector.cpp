#include "evidence_collector.hpp"

#include "extractor.hpp"
#include "rank_prefix.hpp"
#include "text_util.hpp"

namespace gpudiag::detail {

void record_hit(RuleEvidence& ev, const LineHit& hit) {
  RecordedHit& slot = ev.count == 0 ? ev.first : ev.last;
  slot.line = hit.line;
  slot.offset = hit.offset;
  slot.text.assign(hit.text);  // validated once, when it becomes evidence
  slot.truncated = hit.truncated;
  ++ev.count;
}

Evidence make_evidence(const RuleSet::Impl& rules, unsigned rule, const RuleEvidence& ev,
                       const RecordedHit& hit) {
  Evidence out;
  out.rule = rules.rules[rule].id;
  out.cls = rules.rules[rule].cls;
  out.line = hit.line;
  out.offset = hit.offset;
  out.text = to_valid_utf8(hit.text);
  out.truncated = hit.truncated;
  out.count = ev.count;
  out.values = extract_values(rules.extractions[rule], out.text);
  RankTag tag = parse_rank_prefix(out.text);
  out.rank = tag.rank;
  out.host = std::move(tag.host);
  return out;
}

}  // namespace gpudiag::detail
