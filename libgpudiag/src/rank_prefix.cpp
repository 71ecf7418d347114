#include "rank_prefix.hpp"

#include <cctype>

namespace gpudiag::detail {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads 1 to 6 digits at `pos`; a rank never needs more.
std::optional<int> read_number(std::string_view s, std::size_t& pos) {
  std::size_t start = pos;
  int value = 0;
  while (pos < s.size() && is_digit(s[pos]) && pos - start < 6) value = value * 10 + (s[pos++] - '0');
  if (pos == start || (pos < s.size() && is_digit(s[pos]))) return std::nullopt;
  return value;
}

bool starts_with(std::string_view s, std::size_t pos, std::string_view word) {
  return s.substr(pos, word.size()) == word;
}

// [rank3]: or [default3]:
std::optional<RankTag> torchrun_tag(std::string_view s) {
  std::size_t pos = 0;
  if (s.empty() || s[0] != '[') return std::nullopt;
  ++pos;
  if (starts_with(s, pos, "rank")) pos += 4;
  else if (starts_with(s, pos, "default")) pos += 7;
  else return std::nullopt;
  auto rank = read_number(s, pos);
  if (!rank || !starts_with(s, pos, "]:")) return std::nullopt;
  return RankTag{rank, {}, pos + 2};
}

// "3: " at the start of the line, srun --label style (srun pads to a width).
std::optional<RankTag> srun_tag(std::string_view s) {
  std::size_t pos = 0;
  while (pos < s.size() && pos < 6 && s[pos] == ' ') ++pos;
  auto rank = read_number(s, pos);
  if (!rank || !starts_with(s, pos, ": ")) return std::nullopt;
  return RankTag{rank, {}, pos + 2};
}

// host:pid:tid [3] NCCL ...
std::optional<RankTag> nccl_tag(std::string_view s) {
  std::size_t colon = s.find(':');
  if (colon == 0 || colon == std::string_view::npos || colon > 253) return std::nullopt;
  for (std::size_t i = 0; i < colon; ++i) {
    char c = s[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'))
      return std::nullopt;
  }
  std::size_t pos = colon + 1;
  if (!read_number(s, pos) || !starts_with(s, pos, ":")) return std::nullopt;
  ++pos;
  if (!read_number(s, pos) || !starts_with(s, pos, " [")) return std::nullopt;
  pos += 2;
  auto rank = read_number(s, pos);
  if (!rank || !starts_with(s, pos, "]")) return std::nullopt;
  return RankTag{rank, std::string(s.substr(0, colon)), pos + 1};
}

}  // namespace

RankTag parse_rank_prefix(std::string_view line) {
  if (auto t = torchrun_tag(line)) return *t;
  if (auto t = srun_tag(line)) return *t;
  if (auto t = nccl_tag(line)) return *t;
  return {};
}

}  // namespace gpudiag::detail
