#include "line_fields.hpp"

#include <climits>
#include <cstdint>

#include <cstring>

#include <algorithm>
#include <array>
#include <utility>

#include "text_util.hpp"

namespace gpudiag::detail {
namespace {

bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }
bool is_space(char c) { return c == ' ' || c == '\t'; }
bool is_name_char(char c) { return is_alnum(c) || c == '_' || c == '.' || c == '-'; }

// A cursor over the line; every reader either consumes its prefix and says
// so, or leaves the position where it was.
struct Cursor {
  std::string_view s;
  std::size_t pos = 0;

  bool at_end() const { return pos >= s.size(); }
  char peek(std::size_t ahead = 0) const { return pos + ahead < s.size() ? s[pos + ahead] : '\0'; }
  bool starts(std::string_view w) const { return s.substr(pos, w.size()) == w; }
  bool eat(std::string_view w) {
    if (!starts(w)) return false;
    pos += w.size();
    return true;
  }
  std::size_t digits(std::size_t max = 10) {
    std::size_t n = 0;
    while (n < max && is_digit(peek())) ++pos, ++n;
    return n;
  }
  // A number of at most `max` digits (no more follow), when it fits an int.
  std::optional<int> number(std::size_t max = 6) {
    const std::size_t start = pos;
    if (!skip_number(max)) return std::nullopt;
    std::int64_t value = 0;
    for (std::size_t i = start; i < pos && value <= INT_MAX; ++i) value = value * 10 + (s[i] - '0');
    if (value > INT_MAX) {
      pos = start;
      return std::nullopt;
    }
    return static_cast<int>(value);
  }
  // The same digits, whatever their value (a process or thread id).
  bool skip_number(std::size_t max) {
    const std::size_t start = pos;
    while (pos - start < max && is_digit(peek())) ++pos;
    if (pos == start || is_digit(peek())) {
      pos = start;
      return false;
    }
    return true;
  }
  void spaces() {
    while (is_space(peek())) ++pos;
  }
};

// Tries a reader; on failure restores the position.
template <typename F>
bool attempt(Cursor& c, F&& read) {
  const std::size_t start = c.pos;
  if (read()) return true;
  c.pos = start;
  return false;
}

// "LOGS" is Apple's CoreNet's (ml-cvnets') info level.
constexpr std::array<std::pair<std::string_view, Severity>, 12> kLevels = {{
    {"WARNING", Severity::warning}, {"WARN", Severity::warning},  {"INFO", Severity::info},
    {"ERROR", Severity::error},     {"CRITICAL", Severity::fatal}, {"FATAL", Severity::fatal},
    {"DEBUG", Severity::debug},     {"TRACE", Severity::debug},   {"NOTICE", Severity::info},
    {"SUCCESS", Severity::info},    {"EXCEPTION", Severity::error}, {"LOGS", Severity::info},
}};

// A level word at the cursor (upper case, as logging libraries print it),
// not followed by a letter.
std::optional<Severity> level_word(Cursor& c) {
  const char first = c.peek();
  if (first < 'A' || first > 'Z') return std::nullopt;  // most calls: spares eleven comparisons
  for (const auto& [word, severity] : kLevels)
    if (word[0] == first && c.starts(word) && !is_alpha(c.peek(word.size()))) {
      c.pos += word.size();
      return severity;
    }
  return std::nullopt;
}

std::optional<Severity> glog_letter(char ch) {
  switch (ch) {
    case 'I': return Severity::info;
    case 'W': return Severity::warning;
    case 'E': return Severity::error;
    case 'F': return Severity::fatal;
    default: return std::nullopt;
  }
}

// ANSI colour codes: ESC [ ... letter.
bool ansi(Cursor& c) {
  if (!c.eat("\x1b[")) return false;
  while (!c.at_end() && !is_alpha(c.peek())) ++c.pos;
  if (!c.at_end()) ++c.pos;
  return true;
}

// torchrun --tee: [rank3]: or [default3]:
bool torchrun_tag(Cursor& c, LineFields& f) {
  return attempt(c, [&] {
    if (!c.eat("[")) return false;
    if (!c.eat("rank") && !c.eat("default")) return false;
    const std::size_t at = c.pos;
    auto rank = c.number();
    if (!rank) return false;
    const std::string_view digits = c.s.substr(at, c.pos - at);
    if (!c.eat("]:")) return false;
    c.eat(" ");  // "[rank1]: 2024-05-01 10:00:00,001 - train - INFO - ..."
    f.rank = rank;
    f.rank_text = digits;
    return true;
  });
}

// srun --label: "3: " (padded to a width), only as the first field.
bool srun_tag(Cursor& c, LineFields& f) {
  return attempt(c, [&] {
    c.spaces();
    const std::size_t at = c.pos;
    auto rank = c.number();
    if (!rank) return false;
    const std::string_view digits = c.s.substr(at, c.pos - at);
    if (!c.eat(": ")) return false;
    f.rank = rank;
    f.rank_text = digits;
    return true;
  });
}

// A host name as pdsh and NCCL print it: letters first, digits in it.
std::size_t host_name_length(std::string_view s) {
  std::size_t n = 0, digits = 0;
  if (s.empty() || !is_alpha(s[0])) return 0;
  while (n < s.size() && n < 253 && is_name_char(s[n])) digits += is_digit(s[n++]) ? 1 : 0;
  return digits > 0 ? n : 0;
}

// NCCL: host:pid:tid [3] NCCL INFO|WARN ...
bool nccl_tag(Cursor& c, LineFields& f) {
  return attempt(c, [&] {
    const std::size_t start = c.pos;
    while (is_name_char(c.peek())) ++c.pos;
    if (c.pos == start || c.pos - start > 253 || !c.eat(":")) return false;
    const std::string_view host = c.s.substr(start, c.pos - start - 1);
    if (!c.skip_number(10) || !c.eat(":") || !c.skip_number(10) || !c.eat(" [")) return false;
    const std::size_t at = c.pos;
    auto rank = c.number();
    if (!rank) return false;
    const std::string_view digits = c.s.substr(at, c.pos - at);
    if (!c.eat("]")) return false;
    f.rank = rank;
    f.rank_text = digits;
    f.host = host;
    c.spaces();
    if (c.eat("NCCL ")) {
      f.source = "NCCL";
      if (auto level = level_word(c)) f.severity = *level;
    }
    return true;
  });
}

// srun's report on one task: "srun: error: gpu-node-01: task 3: Out Of Memory".
bool srun_task(Cursor& c, LineFields& f) {
  return attempt(c, [&] {
    if (!c.eat("srun: error: ")) return false;
    const std::size_t n = host_name_length(c.s.substr(c.pos));
    const std::string_view host = c.s.substr(c.pos, n);
    c.pos += n;
    if (n == 0 || !c.eat(": task ")) return false;
    const std::size_t at = c.pos;
    auto rank = c.number();
    if (!rank) return false;
    const std::string_view digits = c.s.substr(at, c.pos - at);
    if (!c.eat(": ")) return false;
    f.rank = rank;
    f.rank_text = digits;
    f.host = host;
    f.source = "srun";
    f.severity = Severity::error;
    return true;
  });
}

// pdsh: "gpu-node-03: " (a host name with a digit, then a colon and a space).
bool pdsh_tag(Cursor& c, LineFields& f) {
  const std::size_t n = host_name_length(c.s.substr(c.pos));
  if (n == 0 || c.s.substr(c.pos + n, 2) != ": ") return false;
  // An exception or logger name is not a host: hosts have a dash or end in digits.
  const std::string_view name = c.s.substr(c.pos, n);
  if (name.find('-') == std::string_view::npos && !is_digit(name.back())) return false;
  f.host = name;
  c.pos += n + 2;
  return true;
}

// Ray's copy of a worker's output on the driver: "(RayTrainWorker pid=1234,
// ip=10.0.0.2) ", "(pid=1234) ". It names the process and its node, no rank.
bool ray_tag(Cursor& c, LineFields& f) {
  return attempt(c, [&] {
    if (!c.eat("(")) return false;
    if (!c.eat("pid=")) {  // the worker's name first
      const std::size_t name = c.pos;
      while (is_name_char(c.peek()) || c.peek() == ':') ++c.pos;
      if (c.pos == name || !c.eat(" pid=")) return false;
    }
    if (!c.skip_number(10)) return false;
    if (c.eat(", ip=")) {
      const std::size_t at = c.pos;
      while (is_name_char(c.peek())) ++c.pos;
      if (c.pos == at) return false;
      f.host = c.s.substr(at, c.pos - at);
    }
    if (!c.eat(")")) return false;
    c.eat(" ");
    return true;
  });
}

bool clock_time(Cursor& c);

// 08/30 23:53:52: a month and day before the time, as detectron2 and
// PaddlePaddle's loggers write it (never a date alone: "10/20" is a count).
// With the year after them too, as the Hugging Face example scripts' logging
// writes it (datefmt "%m/%d/%Y %H:%M:%S": "04/02/2026 01:26:57 - INFO - ...").
// With a dash, as vLLM's logger writes it ("%m-%d %H:%M:%S": "INFO 06-16
// 21:29:32 [engine.py:12] ...") and loops that copied its format.
bool month_day_time(Cursor& c) {
  return attempt(c, [&] {
    if (c.digits(2) != 2) return false;
    const char sep = c.peek();
    if ((sep != '/' && sep != '-') || (++c.pos, c.digits(2) != 2)) return false;
    if (sep == '/') attempt(c, [&] { return c.eat("/") && c.digits(4) == 4; });
    return c.eat(" ") && clock_time(c);
  });
}

// 2025-03-02 08:16:22,364 | 2024/10/10 01:27:51 | 2025-03-02T08:16:22.123Z | 08/30 23:53:52 |
// 04/02/2026 01:26:57
bool date_time(Cursor& c) {
  if (month_day_time(c)) return true;
  return attempt(c, [&] {
    if (c.digits(4) != 4) return false;
    const char sep = c.peek();
    if (sep != '-' && sep != '/') return false;
    ++c.pos;
    if (c.digits(2) != 2 || !c.eat(std::string_view(&sep, 1)) || c.digits(2) != 2) return false;
    if (c.peek() != ' ' && c.peek() != 'T') return true;  // a date alone
    ++c.pos;
    if (c.digits(2) != 2 || !c.eat(":") || c.digits(2) != 2) return false;
    if (c.eat(":") && c.digits(2) != 2) return false;
    if (c.peek() == ',' || c.peek() == '.') {
      ++c.pos;
      c.digits(9);
    }
    if (c.eat("Z")) return true;
    attempt(c, [&] {
      if (!c.eat("+") && !c.eat("-")) return false;
      return c.digits(4) >= 2 && (c.eat(":") ? c.digits(2) == 2 : true);
    });
    return true;
  });
}

// 08:16:22 or 08:16:22.123
bool clock_time(Cursor& c) {
  return attempt(c, [&] {
    if (c.digits(2) != 2 || !c.eat(":") || c.digits(2) != 2 || !c.eat(":") || c.digits(2) != 2)
      return false;
    if (c.peek() == ',' || c.peek() == '.') ++c.pos, c.digits(9);
    return true;
  });
}

// glog and c10: I1221 13:42:36.291482 12345 file.cc:12]  (the bracketed form
// is read by `bracket`). The thread id may be Python's (absl-py logs as glog
// does, with the thread's ident: 139913184905024).
bool glog_head(Cursor& c, LineFields& f, bool bracketed) {
  return attempt(c, [&] {
    auto severity = glog_letter(c.peek());
    if (!severity) return false;
    ++c.pos;
    const std::size_t ts = c.pos;
    if (c.digits(4) == 4) {
      if (!c.eat(" ") || !clock_time(c)) return false;
      f.timestamp = c.s.substr(ts, c.pos - ts);
    } else if (!bracketed || c.peek() != ' ') {
      return false;  // "[W file.cpp:12]": c10's form without a time
    }
    c.spaces();
    c.skip_number(20);  // thread id
    c.spaces();
    const std::size_t src = c.pos;
    while (!c.at_end() && c.peek() != ']' && c.peek() != ' ') ++c.pos;
    if (c.peek() != ']') return false;
    f.source = c.s.substr(src, c.pos - src);
    f.severity = *severity;
    ++c.pos;
    return true;
  });
}

// Reads a logger name ([\w.]+, or a path) and records it as the source.
bool logger_name(Cursor& c, LineFields& f) {
  const std::size_t start = c.pos;
  while (is_name_char(c.peek()) || c.peek() == '/' || c.peek() == '<' || c.peek() == '>') ++c.pos;
  if (c.pos == start) return false;
  f.source = c.s.substr(start, c.pos - start);
  return true;
}

// "train.py line:286": a Python source file and a line number.
bool source_line(std::string_view field) {
  const std::size_t space = field.find(" line:");
  if (space == std::string_view::npos || space < 4 || field.substr(space - 3, 3) != ".py") return false;
  const std::string_view number = field.substr(space + 6);
  return !number.empty() && std::all_of(number.begin(), number.end(), is_digit);
}

// "177/train/578 (pid 28936)": a field that ends naming its process, as
// Metaflow's prefix names a step's task.
bool process_field(std::string_view field) {
  const std::size_t at = field.rfind("(pid ");
  if (at == std::string_view::npos || field.back() != ')' || at + 6 >= field.size()) return false;
  const std::string_view number = field.substr(at + 5, field.size() - at - 6);
  return std::all_of(number.begin(), number.end(), is_digit);
}

// "Rank 0", "rank 3", "RANK 12" up to `close`, a bracket's end: the rank.
bool rank_field(Cursor& c, LineFields& f, std::size_t close) {
  return attempt(c, [&] {
    if (!c.eat("Rank ") && !c.eat("rank ") && !c.eat("RANK ")) return false;
    const std::size_t at = c.pos;
    const std::optional<int> rank = c.number(6);
    if (!rank || c.pos != close) return false;
    if (!f.rank) {
      f.rank = rank;
      f.rank_text = c.s.substr(at, c.pos - at);
    }
    return true;
  });
}

// A bracketed field: [2025-...], [INFO], [INFO|file.py:12], [2025-... INFO],
// [W1221 ... file:12], [NeMo W 2024-... file:12], [engine.py:12:fn].
bool bracket(Cursor& c, LineFields& f) {
  return attempt(c, [&] {
    if (!c.eat("[")) return false;
    const std::size_t inside = c.pos;
    const std::size_t close = c.s.find(']', inside);
    if (close == std::string_view::npos || close - inside > 200) return false;
    if (glog_head(c, f, true)) return true;
    if (c.eat("NeMo ")) {
      if (auto s = glog_letter(c.peek())) f.severity = *s, f.source = "NeMo";
    } else if (date_time(c)) {
      f.timestamp = c.s.substr(inside, c.pos - inside);
      c.spaces();
      if (auto level = level_word(c)) f.severity = *level;
    } else if (auto level = level_word(c)) {
      f.severity = *level;
      if (c.eat("|")) logger_name(c, f);
    } else if (rank_field(c, f, close)) {
      // "[Rank 0]": the process's rank, as many loops' loggers tag it.
    } else {
      // Any other bracketed field before the message (a file:line:function,
      // a process name) is a prefix only when no space is in it, or it is a
      // source file and line as "[%(filename)s line:%(lineno)d]" writes it,
      // or it ends naming its process ("[177/train/578 (pid 28936)]").
      const std::string_view field = c.s.substr(inside, close - inside);
      if (field.find(' ') != std::string_view::npos && !source_line(field) && !process_field(field)) return false;
    }
    c.pos = close + 1;
    c.eat(":");
    return true;
  });
}

// A source file and line in parentheses, as Swin Transformer's logger (and
// the many repositories that copied it) writes "(main.py 154): INFO ...".
bool paren_source(Cursor& c, LineFields& f) {
  return attempt(c, [&] {
    if (!c.eat("(")) return false;
    const std::size_t inside = c.pos;
    while (is_name_char(c.peek())) ++c.pos;
    const std::string_view file = c.s.substr(inside, c.pos - inside);
    if (file.find('.') == std::string_view::npos || !c.eat(" ") || !c.skip_number(10) || !c.eat(")")) return false;
    f.source = c.s.substr(inside, c.pos - 1 - inside);
    while (ansi(c)) {  // its colour's end, before the colon
    }
    c.eat(":");
    return true;
  });
}

// A bare source file and line behind a level and a timestamp, as LeRobot's
// logger writes "INFO 2026-06-12 18:27:59 ot_train.py:438 End of training"
// (not a Python warning's "file.py:12: UserWarning", whose number a colon ends).
bool bare_source(Cursor& c, LineFields& f) {
  return attempt(c, [&] {
    const std::size_t start = c.pos;
    while (is_name_char(c.peek())) ++c.pos;
    const std::string_view file = c.s.substr(start, c.pos - start);
    if (file.find('.') == std::string_view::npos || !c.eat(":") || !c.skip_number(10) || c.peek() != ' ') return false;
    f.source = c.s.substr(start, c.pos - start);
    c.spaces();
    return true;
  });
}

// The separator after a timestamp or a level: " - ", " | ", ": ", tabs, spaces.
void separator(Cursor& c) {
  c.spaces();
  if (c.peek() == '-' || c.peek() == '|' || c.peek() == ':') {
    if (is_space(c.peek(1)) || c.pos + 1 == c.s.size()) ++c.pos;
  }
  c.spaces();
}

// After a timestamp: "LEVEL", "logger - LEVEL -", "logger: [LEVEL]", "LEVEL:logger:".
bool level_field(Cursor& c, LineFields& f) {
  return attempt(c, [&] {
    if (auto level = level_word(c)) {
      f.severity = *level;
      if (c.eat(":")) {  // Python's default format: INFO:logger:message
        const std::size_t start = c.pos;
        while (!c.at_end() && c.peek() != ':' && !is_space(c.peek())) ++c.pos;
        if (c.eat(":")) f.source = c.s.substr(start, c.pos - start - 1);
        else c.pos = start;
      }
      // "LEVEL - logger - message", the Hugging Face example scripts' format:
      // a logger's name (`__main__`, `transformers.trainer`), not a word of
      // the message.
      attempt(c, [&] {
        c.spaces();
        if (!c.eat("-")) return false;
        c.spaces();
        const std::size_t start = c.pos;
        LineFields named;
        if (!logger_name(c, named)) return false;
        const std::string_view name = named.source;
        if (name.find_first_of("._") == std::string_view::npos && !(name[0] >= 'a' && name[0] <= 'z')) return false;
        c.spaces();
        if (!c.eat("- ")) return false;
        f.source = c.s.substr(start, name.size());
        return true;
      });
      return true;
    }
    // logger - LEVEL -   or   logger: [LEVEL]   or   logger [LEVEL]
    const std::size_t start = c.pos;
    if (!logger_name(c, f)) return false;
    c.eat(":");
    c.spaces();
    c.eat("- ");
    const bool bracketed = c.eat("[");
    auto level = level_word(c);
    if (!level || (bracketed && !c.eat("]"))) {
      c.pos = start;
      f.source = {};
      return false;
    }
    f.severity = *level;
    return true;
  });
}

// Tab-separated structured fields after a timestamp, as some trainers write
// them: "host:rank<TAB>module:line<TAB>LEVEL<TAB>message". Read only when a
// level field is among the first few; the fields before it name the host and
// rank, and the source.
bool tab_fields(Cursor& c, LineFields& f) {
  if (c.pos == 0 || c.s[c.pos - 1] != '\t') return false;
  return attempt(c, [&] {
    LineFields seen = f;
    for (int field = 0; field < 4; ++field) {
      const std::size_t start = c.pos;
      const std::size_t tab = c.s.find('\t', start);
      if (tab == std::string_view::npos) return false;
      Cursor word{c.s.substr(start, tab - start)};
      if (auto level = level_word(word); level && word.at_end()) {
        seen.severity = *level;
        c.pos = tab + 1;
        f = seen;
        return true;
      }
      const std::string_view text = c.s.substr(start, tab - start);
      const std::size_t colon = text.rfind(':');
      if (colon != std::string_view::npos && host_name_length(text.substr(0, colon)) == colon) {
        Cursor rank{text.substr(colon + 1)};
        if (auto r = rank.number(); r && rank.at_end())
          seen.host = text.substr(0, colon), seen.rank = r, seen.rank_text = rank.s;
      } else {
        seen.source = text;
      }
      c.pos = tab + 1;
    }
    return false;
  });
}

// "path.py:123: UserWarning: ..." and a message that starts "FooWarning:".
void python_warning(std::string_view message, LineFields& f) {
  if (f.severity != Severity::unknown) return;
  const std::size_t w = message.find("Warning: ");
  if (w == std::string_view::npos || w > 300) return;
  std::size_t start = w;
  while (start > 0 && (is_alnum(message[start - 1]) || message[start - 1] == '_')) --start;
  // The class name stands at the message start or after "file.py:123: ".
  if (start == 0 || (start >= 2 && message.substr(start - 2, 2) == ": " &&
                     message.substr(0, start).find(".py:") != std::string_view::npos))
    f.severity = Severity::warning;
}

// "WARNING: ...", "ERROR: ..." at the start of a message.
void message_level(std::string_view message, LineFields& f) {
  if (f.severity != Severity::unknown) return;
  Cursor c{message};
  if (auto level = level_word(c); level && (c.eat(":") || c.eat(" -")) && is_space(c.peek()))
    f.severity = *level;
}

// Decoration before a message: emoji and other non-ASCII symbols, rules of
// dashes, equals signs and stars, bullets.
// The length of the UTF-8 symbol at `s` (an emoji, an arrow, a box-drawing
// or block character, a dingbat, Latin-1 punctuation, a joiner or a
// variation selector), 0 where a letter or anything else stands there: a
// message may open with words in any script (Chinese, Japanese, Cyrillic),
// and those are the message.
std::size_t symbol_length(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  if (s.empty() || b(0) < 0x80) return 0;
  std::size_t n = b(0) >= 0xF0 ? 4 : b(0) >= 0xE0 ? 3 : b(0) >= 0xC0 ? 2 : 1;
  if (n > s.size()) return s.size();
  for (std::size_t i = 1; i < n; ++i)
    if ((b(i) & 0xC0) != 0x80) return 1;  // not UTF-8: a stray byte, skipped as before
  if (n == 1) return 1;
  std::uint32_t cp = b(0) & (0xFF >> (n + 1));
  for (std::size_t i = 1; i < n; ++i) cp = (cp << 6) | (b(i) & 0x3F);
  const bool symbol = (cp >= 0xA0 && cp <= 0xBF) || cp == 0xD7 || cp == 0xF7 || (cp >= 0x2000 && cp <= 0x2BFF) ||
                      (cp >= 0xFE00 && cp <= 0xFE0F) || (cp >= 0x1F000 && cp <= 0x1FAFF);
  return symbol ? n : 0;
}

void decoration(Cursor& c) {
  for (;;) {
    const std::size_t start = c.pos;
    separator(c);
    for (;;) {
      if (c.at_end()) break;
      if (const std::size_t n = symbol_length(c.s.substr(c.pos))) {
        c.pos += n;
        continue;
      }
      if (c.peek() != '=' && c.peek() != '*' && c.peek() != '#' && c.peek() != '>') break;
      ++c.pos;
    }
    if (c.starts("--") && c.peek(2) != ' ' && !is_alpha(c.peek(2))) {
      while (c.peek() == '-') ++c.pos;
    }
    if (c.starts(":: ")) c.pos += 3;  // "[0] :: Total training time: 13.1 seconds"
    if (c.pos == start) return;
  }
}

// The logging prefix (timestamp, level, logger, in the orders libraries use)
// from the cursor on, then the message after it.
void logging_prefix(std::string_view line, Cursor& c, LineFields& f) {
  for (int guard = 0; guard < 6 && !c.at_end(); ++guard) {
    const std::size_t before = c.pos;
    while (ansi(c)) {
    }
    if (f.timestamp.empty()) {
      const std::size_t ts = c.pos;
      if (date_time(c) || clock_time(c)) {
        f.timestamp = line.substr(ts, c.pos - ts);
        if (c.peek() == '\t') {
          ++c.pos;
          if (tab_fields(c, f)) continue;
        }
        separator(c);
        continue;
      }
    }
    if (f.severity == Severity::unknown && f.timestamp.empty() && glog_head(c, f, false)) {
      c.spaces();
      continue;
    }
    if (bracket(c, f)) {
      c.spaces();
      if (c.starts("-[")) ++c.pos;  // "[time]-[file line:12]:"
      // Hydra's job logging: "[2024-04-24 12:58:25,123][demucs.solver][INFO] - message".
      else if (c.starts("- ")) c.pos += 2;
      continue;
    }
    if (!f.timestamp.empty() && paren_source(c, f)) {
      c.spaces();
      continue;
    }
    if (!f.timestamp.empty() && f.severity != Severity::unknown && f.source.empty() && bare_source(c, f)) continue;
    if (f.severity == Severity::unknown && level_field(c, f)) {
      separator(c);
      continue;
    }
    if (c.pos == before) break;
  }
  decoration(c);
  f.message_offset = c.pos;
  f.message = line.substr(c.pos);
  message_level(f.message, f);
  python_warning(f.message, f);
}

}  // namespace

