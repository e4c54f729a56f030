// SPDX-License-Identifier: Apache-2.0
#pragma once

// Which processes hold which packages (share/doc/installer.md, "Lifecycle"): a package installed
// for a process is held by it (pid and start time, so a reused pid is not taken for it) and
// removed when its last live holder releases it; an operator's install is persistent. The record
// is one text file, config/static_kernel.holders, that the .run's scripts read and write the same
// way (share/skforge/fallback-lib.sh.in, "Holders").
#include "skforge/install/layout.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::install {

/// The record's name in config/.
inline constexpr const char* k_holders_file = "static_kernel.holders";

/// A process: its pid and its start time (clock ticks after boot, /proc/<pid>/stat field 22).
struct Holder {
    long pid = 0;
    std::uint64_t start = 0;
    bool operator==(const Holder&) const = default;
};

/// "<pid>:<start>".
std::string holder_text(const Holder& h);

/// The start time of process `pid` when it is running (not a zombie); nullopt when it is gone.
std::optional<std::uint64_t> process_start_time(long pid);

/// Whether `h` is still the process it names (same pid, same start time, not a zombie).
bool holder_alive(const Holder& h);

/// This process and its ancestors up to (not including) pid 1: an operator's request comes from
/// them, so their holds do not stand in its way.
std::vector<Holder> this_process_and_ancestors();

/// Parses a `--holder` value, "PID" or "PID:START": "PID" takes the running process's start
/// time. nullopt for "0" (no process). Throws a usage Error for anything else, and for a PID
/// without START that is not running when `must_run` is true.
std::optional<Holder> parse_holder_option(const std::string& text, bool must_run);

/// One package's line: persistent (an operator's install) or held, and its holders.
struct HoldRecord {
    bool persistent = false;
    std::vector<Holder> holders;
    bool operator==(const HoldRecord&) const = default;
};
/// The record of every package that has a line; a package without one is persistent.
using HoldRecords = std::map<std::string, HoldRecord>;

/// Parses the file's text; lines that do not parse (or name no valid package) are skipped.
HoldRecords parse_holds(std::string_view text);
/// The file's text: a comment line, then one line per package sorted by name.
std::string render_holds(const HoldRecords& records);

/// The record of `name` after an install of it: `holder` the process it is for (nullopt: an
/// operator's install, persistent), `installed` whether the package was installed before. A
/// persistent package stays so; dead holders are dropped; nullopt when the package needs no line
/// (persistent, no holder).
std::optional<HoldRecord> hold_after_install(std::optional<HoldRecord> old, bool installed,
                                             const std::optional<Holder>& holder);

/// The live holders of a package (none when it has no line).
std::vector<Holder> live_holders(const std::optional<HoldRecord>& record);

/// Whether a holder's uninstall, after releasing, removes the package: it has a line, is not
/// persistent, and no live holder is left.
bool collectable(const std::optional<HoldRecord>& record);

/// The holders of package `name` named for a message: "pid 12 (started 345), pid 67 (...)".
std::string holders_list(const std::vector<Holder>& holders);

/// Reads config/static_kernel.holders (empty when absent).
HoldRecords read_holds(const InstallTree& tree);

/// The record of `name`, if it has a line.
std::optional<HoldRecord> hold_of(const HoldRecords& records, const std::string& name);

/// Sets (or with nullopt drops) the line of `name`, drops the lines of packages no longer
/// installed, and writes the file whole (temporary name, fsync, rename) only when its text
/// changes; removes it when no line is left. Never touches the package or the global index.
/// The caller holds the exclusive lock.
void write_hold(const InstallTree& tree, HoldRecords& records, const std::string& name,
                const std::optional<HoldRecord>& record);

/// Drops the lines of packages no longer installed (recover: an install killed after writing its
/// line and before committing the package).
void prune_holds(const InstallTree& tree);

} // namespace skforge::install
