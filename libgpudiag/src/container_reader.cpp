#include "container_reader.hpp"

namespace gpudiag::detail {
namespace {

// How each line gpudiag run writes into a log it keeps begins.
constexpr std::string_view kRunPrefix = "# gpudiag run: ";

}  // namespace

ContainerReader::ContainerReader(Output out, std::size_t max_line)
    : out_(std::move(out)), max_line_(max_line) {}

std::string_view ContainerReader::format() const {
  switch (format_) {
    case Format::docker_json: return "docker_json";
    case Format::cri: return "cri";
    case Format::gpudiag_run: return "gpudiag_run";
    default: return "";
  }
}

void ContainerReader::write(std::string_view in) {
  if (format_ == Format::plain) return out_(in);
  if (format_ == Format::unknown && !first_line(in)) return;
  while (!in.empty()) {
    const std::size_t nl = in.find('\n');
    const std::string_view piece = in.substr(0, nl == in.npos ? in.size() : nl);
    in.remove_prefix(nl == in.npos ? in.size() : nl + 1);
    if (overlong_) {
      out_(piece);
      if (nl != in.npos) out_("\n"), overlong_ = false;
      continue;
    }
    if (nl != in.npos && line_.empty()) {
      record(piece);  // a whole line where it lies
      continue;
    }
    line_.append(piece);
    if (nl != in.npos) {
      record(line_);
      line_.clear();
    } else if (line_.size() > max_line_) {
      out_(line_);  // no record is that long: the line passes on as it is
      line_.clear();
      overlong_ = true;
    }
  }
}

// Holds the first line until it is whole, then decides the format from it.
// Whether records follow in `in` (what is left of it).
bool ContainerReader::first_line(std::string_view& in) {
  const std::size_t nl = in.find('\n');
  const std::size_t take = nl == in.npos ? in.size() : nl;
  if (line_.size() + take > max_line_) {
    format_ = Format::plain;  // no record is that long
  } else if (nl == in.npos) {
    line_.append(in);
    return false;
  } else {
    line_.append(in.substr(0, nl + 1));
    in.remove_prefix(nl + 1);
    detect(std::string_view(line_).substr(0, line_.size() - 1));
  }
  if (format_ == Format::plain) {
    out_(line_);
    line_.clear();
    out_(in);
    return false;
  }
  line_.pop_back();
  record(line_);
  line_.clear();
  return true;
}

void ContainerReader::finish() {
  if (line_.empty()) return;
  if (format_ == Format::unknown) detect(line_);
  if (format_ == Format::plain) out_(line_);
  else record(line_);
  line_.clear();
}

void ContainerReader::detect(std::string_view first_line) {
  format_ = first_line.substr(0, kRunPrefix.size()) == kRunPrefix ? Format::gpudiag_run
            : docker_record(first_line, false)                     ? Format::docker_json
            : cri_record(first_line, false)                        ? Format::cri
                                                                   : Format::plain;
}

void ContainerReader::record(std::string_view line) {
  if (format_ == Format::gpudiag_run) {
    if (line.substr(0, kRunPrefix.size()) != kRunPrefix) out_(line);
    out_("\n");
    return;
  }
  const bool read = format_ == Format::docker_json ? docker_record(line, true) : cri_record(line, true);
  if (!read) {
    out_(line);
    out_("\n");
  }
}

// `{"log":"text\n","stream":"stderr","time":"..."}`: the text keeps its own
// newline; Docker splits a line longer than 16 KiB into records without one.
bool ContainerReader::docker_record(std::string_view line, bool emit) {
  if (line.empty() || line.front() != '{') return false;
  padded_.assign(line);
  padded_.append(simdjson::SIMDJSON_PADDING, ' ');
  simdjson::ondemand::document doc;
  std::string_view text;
  if (parser_.iterate(padded_.data(), line.size(), padded_.size()).get(doc) ||
      doc["log"].get_string().get(text))
    return false;
  if (emit) out_(text);
  return true;
}

// `TIMESTAMP STREAM TAG MESSAGE`: the timestamp RFC 3339, the stream stdout
// or stderr, the tag F (a full line) or P (a part, joined to the next).
bool ContainerReader::cri_record(std::string_view line, bool emit) {
  const std::size_t stamp = line.find(' ');
  if (stamp == line.npos || stamp < 20 || line[0] < '0' || line[0] > '9' || line[4] != '-' || line[10] != 'T') return false;
  const std::size_t stream = line.find(' ', stamp + 1);
  if (stream == line.npos) return false;
  const std::string_view name = line.substr(stamp + 1, stream - stamp - 1);
  if (name != "stdout" && name != "stderr") return false;
  const std::size_t tag = line.find(' ', stream + 1);
  const std::string_view tags = line.substr(stream + 1, tag == line.npos ? line.npos : tag - stream - 1);
  if (tags.empty() || (tags[0] != 'F' && tags[0] != 'P') || (tags.size() > 1 && tags[1] != ':')) return false;
  if (emit) {
    out_(tag == line.npos ? std::string_view() : line.substr(tag + 1));
    if (tags[0] == 'F') out_("\n");
  }
  return true;
}

}  // namespace gpudiag::detail
