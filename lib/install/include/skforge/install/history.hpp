// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/install/layout.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace skforge::install {

/// The history log, `ai_core/log/skinstall.log` (0640), one JSON object per line; when it passes
/// k_history_max_bytes it becomes `skinstall.log.1` (replacing the previous one), so the history
/// never takes more than twice that.
inline constexpr const char* k_history_file = "skinstall.log";
inline constexpr const char* k_history_old = "skinstall.log.1";
inline constexpr std::uint64_t k_history_max_bytes = 1u << 20;

/// `t` (seconds since the epoch) as ISO 8601 UTC, "2026-11-30T09:30:00Z".
std::string utc_time(std::int64_t t);

/// Who runs this process, for records and the history: the user name, with the sudo user when
/// root runs it through sudo ("root (sudo: alice)").
std::string invoking_user();

/// One history line: `{"time","user","command","package","old_version","new_version",
/// "action","result"}` (and "detail" when not empty). `time` is ISO 8601 UTC.
nlohmann::json history_line(const std::string& command, const std::string& package,
                            const std::string& old_version, const std::string& new_version,
                            const std::string& action, const std::string& result,
                            const std::string& detail = "");

/// Appends `lines` to the tree's history (creating log/ 0755 and the file 0640, rotating at the
/// cap) and, when `extra_file` is not empty, to that file too (a site's system log, created
/// 0640). Each line goes out in one write. The caller holds the exclusive lock.
void append_history(const InstallTree& tree, const std::vector<nlohmann::json>& lines,
                    const std::string& extra_file = "");

/// Every line of the tree's history, oldest first (the rotated file, then the current one);
/// lines that are not JSON objects are returned as {"unreadable": text}.
std::vector<nlohmann::json> read_history(const InstallTree& tree);

} // namespace skforge::install
