#pragma once

#include "skforge/install/layout.hpp"
#include "skforge/package/manifest.hpp"

#include <optional>
#include <string>
#include <vector>

namespace skforge::install {

/// How an installed file differs from its manifest record.
enum class ProblemKind { missing, type, mode, size, digest, extra };

/// Text for a problem kind ("missing", "changed type", ...).
std::string_view problem_name(ProblemKind kind);

/// One difference between an installed package and its manifest.
struct Problem {
    std::string path; ///< relative to the package directory
    ProblemKind kind;
    std::string detail;
};

/// An installed package: its manifest and, when checked, every difference found.
struct InstalledPackage {
    std::string name;
    package::Manifest manifest;
    std::vector<Problem> problems;
};

/// Reads `ai_core/<name>/manifest.json`; nullopt when the package directory does not exist.
/// Throws naming the path when the directory or manifest is unsafe or invalid.
std::optional<package::Manifest> read_installed_manifest(const InstallTree& tree,
                                                         const std::string& name);

/// Checks every file of an installed package against its manifest, like `rpm -V`: type (never
/// following a symlink), mode, size and SHA-256 (hashed on every core), plus entries the
/// manifest does not list. Throws when the package is not installed.
InstalledPackage check_installed(const InstallTree& tree, const std::string& name);

/// Entries of the directories skforge owns (ai_core/ itself, config/, config/<soc dir>/) that
/// belong to no installed package and to no file the tree keeps: leftovers of killed processes
/// (temporaries, stages, a journal) and anything planted there. Paths are relative to ai_core/.
std::vector<Problem> check_tree(const InstallTree& tree);

/// The SHA-256 (hex) of the installed manifest.json, or nullopt when there is none.
std::optional<std::string> installed_manifest_digest(const Dir& package_dir);

} // namespace skforge::install
