#include "line_form.hpp"

#include <hs.h>

#include <algorithm>
#include <bitset>
#include <vector>

namespace gpudiag::detail {
namespace {

using ByteSet = std::bitset<256>;

ByteSet range(unsigned first, unsigned last) {
  ByteSet s;
  for (unsigned c = first; c <= last; ++c) s.set(c);
  return s;
}

ByteSet one(unsigned char c) {
  ByteSet s;
  s.set(c);
  return s;
}

const ByteSet kDigits = range('0', '9');
const ByteSet kWord = kDigits | range('A', 'Z') | range('a', 'z') | one('_');
const ByteSet kSpace = range('\t', '\r') | one(' ');  // Hyperscan's \s: \t \n \v \f \r and space
const ByteSet kNewline = one('\n');

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

enum class Escape { set, assertion, unknown };

// The escape whose letter is e[i] (the backslash before it), i moved past it.
Escape read_escape(const std::string& e, std::size_t& i, bool in_class, ByteSet& out) {
  if (i >= e.size()) return Escape::unknown;
  const char x = e[i++];
  switch (x) {
    case 'd': out = kDigits; return Escape::set;
    case 'D': out = ~kDigits; return Escape::set;
    case 'w': out = kWord; return Escape::set;
    case 'W': out = ~kWord; return Escape::set;
    case 's': out = kSpace; return Escape::set;
    case 'S': out = ~kSpace; return Escape::set;
    case 't': out = one('\t'); return Escape::set;
    case 'n': out = one('\n'); return Escape::set;
    case 'r': out = one('\r'); return Escape::set;
    case 'f': out = one('\f'); return Escape::set;
    case 'e': out = one(27); return Escape::set;
    case 'a': out = one(7); return Escape::set;
    case 'b':
      if (!in_class) return Escape::assertion;
      out = one('\b');
      return Escape::set;
    case 'B': return in_class ? Escape::unknown : Escape::assertion;
    case 'x': {
      unsigned value = 0;
      if (i < e.size() && e[i] == '{') {
        const std::size_t close = e.find('}', i);
        if (close == std::string::npos || close == i + 1) return Escape::unknown;
        for (std::size_t k = i + 1; k < close; ++k) {
          const int h = hex_value(e[k]);
          if (h < 0 || value > 0xf) return Escape::unknown;
          value = value * 16 + static_cast<unsigned>(h);
        }
        i = close + 1;
      } else {
        int digits = 0;
        while (digits < 2 && i < e.size() && hex_value(e[i]) >= 0)
          value = value * 16 + static_cast<unsigned>(hex_value(e[i++])), ++digits;
        if (digits == 0) return Escape::unknown;
      }
      out = one(static_cast<unsigned char>(value));
      return Escape::set;
    }
    default:
      if (is_alnum(x)) return Escape::unknown;  // \A \z \Q \p \R \1 ...: not followed here
      out = one(static_cast<unsigned char>(x));
      return Escape::set;
  }
}

// The set with each ASCII letter's other case.
ByteSet both_cases(ByteSet s) {
  for (unsigned c = 'a'; c <= 'z'; ++c)
    if (s[c] || s[c - 32]) s.set(c), s.set(c - 32);
  return s;
}

// A class from '[' at e[i] to its ']', i moved past it; false where it holds
// what this reading does not follow. A caseless class takes either case of
// its letters, and a negated one neither (as Hyperscan reads it): the set
// written out for it must say so, since a class written out is read
// caselessly again.
bool read_class(const std::string& e, std::size_t& i, bool caseless, ByteSet& out) {
  ++i;
  const bool negated = i < e.size() && e[i] == '^';
  if (negated) ++i;
  out.reset();
  bool first = true;
  while (i < e.size() && (e[i] != ']' || first)) {
    first = false;
    if (e[i] == '[' && i + 1 < e.size() && (e[i + 1] == ':' || e[i + 1] == '=' || e[i + 1] == '.'))
      return false;  // POSIX classes
    ByteSet item;
    if (e[i] == '\\') {
      ++i;
      if (read_escape(e, i, true, item) != Escape::set) return false;
    } else {
      item = one(static_cast<unsigned char>(e[i++]));
    }
    // A range: a single character, '-', a single character (not the ']').
    if (item.count() == 1 && i + 1 < e.size() && e[i] == '-' && e[i + 1] != ']') {
      ++i;
      ByteSet last;
      if (e[i] == '\\') {
        ++i;
        if (read_escape(e, i, true, last) != Escape::set) return false;
      } else if (e[i] == '[') {
        return false;
      } else {
        last = one(static_cast<unsigned char>(e[i++]));
      }
      if (last.count() != 1) return false;
      unsigned from = 0, to = 0;
      while (!item[from]) ++from;
      while (!last[to]) ++to;
      if (to < from) return false;
      item = range(from, to);
    }
    out |= item;
  }
  if (i >= e.size()) return false;
  ++i;  // the ']'
  if (caseless) out = both_cases(out);
  if (negated) out = ~out;
  return true;
}

std::string class_of(const ByteSet& s) {
  static const char* const kHex = "0123456789abcdef";
  auto byte = [&](std::string& out, unsigned c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  };
  std::string out = "[";
  for (unsigned c = 0; c < 256;) {
    if (!s[c]) {
      ++c;
      continue;
    }
    unsigned last = c;
    while (last + 1 < 256 && s[last + 1]) ++last;
    byte(out, c);
    if (last > c) {
      out += '-';
      byte(out, last);
    }
    c = last + 1;
  }
  return out + "]";
}

// A quantifier {n}, {n,}, {n,m} at e[i]: its length, or 0 (then '{' is a literal).
std::size_t quantifier_length(const std::string& e, std::size_t i) {
  std::size_t k = i + 1;
  const std::size_t digits_start = k;
  while (k < e.size() && e[k] >= '0' && e[k] <= '9') ++k;
  if (k == digits_start) return 0;
  if (k < e.size() && e[k] == ',') {
    ++k;
    while (k < e.size() && e[k] >= '0' && e[k] <= '9') ++k;
  }
  return k < e.size() && e[k] == '}' ? k - i + 1 : 0;
}

// A group opening "(?..." at e[i]: its length where it is "(?:" or sets only
// caselessness or multiline ("(?i)", "(?i:", "(?-i)"); 0 otherwise. The
// caselessness it leaves in `caseless`.
std::size_t group_length(const std::string& e, std::size_t i, bool& caseless) {
  if (i + 1 >= e.size() || e[i + 1] != '?') return 1;
  std::size_t k = i + 2;
  bool on = true;
  for (; k < e.size() && (e[k] == 'i' || e[k] == 'm' || e[k] == '-'); ++k) {
    if (e[k] == '-') on = false;
    if (e[k] == 'i') caseless = on;
  }
  if (k < e.size() && (e[k] == ':' || e[k] == ')')) return k - i + 1;
  return 0;
}

}  // namespace

LineForm line_form(const std::string& e, unsigned hs_flags) {
  LineForm form;
  auto refuse = [](std::string why) {
    LineForm refused;
    refused.problem = std::move(why);
    return refused;
  };
  if (hs_flags & (HS_FLAG_UTF8 | HS_FLAG_UCP)) return refuse("the utf8 or ucp flag");
  const bool dotall = (hs_flags & HS_FLAG_DOTALL) != 0;
  bool caseless = (hs_flags & HS_FLAG_CASELESS) != 0;
  std::vector<bool> groups;  // the caselessness outside each open group
  // Whether the expression can match an empty text (then Hyperscan reports
  // empty matches where a line starts, which belong to no line's text): per
  // open group, whether its alternative so far can be empty, before its last
  // atom too (a quantifier may leave that atom out), and whether an earlier
  // alternative could.
  struct Empty {
    bool before = true, alt = true, any = false;
  };
  std::vector<Empty> empty(1);
  bool quantified = false;  // the token before was a quantifier: a '?' or '+' now is its mode
  auto atom = [&](bool zero_width) {
    empty.back().before = empty.back().alt;
    empty.back().alt = empty.back().alt && zero_width;
    quantified = false;
  };
  auto quantifier = [&](bool may_be_zero) {
    if (!quantified && may_be_zero) empty.back().alt = empty.back().before;
    quantified = !quantified;
  };
  std::string exact, skeleton;
  // A set as written, unless it takes a newline (then without it), and its
  // skeleton with all ten digits where it took some.
  auto put_set = [&](const std::string& written, ByteSet s) {
    const bool newline = s[static_cast<unsigned char>('\n')];
    s &= ~kNewline;
    exact += newline ? class_of(s) : written;
    const std::size_t digits = (s & kDigits).count();
    skeleton += digits == 0 || digits == 10 ? (newline ? class_of(s) : written) : class_of(s | kDigits);
    return s.any();
  };
  auto put_text = [&](const std::string& text) {
    exact += text;
    skeleton += text;
  };
  std::size_t i = 0;
  while (i < e.size()) {
    const std::size_t start = i;
    const char c = e[i];
    if (c == '\\') {
      ++i;
      ByteSet s;
      const Escape kind = read_escape(e, i, false, s);
      if (kind == Escape::unknown) return refuse("the escape " + e.substr(start, std::min<std::size_t>(i - start, 3)));
      if (kind == Escape::assertion) put_text(e.substr(start, i - start));
      else if (!put_set(e.substr(start, i - start), s)) return refuse("a set of only the newline");
      atom(kind == Escape::assertion);
    } else if (c == '[') {
      ByteSet s;
      if (!read_class(e, i, caseless, s)) return refuse("the class at " + std::to_string(start + 1));
      if (!put_set(e.substr(start, i - start), s)) return refuse("a set of only the newline");
      atom(false);
    } else if (c == '.') {
      ++i;
      put_set(".", dotall ? ~ByteSet() : ~kNewline);
      atom(false);
    } else if (c == '(') {
      const bool outside = caseless;
      const std::size_t n = group_length(e, i, caseless);
      if (n == 0) return refuse("the group opening " + e.substr(i, 3));
      if (e[i + n - 1] != ')') {  // "(?i)" sets, and is no group
        groups.push_back(outside);
        empty.emplace_back();
      }
      put_text(e.substr(i, n));
      i += n;
      quantified = false;
    } else if (c == ')') {
      if (groups.empty()) return refuse("an unbalanced ')'");
      caseless = groups.back();
      groups.pop_back();
      const bool group_empty = empty.back().any || empty.back().alt;
      empty.pop_back();
      atom(group_empty);
      put_text(")");
      ++i;
    } else if (c == '{' && quantifier_length(e, i) > 0) {
      const std::size_t n = quantifier_length(e, i);
      put_text(e.substr(i, n));
      std::size_t least = 0;  // its minimum, digits up to the ',' or '}'
      for (std::size_t k = i + 1; e[k] >= '0' && e[k] <= '9'; ++k) least = std::min<std::size_t>(least * 10 + (e[k] - '0'), 1000);
      quantifier(least == 0);
      i += n;
    } else if (c == '\n') {
      return refuse("a literal newline");
    } else if (c == '|') {
      empty.back().any = empty.back().any || empty.back().alt;
      empty.back().alt = true;
      quantified = false;
      put_text("|");
      ++i;
    } else if (c == '^' || c == '$') {
      atom(true);
      put_text(std::string(1, c));
      ++i;
    } else if (c == '*' || c == '+' || c == '?') {
      quantifier(c != '+');
      put_text(std::string(1, c));
      ++i;
    } else {
      ++i;
      // A literal, most of every pattern: as written, a digit widened in the skeleton.
      exact += c;
      if (c >= '0' && c <= '9') skeleton += "[0-9]";
      else skeleton += c;
      atom(false);
    }
  }
  if (empty.back().alt || empty.back().any) return refuse("it can match an empty text");
  form.understood = true;
  form.exact = std::move(exact);
  form.skeleton = std::move(skeleton);
  return form;
}

}  // namespace gpudiag::detail
