#pragma once

#include <string>

namespace gpudiag::detail {

// A pattern as the layout scanner needs it (see LineScanner): held to one
// line, and blind to which digit stands where.
//
// `exact`: the expression with every character set that could take a newline
// (`\s`, `\W`, `\D`, a negated class, `.` under dotall) taking every byte it
// took but the newline, so that no match crosses a line; otherwise the
// expression as written. `skeleton`: `exact` with every set that takes some
// digits but not all (`1`, `[1-9]`, `[^0]`) taking all ten, so that its hits
// on a line are those on any line that differs only in its digits; equal to
// `exact` for a pattern blind to digits (a superset of its matches otherwise,
// which are then confirmed line by line).
//
// `understood` is false, and the forms empty, for what this reading does not
// follow (Unicode flags, backreferences, lookaround, \Q...\E, \p, \R, \A, \z,
// POSIX classes, (?x), a literal newline): a rule set with such a pattern is
// scanned as one stream, as before.
struct LineForm {
  bool understood = false;
  std::string problem;  // what was not followed, where not understood
  std::string exact;
  std::string skeleton;
  bool digit_blind() const { return exact == skeleton; }
};

LineForm line_form(const std::string& expression, unsigned hs_flags);

}  // namespace gpudiag::detail
