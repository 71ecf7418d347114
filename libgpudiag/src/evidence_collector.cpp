#include "evidence_collector.hpp"

#include "extractor.hpp"
#include "line_fields.hpp"
#include "traceback_reader.hpp"
#include "trajectory_builder.hpp"
#include "text_util.hpp"

namespace gpudiag::detail {

bool EvidenceCollector::conditions_hold(unsigned rule, std::uint64_t line,
                                        const std::optional<PythonException>& exception) const {
  const Rule& r = rules_.rules[rule];
  if (!r.phase.empty() && trajectory_) {
    const bool training =
        trajectory_->readings() > 0 || (exception && exception->in_training_step);
    if ((r.phase == "training") != training) return false;
  }
  if (!rules_.frames[rule] && !rules_.raised_in[rule]) return true;
  // The frames asked of are those of the traceback the line closes.
  if (!exception || exception->frames.empty() || line <= exception->last) return false;
  std::string_view frames = exception->frames;
  if (rules_.frames[rule] && !rules_.frames[rule]->find(frames)) return false;
  if (rules_.raised_in[rule]) {
    // The innermost frame is the traceback's last line.
    frames.remove_suffix(1);  // its newline
    const std::size_t nl = frames.rfind('\n');
    if (!rules_.raised_in[rule]->find(nl == frames.npos ? frames : frames.substr(nl + 1)))
      return false;
  }
  return true;
}

// Inline where on_hit() records: a rule that matches most lines (a progress
// line's) is recorded here a line at a time.
inline void EvidenceCollector::record(EvidenceTable& table, const LineHit& hit, std::uint64_t event) {
  RuleEvidence& ev = table.add(hit.rule);
  if (ev.count == 0) return record_hit(ev, hit, event, true);
  record_hit(ev, hit, event, false);
  if (ev.unkept.data() == nullptr) unkept_.emplace_back(&table, hit.rule);
  ev.unkept = hit.text.data() ? hit.text : std::string_view("", 0);
}

void EvidenceCollector::on_any_hit(const LineHit& hit) {
  if (rules_.unless[hit.rule] && rules_.unless[hit.rule]->find(hit.text)) return;
  if (rules_.rules[hit.rule].role == Role::cause) return on_cause(hit);
  record(per_rule_, hit, 0);
}

void EvidenceCollector::on_cause(const LineHit& hit) {
  LineFields fields = read_line(hit.text);
  std::optional<PythonException> exception;
  if (tracebacks_) exception = tracebacks_->exception_at(hit.line, fields.rank);
  if (!conditions_hold(hit.rule, hit.line, exception)) return;
  // An exception Python reported as ignored is as its report's severity.
  if (fields.severity == Severity::unknown && exception) fields.severity = exception->severity;
  // The second line of a Python warning is still the warning, unless a
  // traceback starts there.
  if (fields.severity == Severity::unknown && tracebacks_ && tracebacks_->continues_warning(hit.line, fields.rank) &&
      fields.message.substr(0, 9) != "Traceback")
    fields.severity = Severity::warning;
  if (fields.severity != Severity::unknown && fields.severity < rules_.rules[hit.rule].severity) {
    record(logged_, hit, 0);
    return;
  }
  record(per_rule_, hit, exception ? exception->start : 0);
}

void EvidenceCollector::keep_texts() {
  for (auto [table, rule] : unkept_) {
    RuleEvidence& ev = table->add(rule);
    ev.last.text.assign(ev.unkept);
    ev.unkept = {};
  }
  unkept_.clear();
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
