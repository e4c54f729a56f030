// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/install/layout.hpp"
#include "skforge/package/reader.hpp"
#include "skforge/support/log.hpp"
#include "skforge/support/progress.hpp"

#include <memory>
#include <string>
#include <vector>

namespace skforge::install {

/// What a package must satisfy before anything is written.
struct Policy {
    std::vector<package::Key> trusted; ///< trusted signing keys
    bool require_signature = false;    ///< refuse packages not signed by a trusted key
    package::ReadLimits limits;
};

/// A package file whose size, digest and signature passed the policy.
struct VerifiedPackage {
    std::shared_ptr<package::RunPackage> run;
    package::Manifest manifest;
    package::SignatureState signature;
    std::string signer_key_id; ///< empty when unsigned
    std::string origin;        ///< the file the user named (a makeself .run when imported)
    bool imported = false;     ///< read from CANN's makeself package (package::import_makeself)
    /// install.sh's index records (package::index_records), checked against the index files
    /// once they are staged.
    std::string records;
};

/// Reads `run_path` without executing anything and checks, before anything is written: the
/// exact size, the payload SHA-256, the signature by
/// `policy` (package::signature_refusal), the manifest, and that its scripts are the ones skforge
/// renders for it. `progress`, when given, hears the payload bytes hashed. Throws an Error naming
/// the file and the reason.
VerifiedPackage verify_package(const std::string& run_path, const Policy& policy,
                               support::Progress* progress = nullptr);

/// install: refuse a different installed version; upgrade: replace an older one (or install);
/// reinstall: restore the same version from its .run, whatever the installed files' state.
enum class InstallMode { install, upgrade, reinstall };
/// Whether upgrade may replace a newer installed version.
enum class Downgrade { refuse, allow };

/// Where a repaired package goes in the install order: last, like any (re)install (`repair`), or
/// where it was, so whose kernel wins does not change (`verify --fix`; journaled, so recover
/// keeps it too).
enum class Place { last, kept };

/// What an install command asks for.
struct InstallRequest {
    InstallMode mode = InstallMode::install;
    Downgrade downgrade = Downgrade::refuse;
    support::Progress* progress = nullptr; ///< hears the bytes staged, when given
    Place place = Place::last; ///< kept: an installed package keeps its place in the order
    InstallRequest(InstallMode m = InstallMode::install, Downgrade d = Downgrade::refuse)
        : mode(m), downgrade(d) {}
};

/// What an install, upgrade or reinstall did.
enum class InstallOutcome { installed, upgraded, downgraded, reinstalled, already_installed };
/// Text for an outcome ("installed", "already-installed", ...), as `--json` and the history show.
std::string_view outcome_name(InstallOutcome outcome);

/// One package's result.
struct InstallResult {
    std::string name;
    std::string version;
    std::string old_version; ///< the version replaced; empty when none (or unknown)
    InstallOutcome outcome = InstallOutcome::installed;
    /// False only when the package was already installed and nothing was written.
    bool changed() const { return outcome != InstallOutcome::already_installed; }
};
/// Whether uninstall removes files that were changed after installation.
enum class Force { no, yes };
/// Whether a mutating call acts, or only decides and reports what it would do (--dry-run).
enum class Act { yes, dry_run };

/// A package staged (or found already installed) and ready to commit.
struct StagedPackage {
    const VerifiedPackage* package;
    std::string manifest_digest;
    InstallOutcome outcome;    ///< what committing will do
    std::string old_version;   ///< the installed version it replaces, when known
    bool stage_created;        ///< a stage directory exists and must be committed or discarded
    Place place = Place::last; ///< kept: keep an installed package's place in the order
};

/// Checks `pkg` against the tree and stages it. install refuses another installed version;
/// upgrade refuses an older version (unless Downgrade::allow) and the same version with other
/// content (that needs reinstall); reinstall refuses another version. A damaged installed package
/// may be upgraded or reinstalled, never installed over; a directory skforge did not install, or
/// one an uninstall left behind, is refused. Stages every file under a private name
/// inside ai_core/, checking its index; nothing visible changes. Throws, leaving no stage, on
/// any refusal. The caller holds the exclusive lock and has run recover().
StagedPackage stage_package(const InstallTree& tree, const VerifiedPackage& pkg,
                            const InstallRequest& request, const Policy& policy, support::Log& log);

/// Reads `pkg`'s payload as stage_package does, writing nothing: every entry checked against the
/// manifest, each index file as skinstall takes it (package::parse_package_index) and install.sh's
/// index records against them; throws what stage_package would. For `--dry-run`.
void check_payload(const VerifiedPackage& pkg, const Policy& policy);

/// Removes the stage of a package that will not be committed.
void discard_stage(const InstallTree& tree, const StagedPackage& staged);

/// Commits a staged package as a transaction: journal, rename into place (an exchange when a
/// version is installed, so it stays until the new one is committed), rewrite config.ini and
/// the index.
InstallResult commit_staged(const InstallTree& tree, const StagedPackage& staged,
                            support::Log& log);

/// stage_package then commit_staged.
InstallResult install_package(const InstallTree& tree, const VerifiedPackage& pkg,
                              const InstallRequest& request, const Policy& policy,
                              support::Log& log);

/// Restores package `name` from `pkg` (reinstall) after checking that `pkg` is that package and
/// that `name` is installed (intact or damaged), as the same version when that can be read.
InstallResult repair_package(const InstallTree& tree, const std::string& name,
                             const VerifiedPackage& pkg, const Policy& policy, support::Log& log,
                             Place place = Place::last);

/// What installing `pkgs` with `request` would do, decided as install_packages decides it
/// (the same refusals, thrown the same way) without reading the payloads (check_payload does)
/// or writing anything: for `--dry-run`. The caller holds at least a shared lock.
std::vector<InstallResult> plan_installs(const InstallTree& tree,
                                         const std::vector<VerifiedPackage>& pkgs,
                                         const InstallRequest& request, support::Log& log);

/// Installs several packages: every one is staged and checked before the first is committed, so
/// a refusal of any leaves the tree exactly as it was; then each is committed in order (its own
/// journaled transaction: an I/O failure or kill in this phase leaves the earlier ones
/// installed). The caller holds the exclusive lock and has run recover().
std::vector<InstallResult> install_packages(const InstallTree& tree,
                                            const std::vector<VerifiedPackage>& pkgs,
                                            const InstallRequest& request, const Policy& policy,
                                            support::Log& log);

/// What an uninstall did.
struct UninstallResult {
    std::string name;
    std::string version; ///< empty when it could not be read (a damaged package)
    std::string action;  ///< "uninstalled", or "removed" for a damaged or left-behind directory
};

/// Uninstalls `name`: checks every file against the manifest first (changed files need
/// Force::yes), then journals and removes exactly the files the manifest lists; files it did not
/// install are kept and reported, and the directory keeps a note saying so. With Force::yes a
/// damaged package or a directory an uninstall left behind is removed whole (through handles,
/// never outside ai_core/<name>). The caller holds the exclusive lock and has run recover().
/// With Act::dry_run it checks and refuses alike, writes nothing and returns what it would do.
UninstallResult uninstall_package(const InstallTree& tree, const std::string& name, Force force,
                                  support::Log& log, Act act = Act::yes);

/// Whether an interrupted transaction waits for recover() (its journal exists).
bool transaction_pending(const InstallTree& tree);

/// Completes or rolls back an interrupted transaction and removes leftovers of killed processes;
/// returns what it did ("nothing to recover" when the tree was clean). Caller holds the lock.
std::string recover(const InstallTree& tree, support::Log& log);

} // namespace skforge::install
