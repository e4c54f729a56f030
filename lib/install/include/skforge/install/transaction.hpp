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
/// `policy`, and the manifest. Throws an Error naming the file and the reason.
VerifiedPackage verify_package(const std::string& run_path, const Policy& policy);

/// install: refuse a different installed version; upgrade: replace it (or install).
enum class InstallMode { install, upgrade };
/// What an install or upgrade did.
enum class InstallOutcome { installed, upgraded, already_installed };
/// Whether uninstall removes files that were changed after installation.
enum class Force { no, yes };

/// Installs one verified package as a transaction: stage (fsynced) inside ai_core/, journal,
/// rename into place (an exchange for upgrades, so the old version stays until the new one is
/// committed), rewrite config.ini and the index. The caller holds the exclusive lock and has run
/// recover().
InstallOutcome install_package(const InstallTree& tree, const VerifiedPackage& pkg,
                               InstallMode mode, const Policy& policy, support::Log& log);

/// Uninstalls `name`: checks every file against the manifest first (changed files need
/// Force::yes), then journals and removes exactly the files the manifest lists; files it did not
/// install are kept and reported. The caller holds the exclusive lock and has run recover().
void uninstall_package(const InstallTree& tree, const std::string& name, Force force,
                       support::Log& log);

/// Completes or rolls back an interrupted transaction and removes leftovers of killed processes;
/// returns what it did ("nothing to recover" when the tree was clean). Caller holds the lock.
std::string recover(const InstallTree& tree, support::Log& log);

} // namespace skforge::install
