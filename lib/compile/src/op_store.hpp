// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/compile/cache_store.hpp"

#include <optional>
#include <string>
#include <vector>

namespace skforge::compile {

// The op_compiler front end's files in a store directory, beside its packages
// (share/doc/op-compiler.md): the op map, the op files and the key locks.

/// <dir>/ops/<k[0:2]>/<k>: the key of a stored package that holds the kernels of the op JSON
/// whose own request key is `op_key`.
std::string op_map_path(const std::string& dir, const std::string& op_key);

/// <dir>/op-files/<k[0:2]>/<k>: the files of the stored package `k` (except those skforge
/// generates), uncompressed, one after another in its manifest's order.
std::string op_files_path(const std::string& dir, const std::string& key);

/// <dir>/op-locks/<key>.lock: held (fcntl) while a front end compiles `key`.
std::string op_lock_path(const std::string& dir, const std::string& key);

/// Removes from `dir` the op map lines and op files of packages not in `kept` (nullopt: every
/// one) and every key lock no live process holds (each is taken before it is removed);
/// adds what it removed, and the locks in use, to `r`.
void clean_op_store(const std::string& dir, const std::optional<std::vector<CacheEntry>>& kept,
                    CleanResult& r);

} // namespace skforge::compile
