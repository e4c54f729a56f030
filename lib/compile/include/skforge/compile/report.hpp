// SPDX-License-Identifier: Apache-2.0
#pragma once

// What `skc compile` and `skc cache` show: each result as the JSON value `--json` prints and as
// the text lines printed without it (raw: the caller prints them through cli::print_safe).
#include "skforge/compile/cache_store.hpp"
#include "skforge/compile/compile.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace skforge::compile::report {

using Lines = std::vector<std::string>;

/// `skc compile --json` (compile.md): {run, sources_dir, name, version, npu_arch, soc,
/// cann_version, cache: hit|miss|disabled|unused, operators, superkernels, compile_log}; `run`,
/// `sources_dir` and `cann_version` are null when empty. `use_cache`: the compile could use one.
nlohmann::json compile_result(const CompileResult& r, bool use_cache);

/// `skc cache stats`: {dir, entries, total_size, max_size (null: unlimited), hits, misses,
/// corrupt_removed}.
nlohmann::json cache_stats(const std::string& dir, const CacheStats& s);

/// One "label  value" line per field of cache_stats, sizes for people ("unlimited").
Lines cache_stats_text(const nlohmann::json& stats);

/// `skc cache clean`: {dir, removed, removed_size, leftovers_removed}.
nlohmann::json cache_clean(const std::string& dir, const CleanResult& r);

/// "removed N entries (SIZE) and M leftovers of interrupted writers from DIR".
Lines cache_clean_text(const nlohmann::json& clean);

/// `skc cache verify`: {dir, checked, problems: [{path, reason, removed}], ok}; ok when nothing
/// was wrong or `fix` removed what was.
nlohmann::json cache_verify(const std::string& dir, const VerifyResult& r, VerifyFix fix);

/// "PATH: REASON[ (removed)]" per problem (the path made one printable field), then
/// "DIR: N entries checked, M problem(s)[, removed]".
Lines cache_verify_text(const nlohmann::json& verify);

} // namespace skforge::compile::report
