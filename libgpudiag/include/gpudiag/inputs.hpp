#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace gpudiag {

// Which files of a directory are logs, ripgrep-style: every file below it,
// recursively, but hidden ones (a name starting with '.') and binary ones (an
// eighth or more of the first 8 KiB control bytes, in a file that is not a
// compressed archive: a checkpoint, a core dump; a crashed process's log with
// a few NULs in it is a log). Globs narrow the set: "*.log" keeps only files so
// named, "!*.tmp" drops those; a glob with a '/' is matched against the path
// below the directory, one without against the file name. The last glob a
// file matches decides; with any keeping glob, a file matching none is left.
struct FileFilter {
  std::vector<std::string> globs;
  bool hidden = false;  // read hidden files and directories too
};

struct FileListing {
  std::vector<std::filesystem::path> files;  // in path order
  std::size_t skipped_binary = 0;
  std::vector<std::string> problems;  // "PATH: why" for what could not be listed
};

// The logs below `dir`. An unreadable subdirectory is a problem listed, not
// an error: the rest is still listed.
FileListing list_logs(const std::filesystem::path& dir, const FileFilter& filter = {});

// Whether `glob` admits `path` ('*' and '?' do not cross a '/', "**/" matches
// any number of directories, "[a-z]" classes).
bool glob_matches(const std::string& glob, const std::filesystem::path& relative);

}  // namespace gpudiag
