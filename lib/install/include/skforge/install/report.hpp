// SPDX-License-Identifier: Apache-2.0
#pragma once

// What skinstall's commands show: each result as the JSON value `--json` prints and as the text
// lines printed without it (raw: the caller prints them through cli::print_safe). The apps keep
// only options, the command table and exit codes (share/doc/installer.md documents the forms).
#include "skforge/install/fix.hpp"
#include "skforge/install/index.hpp"
#include "skforge/install/layout.hpp"
#include "skforge/install/query.hpp"
#include "skforge/install/transaction.hpp"
#include "skforge/package/manifest.hpp"
#include "skforge/support/progress.hpp"

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace skforge::install::report {

using Lines = std::vector<std::string>;

/// {name, version, old_version, action, changed} of one install, upgrade or repair.
nlohmann::json install_result(const InstallResult& r);

/// The same shape for one uninstall (`old_version` is the version removed).
nlohmann::json uninstall_result(const UninstallResult& r);

/// Every key where a package in `winners` now hides another package's kernel (later install
/// wins): [{soc, op, key, winner, hidden: [package...]}].
nlohmann::json shadows(const InstallTree& tree, const std::set<std::string>& winners);

/// "<winner>'s kernel for <key> (<op> on <soc>) hides the one from <a>, <b>" per shadow.
Lines shadow_lines(const nlohmann::json& shadows);

/// Gives each result of `results` its "shadows": the entries of `shadows` it won.
void attach_shadows(nlohmann::json& results, const nlohmann::json& shadows);

/// Marks each result "dry_run": true and returns "would <verb> <name> <version>" per result.
Lines dry_run_lines(nlohmann::json& results);

/// The packages in install order: installed ones with version, arch, SoC, files, bytes, path;
/// CANN's own ("status": "vendor"); damaged or missing ones with the problem and the fix.
nlohmann::json packages(const InstallTree& tree);
Lines packages_text(const nlohmann::json& packages);

/// Every key where one package's kernel hides another's (`list --conflicts`); `skipped` gets a
/// warning per package whose index is not used.
nlohmann::json conflicts(const InstallTree& tree, std::vector<std::string>& skipped);
Lines conflicts_text(const nlohmann::json& conflicts);

/// One package's (or the tree's) verify result with its text lines and counts.
struct Verified {
    nlohmann::json result;
    Lines lines;
    std::size_t problems = 0;
    std::size_t files = 0;
};

/// Checks installed package `name` (`listed`: config.ini lists it). A damaged package is one
/// problem, CANN's own is not checked; a name that is not installed throws.
Verified verify_package(const InstallTree& tree, const std::string& name, bool listed,
                        support::Progress* progress);

/// Files in skforge's own directories that no package and no tree file explains; `result` is
/// null when there are none.
Verified verify_tree(const InstallTree& tree);

/// "verified N package(s), M entries: K problem(s)".
std::string verify_summary(std::size_t packages, std::size_t files, std::size_t problems);

/// `files NAME`: {name, version, path, files: [{path, type, mode, size, sha256}]} and its text
/// (the package directory, each file, the manifest).
nlohmann::json files(const InstallTree& tree, const std::string& name, const package::Manifest& m);
Lines files_text(const nlohmann::json& files);

/// `info NAME`: what the manifest, the install record and the global index say of a package.
nlohmann::json info(const InstallTree& tree, const std::string& name, const package::Manifest& m);
Lines info_text(const nlohmann::json& info);

/// One key's providers in install order: {soc, op, key, winner, providers: [{package, binPath}]}.
nlohmann::json key_use(const KeyUse& u);

/// "  <soc> <op> <key>: <winner> wins (<binPath>); hides <a>, <b>" per key_use value.
Lines key_uses_text(const nlohmann::json& kernels);

/// One history line as text: TIME USER ACTION PACKAGE OLD -> NEW RESULT[: detail]  [command].
/// Each field is made one printable line: a field with a newline cannot forge another line.
std::string history_text(const nlohmann::json& line);

/// `verify --fix --json`: {dry_run, recovered, rebuilt: [path], repaired: [{name, version, from,
/// entries}], fixed: [{package, path, problem, detail}], left: [{..., fix}], ok}.
nlohmann::json fix_result(const FixReport& r);

/// "recover: ...", then "<pkg>: <path>: <problem>: fixed: <detail>" (dry run: "would fix") per
/// fixed item and "<pkg>: <path>: <problem>: left: <why>; fix: <command>" per item left ("tree"
/// for the tree's own files).
Lines fix_lines(const FixReport& r);

/// "verified and fixed N package(s): K problem(s) fixed, L left" (dry run: "checked ...").
std::string fix_summary(const FixReport& r);

/// The history lines of what verify --fix did: recover's, one "fixed" line naming the derived
/// files rebuilt, one "repaired" line per package restored; none for a dry run.
std::vector<nlohmann::json> fix_history(const FixReport& r, const std::string& command);

} // namespace skforge::install::report
