// SPDX-License-Identifier: Apache-2.0
#pragma once

// The output directory's cache, OUTDIR/static_kernel_cache/skforge-<version>_<arch>.json:
// {"<key>": {"run": "<NAME>.run", "sha256": "<of that file>"}, ...} (share/doc/compile.md).
#include "skforge/support/log.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace skforge::compile {

/// The output directory's cache at `path`. Missing, it is empty; damaged (not a regular file,
/// larger than support::k_max_json_bytes, not a JSON object) it starts afresh, with a warning
/// on `user`; an entry that is not an object with string "run" and "sha256" is dropped with a
/// warning. Never throws for what the file holds: a cache is never a reason for a compile to fail.
nlohmann::json read_output_cache(const std::string& path, support::Log& user);

/// True when `entry` is an object whose "run" names a `<package name>.run` directly in `outdir`
/// that is a regular file (not a link) whose SHA-256 is still the recorded one.
bool output_cache_entry_live(const nlohmann::json& entry, const std::string& outdir);

} // namespace skforge::compile
