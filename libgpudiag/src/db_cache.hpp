#pragma once

#include <filesystem>
#include <string>

#include "rule_set_impl.hpp"

namespace gpudiag::detail {

std::filesystem::path default_cache_dir();

// The database stored under `key`, or null when absent, corrupt, stale or
// unreadable: the caller then compiles and stores a fresh one.
HsDatabase load_cached_database(const std::filesystem::path& file, const std::string& key);

// Writes atomically; false (and nothing left behind) when the directory is
// not writable.
bool store_cached_database(const std::filesystem::path& file, const std::string& key,
                           const hs_database_t* db);

}  // namespace gpudiag::detail
