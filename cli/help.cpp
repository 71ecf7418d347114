#include <boost/program_options/options_description.hpp>
#include <sstream>
#include <string>

#include "commands.hpp"

namespace gpudiag::cli {
namespace {

constexpr std::size_t kWidth = 80;
constexpr std::size_t kColumn = 24;  // where descriptions start, as in the top-level help

// "-f, --format FORMAT (=text)": Boost's own "-f [ --format ] FORMAT" read
// the way the top-level help and most Unix tools write it.
std::string option_name(const boost::program_options::option_description& o) {
  const std::string shown = o.format_name();  // "-f [ --format ]" or "--format"
  std::string name = (shown.size() > 2 && shown[0] == '-' && shown[1] != '-') ? shown.substr(0, 2) + ", " : "    ";
  name.append("--").append(o.long_name());
  const std::string parameter = o.format_parameter();
  if (!parameter.empty()) name += " " + parameter;
  return name;
}

// `text` wrapped at kWidth, each line after the first indented by `column`.
std::string wrapped(const std::string& text, std::size_t first_column, std::size_t column) {
  std::istringstream words(text);
  std::string out, word;
  std::size_t column_now = first_column;
  bool line_start = true;
  while (words >> word) {
    if (!line_start && column_now + 1 + word.size() > kWidth) {
      out.append("\n").append(column, ' ');
      column_now = column;
      line_start = true;
    }
    if (!line_start) {
      out += ' ';
      ++column_now;
    }
    out += word;
    column_now += word.size();
    line_start = false;
  }
  return out;
}

}  // namespace

std::string help_row(const std::string& name, const std::string& text, std::size_t column) {
  std::string line = "  " + name;
  if (line.size() + 2 > column) line.append("\n").append(column, ' ');
  else line.resize(column, ' ');
  return line.append(wrapped(text, column, column)).append("\n");
}

std::string format_options(const boost::program_options::options_description& opts) {
  std::string out = "options:\n";
  for (const auto& o : opts.options()) out += help_row(option_name(*o), o->description(), kColumn);
  return out;
}

}  // namespace gpudiag::cli
