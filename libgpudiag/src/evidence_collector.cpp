#include "evidence_collector.hpp"

#include "extractor.hpp"
#include "line_fields.hpp"
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

void EvidenceCollector::on_hit(const LineHit& hit) {
  const Rule& rule = rules_.rules[hit.rule];
  if (rule.role == Role::cause) {
    const Severity severity = read_line(hit.text).severity;
    if (severity != Severity::unknown && severity < rule.severity) {
      record_hit(logged_[hit.rule], hit);
      return;
    }
  }
  record_hit(per_rule_[hit.rule], hit);
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
  const LineFields fields = read_line(out.text);
  out.rank = fields.rank;
  out.host = std::string(fields.host);
  if (fields.severity != Severity::unknown) out.severity = std::string(to_string(fields.severity));
  return out;
}

}  // namespace gpudiag::detail
