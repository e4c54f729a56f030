// SPDX-License-Identifier: Apache-2.0
#pragma once

// `skinstall verify --fix`: the operator's repair, as `rpm --setperms`/`debsums` + reinstall
// would be done by hand. Under the exclusive lock and after recover it rebuilds every derived
// file (global indexes, top files, the per-key record) that is not what a full rebuild writes,
// and restores each package whose files differ from its manifest from the .run it was installed
// from, by `repair` itself, when that .run is still there and passes repair's checks; what it
// cannot fix is reported with the command that would (share/doc/installer.md, "verify --fix").

#include "skforge/install/layout.hpp"
#include "skforge/install/transaction.hpp"
#include "skforge/support/log.hpp"
#include "skforge/support/progress.hpp"

#include <optional>
#include <string>
#include <vector>

namespace skforge::install {

/// One problem verify --fix fixed (or, in a dry run, would fix), or left.
struct FixItem {
    std::string package; ///< "" for the tree's own files
    std::string path;    ///< relative to ai_core/<package>, or to ai_core/ for the tree
    std::string problem; ///< as verify names it: "missing", "changed content", "stale", ...
    std::string detail;  ///< fixed: what was done; left: why it could not be
    std::string fix;     ///< left: the command (or step) that would fix it; empty when fixed
};

/// A package restored from its .run.
struct FixRepair {
    std::string name;
    std::string version;
    std::string from;      ///< the .run
    std::size_t files = 0; ///< entries that differed
};

/// What verify --fix did.
struct FixReport {
    bool dry_run = false;
    std::string recovered; ///< what recover did ("" when nothing)
    std::vector<FixItem> fixed;
    std::vector<FixItem> left;
    std::vector<std::string> rebuilt; ///< derived files rewritten (paths relative to ai_core/)
    std::vector<FixRepair> repaired;
    std::size_t packages = 0; ///< packages checked
};

/// What verify --fix is asked for.
struct FixRequest {
    std::vector<std::string> names; ///< packages to check; empty: every installed one and the tree
    Policy policy;                  ///< what a .run must pass to be restored from (repair's)
    Act act = Act::yes;
    support::Progress* progress = nullptr;
};

/// The .run package `name` was installed from (its install record), when it is still a readable
/// file; nullopt otherwise (none recorded, gone, unreadable). What `repair NAME` defaults to.
std::optional<std::string> recorded_run(const InstallTree& tree, const std::string& name);

/// Runs verify --fix. With Act::yes the caller holds the exclusive lock and has NOT run recover
/// (this does, after noting the derived files, so what recover rebuilt is reported too); with
/// Act::dry_run the caller holds the shared lock and nothing is written. A named package that is
/// not installed throws. Never removes a file it cannot restore: a package with files its
/// manifest does not list is not restored (the exchange would drop them), only reported.
FixReport fix_tree(const InstallTree& tree, const FixRequest& request, support::Log& log);

} // namespace skforge::install
