#pragma once

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
// not writable.
bool store_cached_database(const std::filesystem::path& file, const std::string& key,
                           const hs_database_t* db);

}  // namespace gpudiag::detail
