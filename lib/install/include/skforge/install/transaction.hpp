#pragma once

#include "skforge/install/layout.hpp"
#include "skforge/package/reader.hpp"
#include "skforge/support/log.hpp"

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
};

/// Reads `run_path` without executing anything and checks, before anything is written: the
/// package name equals the file's stem, the exact size, the payload SHA-256, the signature by
/// `policy` (package::signature_refusal), the manifest, and that its scripts are the ones skforge
/// renders for it. Throws an Error naming the file and the reason.
VerifiedPackage verify_package(const std::string& run_path, const Policy& policy);

/// install: refuse a different installed version; upgrade: replace it (or install).
enum class InstallMode { install, upgrade };
/// What an install or upgrade did.
enum class InstallOutcome { installed, upgraded, already_installed };
/// Whether uninstall removes files that were changed after installation.
enum class Force { no, yes };

/// A package staged (or found already installed) and ready to commit.
struct StagedPackage {
    const VerifiedPackage* package;
    std::string manifest_digest;
    InstallOutcome outcome; ///< what committing will do
    bool stage_created;     ///< a stage directory exists and must be committed or discarded
};

/// Checks `pkg` against the tree (a different installed version needs InstallMode::upgrade; a
/// directory not installed by skforge is refused) and stages every file under a private name
/// inside ai_core/, checking its index; nothing visible changes. Throws, leaving no stage, on
/// any refusal. The caller holds the exclusive lock and has run recover().
StagedPackage stage_package(const InstallTree& tree, const VerifiedPackage& pkg, InstallMode mode,
                            const Policy& policy, support::Log& log);

/// Removes the stage of a package that will not be committed.
void discard_stage(const InstallTree& tree, const StagedPackage& staged);

/// Commits a staged package as a transaction: journal, rename into place (an exchange for
/// upgrades, so the old version stays until the new one is committed), rewrite config.ini and
/// the index.
InstallOutcome commit_staged(const InstallTree& tree, const StagedPackage& staged,
                             support::Log& log);

/// stage_package then commit_staged.
InstallOutcome install_package(const InstallTree& tree, const VerifiedPackage& pkg,
                               InstallMode mode, const Policy& policy, support::Log& log);

/// Installs several packages: every one is staged and checked before the first is committed, so
/// a refusal of any leaves the tree exactly as it was; then each is committed in order (its own
/// journaled transaction: an I/O failure or kill in this phase leaves the earlier ones
/// installed). The caller holds the exclusive lock and has run recover().
std::vector<InstallOutcome> install_packages(const InstallTree& tree,
                                             const std::vector<VerifiedPackage>& pkgs,
                                             InstallMode mode, const Policy& policy,
                                             support::Log& log);

/// Uninstalls `name`: checks every file against the manifest first (changed files need
/// Force::yes), then journals and removes exactly the files the manifest lists; files it did not
/// install are kept and reported. The caller holds the exclusive lock and has run recover().
void uninstall_package(const InstallTree& tree, const std::string& name, Force force,
                       support::Log& log);

/// Completes or rolls back an interrupted transaction and removes leftovers of killed processes;
/// returns what it did ("nothing to recover" when the tree was clean). Caller holds the lock.
std::string recover(const InstallTree& tree, support::Log& log);

} // namespace skforge::install
