#include "gpudiag/inputs.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <string_view>
#include <system_error>
#include <vector>

namespace gpudiag {
namespace {

namespace fs = std::filesystem;

// The magic numbers of the archives the decompressor reads: their bytes are
// binary, their text is not.
bool compressed(std::string_view head) {
  for (std::string_view magic : {std::string_view("\x1f\x8b"), std::string_view("\x28\xb5\x2f\xfd"),
                                 std::string_view("BZh"), std::string_view("\xfd" "7zXZ", 5)})
    if (head.substr(0, magic.size()) == magic) return true;
  return false;
}

// A checkpoint, an executable, a core dump: an eighth of the first 8 KiB or
// more are control bytes. Not any NUL byte, as ripgrep has it: a process
// that crashes mid-write leaves NULs in its log, and those logs matter most.
bool binary(const fs::path& file) {
  std::array<char, 8192> head;
  std::ifstream in(file, std::ios::binary);
  in.read(head.data(), head.size());
  const std::string_view read(head.data(), static_cast<std::size_t>(in.gcount()));
  if (compressed(read)) return false;
  const auto control = std::count_if(read.begin(), read.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 && u != '\t' && u != '\n' && u != '\r' && u != '\f' && u != '\v' && u != '\b' && u != 0x1b;
  });
  return static_cast<std::size_t>(control) * 8 >= read.size() && !read.empty();
}

bool hidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.size() > 1 && name[0] == '.' && name != "..";
}

// What the globs say of a file: the last one it matches decides.
bool admitted(const std::vector<std::string>& globs, const fs::path& relative) {
  bool any_keep = false, keep = false, decided = false;
  for (const std::string& g : globs) {
    const bool drop = !g.empty() && g[0] == '!';
    any_keep = any_keep || !drop;
    if (glob_matches(drop ? g.substr(1) : g, relative)) keep = !drop, decided = true;
  }
  return decided ? keep : !any_keep;
}

// Component by component: "**" stands for any number of directories.
bool components_match(const std::vector<std::string>& pattern, std::size_t i,
                      const std::vector<std::string>& path, std::size_t j) {
  if (i == pattern.size()) return j == path.size();
  if (pattern[i] == "**") {
    for (std::size_t k = j; k <= path.size(); ++k)
      if (components_match(pattern, i + 1, path, k)) return true;
    return false;
  }
  return j < path.size() && ::fnmatch(pattern[i].c_str(), path[j].c_str(), 0) == 0 &&
         components_match(pattern, i + 1, path, j + 1);
}

}  // namespace

bool glob_matches(const std::string& glob, const fs::path& relative) {
  if (glob.find('/') == std::string::npos)
    return ::fnmatch(glob.c_str(), relative.filename().c_str(), 0) == 0;
  std::vector<std::string> pattern, path;
  for (const fs::path& part : fs::path(glob)) pattern.push_back(part.string());
  for (const fs::path& part : relative) path.push_back(part.string());
  return components_match(pattern, 0, path, 0);
}

FileListing list_logs(const fs::path& dir, const FileFilter& filter) {
  FileListing out;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) {
    out.problems.push_back(dir.string() + ": " + ec.message());
    return out;
  }
  for (; it != end; it.increment(ec)) {
    if (ec) {
      out.problems.push_back(it->path().string() + ": " + ec.message());
      ec.clear();
      continue;
    }
    const fs::path& p = it->path();
    if (!filter.hidden && hidden(p)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    if (!admitted(filter.globs, p.lexically_relative(dir))) continue;
    if (binary(p)) {
      ++out.skipped_binary;
      continue;
    }
    out.files.push_back(p);
  }
  std::sort(out.files.begin(), out.files.end());
  return out;
}

}  // namespace gpudiag