LineFields read_line(std::string_view line, Depth depth) {
  LineFields f;
  Cursor c{line};
  // Launcher prefixes come first and nest: "0: [rank0]: host:1:2 [0] NCCL INFO".
  bool first = true;
  for (int guard = 0; guard < 8; ++guard) {
    const std::size_t before = c.pos;
    while (ansi(c)) {
    }
    if (torchrun_tag(c, f) || (first && srun_tag(c, f)) || srun_task(c, f) || nccl_tag(c, f) ||
        pdsh_tag(c, f) || ray_tag(c, f)) {
      first = false;
      continue;
    }
    if (c.pos == before) break;
  }
  f.message_offset = c.pos;
  f.message = f.body = line.substr(c.pos);
  return depth == Depth::launcher ? f : read_line(line, f);
}

LineFields read_line(std::string_view line, const LineFields& launcher) {
  LineFields f = launcher;
  Cursor c{line, launcher.message_offset};
  logging_prefix(line, c, f);
  f.body = f.message;
  // A carriage return redraws the line (a progress bar): what a terminal
  // shows, and what was printed last, is the text after the last one, so the
  // line's fields are that segment's; `body` keeps every redraw.
  // (memchr first: most lines have none, and it is the faster scan.)
  if (c.pos < line.size() && std::memchr(line.data() + c.pos, '\r', line.size() - c.pos)) {
    const std::size_t cr = line.rfind('\r');
    if (cr + 1 < line.size()) {
      LineFields shown;
      shown.rank = f.rank;
      shown.rank_text = f.rank_text;
      shown.host = f.host;
      Cursor last{line, cr + 1};
      logging_prefix(line, last, shown);
      shown.body = f.body;
      return shown;
    }
  }
  return f;
}

}  // namespace gpudiag::detail
