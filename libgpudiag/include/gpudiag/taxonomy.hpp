#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpudiag {

// What the resolver concludes for a class when no cause rule decides: the
// class whose card names an outcome is the one reported for it. The core
// knows these outcomes, never the class ids that carry them.
enum class Outcome {
  none,                 // decided by cause rules and exit signals only
  non_finite_loss,      // the loss trajectory became NaN/Inf
  diverging_loss,       // it diverged, plateaued or never decreased
  resume_without_load,  // asked to resume, no checkpoint loaded
  too_few_steps,        // completed after at most `max_steps` steps
  completed,            // completed cleanly: a healthy run
  undetermined,         // nothing decides (the fallback; every taxonomy has one)
};
std::string_view to_string(Outcome outcome);

// How a cause of this class ranks against causes of other classes.
enum class Tier {
  specific,  // names what went wrong
  wrapper,   // a generic exception that wraps whatever specific cause matched
};
std::string_view to_string(Tier tier);

// One class of the failure taxonomy: its card (what a user reads) and its
// behaviour (what the resolver does with it). Read from the rule files'
// "classes"; ids are stable API.
struct ClassInfo {
  std::string id;
  std::string family;    // a family of the taxonomy ("families")
  std::string owner;     // job, infra, scheduler, none
  std::string g15;       // default projection onto the published 15 classes, or "generic"
  std::string title;     // a few words for a terminal
  std::string cause;     // what the evidence implies happened
  std::string action;    // the next thing to do
  std::string rerun;     // whether a plain rerun helps: yes, no, maybe, not_needed, unclear
  std::string rerun_note;     // why, or on what it depends; may be empty
  std::string cannot_decide;  // what a log of this class cannot tell
  std::string description;    // what defines the class (the taxonomy document's column)

  // Behaviour.
  std::vector<int> exit_signals;     // signals whose exit points to this class
  std::vector<int> exit_codes;       // plain exit statuses that do (2: a usage error)
  bool signal_exit_cascade = false;  // a launcher reporting such an exit is usually a consequence
  // A launcher's report of such an exit tells how a worker was stopped (it
  // reaps the others with it once one failed), not why: any failure in
  // evidence, a wrapper exception included, outranks it.
  bool signal_exit_stop = false;
  Tier tier = Tier::specific;
  bool survivable = false;  // a process can go on training after it (an allocation failure)
  bool stall = false;       // the verdict says whether training was still moving before it
  // How the job was stopped from outside (a limit, a cancel, a preemption):
  // when the loss had already gone wrong before it, the training problem is
  // the cause and the stop a finding.
  bool stop = false;
  // A failure to load the checkpoint a run resumes from: one the run went on
  // after means it started over from scratch, not that it recovered.
  bool resume_failure = false;
  Outcome outcome = Outcome::none;
  std::optional<double> max_steps;  // with outcome too_few_steps: the most steps that count
  std::string source;               // the file that declared the card

  bool operator==(const ClassInfo&) const = default;
};

struct FamilyInfo {
  std::string id;
  std::string title;  // the taxonomy document's section title

  bool operator==(const FamilyInfo&) const = default;
};

// The classes a rule set can report. The shipped taxonomy is always known; a
// rules directory may add classes (or replace a shipped card) with its own.
class Taxonomy {
 public:
  std::vector<FamilyInfo> families;
  std::vector<ClassInfo> classes;  // in document order
  std::vector<std::string> g15;    // the published corpus's 15 classes

  const ClassInfo* find(std::string_view id) const;  // nullptr when unknown
  const ClassInfo* for_outcome(Outcome outcome) const;  // nullptr when no class has it
  const ClassInfo* for_signal(int signo) const;         // nullptr when no class claims it
  const ClassInfo* for_exit_code(int code) const;       // a plain status; nullptr likewise
  bool is_g15(std::string_view id) const;

  bool operator==(const Taxonomy&) const = default;
};

// The shipped taxonomy (rules/*.json as built into the library).
const Taxonomy& taxonomy();

}  // namespace gpudiag
