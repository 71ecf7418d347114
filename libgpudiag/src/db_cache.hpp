#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "rule_set_impl.hpp"

namespace gpudiag::detail {

std::filesystem::path default_cache_dir();

// What the databases compiled on this machine are built for: Hyperscan
// compiles for the CPU it runs on, and a database built where AVX-512 is
// found cannot be used where it is not. Names cache files, so machines of a
// cluster sharing a home directory keep one each.
std::string platform_tag();

// The database stored under `key`, or null when absent, corrupt, stale or
// unreadable: the caller then compiles and stores a fresh one.
HsDatabase load_cached_database(const std::filesystem::path& file, const std::string& key);

// Writes atomically; false (and nothing left behind) when the directory is
// not writable. A store also prunes the directory (prune_cache).
bool store_cached_database(const std::filesystem::path& file, const std::string& key,
                           const hs_database_t* db);

// Removes the databases (and stores' temporaries) not written for
// `unused_for`: each change of the rules or of gpudiag leaves its files
// behind, and a cache that is only ever added to grows without end (39 MiB
// here over a month of development). A file still in use is rewritten
// whenever it is compiled again, so removing a stale one costs one compile.
void prune_cache(const std::filesystem::path& dir, std::chrono::hours unused_for = std::chrono::hours(24 * 30));

}  // namespace gpudiag::detail
