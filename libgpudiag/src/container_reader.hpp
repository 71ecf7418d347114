#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <simdjson.h>

namespace gpudiag::detail {

// Container runtimes store a container's output one record per line: Docker's
// json-file driver as `{"log":"text\n","stream":"stderr","time":"..."}`, CRI
// runtimes (containerd, CRI-O: the files kubelet keeps under /var/log/pods)
// as `2024-05-01T10:00:00.123456789Z stderr F text`. The first line says
// which; each record's text is passed on as the line the program printed,
// partial records (Docker's split long lines, CRI's `P`) joined to the next.
// A log `gpudiag run` kept begins with its header (`# gpudiag run: CMD`): the
// wrapper's own lines (header, footer, notes) pass on blank, so that the
// command line it names never counts as the command's output, and the line
// numbers stay the file's.
// A line of neither form passes on as it is. Anything else passes through
// untouched, without a copy.
class ContainerReader {
 public:
  using Output = std::function<void(std::string_view)>;
  ContainerReader(Output out, std::size_t max_line);

  void write(std::string_view in);
  void finish();

  // "docker_json", "cri", "gpudiag_run"; empty for plain lines.
  std::string_view format() const;

 private:
  enum class Format { unknown, plain, docker_json, cri, gpudiag_run };
  bool first_line(std::string_view& in);
  void detect(std::string_view first_line);
  void record(std::string_view line);  // one whole line, its newline cut
  // Whether the line is such a record; `emit` passes its text on.
  bool docker_record(std::string_view line, bool emit);
  bool cri_record(std::string_view line, bool emit);

  Output out_;
  std::size_t max_line_;
  Format format_ = Format::unknown;
  std::string line_;  // the unfinished line (and, until the format is known, the first)
  bool overlong_ = false;  // the unfinished line outgrew max_line_: passed on as it is
  simdjson::ondemand::parser parser_;
  std::string padded_;  // a record copied with simdjson's padding behind it
};

}  // namespace gpudiag::detail
