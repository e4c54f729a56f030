// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/install/layout.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
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
/// 0640). Each line goes out in one write, as JSON with invalid UTF-8 replaced (a path or a
/// command line that is not UTF-8 never makes it fail). The caller holds the exclusive lock.
void append_history(const InstallTree& tree, const std::vector<nlohmann::json>& lines,
                    const std::string& extra_file = "");

/// One line of the history as read back: `line` when it is a history line (a JSON object with
/// string "time" and "action"), else null with the raw `text` (a damaged or foreign line).
struct HistoryEntry {
    nlohmann::json line;
    std::string text;
    bool readable() const { return !line.is_null(); }
    /// `line`, or `{"unreadable": text}` for a line that is not a history line.
    nlohmann::json as_json() const;
};

/// Every line of the tree's history, oldest first (the rotated file, then the current one).
/// Never throws for what a line holds: one damaged line hides nothing else.
std::vector<HistoryEntry> read_history(const InstallTree& tree);

/// Why `path` cannot take `--log-file`'s history lines, or nullopt: not empty, not a directory
/// (nor ending in '/'), not a symbolic link, a regular file when it exists, its directory
/// existing. Checked before a command does any work, so a bad --log-file changes nothing.
std::optional<std::string> log_file_problem(const std::string& path);

} // namespace skforge::install
