// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/install/layout.hpp"
#include "skforge/package/manifest.hpp"
#include "skforge/support/progress.hpp"

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

/// package::parse_manifest of `text`, remembered by the text for the next few calls: one command
/// reads a package's manifest two or three times (classify, check, remove), and parsing the
/// JSON of 4,079 entries was a quarter of an uninstall's time. The same bytes parse to the same
/// manifest.
package::Manifest parse_manifest_cached(const std::string& text, const std::string& where);

/// Reads `ai_core/<name>/manifest.json`; nullopt when the package directory does not exist.
/// Throws naming the path when the directory or manifest is unsafe or invalid.
std::optional<package::Manifest> read_installed_manifest(const InstallTree& tree,
                                                         const std::string& name);

/// Whether check_installed hashes every file, or only those whose stamp differs from the one
/// the install record keeps (a file skinstall staged and nobody changed since keeps its inode,
/// size, mtime and ctime; writing, replacing, linking or chmod-ing it sets its ctime to now).
enum class Hash { always, when_changed };

/// A file's stamp as the install record keeps it: inode, size, mtime and ctime (nanoseconds).
std::string file_stamp(const struct stat& st);

/// Checks every file of an installed package against its manifest, like `rpm -V`: type (never
/// following a symlink), mode, size and SHA-256 (hashed on every core; with Hash::when_changed
/// only for files whose stamp changed), plus entries the manifest does not list. Modes are those
/// of the package directory's scheme (Modes: 0755 root, 0770 run user, 0775 run user for all).
/// `progress`, when given, hears the bytes checked. Throws when the package is not installed.
InstalledPackage check_installed(const InstallTree& tree, const std::string& name,
                                 support::Progress* progress = nullptr, Hash hash = Hash::always);

/// Entries of the directories skforge owns (ai_core/ itself, config/, config/<soc dir>/) that
/// belong to no installed package and to no file the tree keeps: leftovers of killed processes
/// (temporaries, stages, a journal) and anything planted there. Paths are relative to ai_core/.
std::vector<Problem> check_tree(const InstallTree& tree);

/// What a directory `ai_core/<name>` is.
enum class DirState {
    absent,      ///< no such directory
    installed,   ///< a package with a readable manifest
    damaged,     ///< a package skforge installed whose manifest (or directory) is unusable
    left_behind, ///< what an uninstall kept because it held files the package did not install
    foreign,     ///< a directory skforge did not install
    vendor,      ///< a package CANN's own installer laid out: skforge reads its index, never
                 ///< removes or replaces it
};

/// A directory under ai_core/ classified, with the manifest when it is readable and, otherwise,
/// what is wrong with it.
struct PackageDir {
    DirState state = DirState::absent;
    std::optional<package::Manifest> manifest;
    std::string why; ///< for damaged, left_behind and foreign: a sentence for the user
};

/// Classifies `ai_core/<name>` without throwing for anything found on disk: a package config.ini
/// lists (`listed`) or with a manifest.json is damaged when it cannot be read, never foreign.
PackageDir classify_package_dir(const InstallTree& tree, const std::string& name, bool listed);

/// Throws a usage Error unless `name` is a package name by the rule a manifest's name follows
/// (package::check_package_name), quoting it printable, saying why and stating the rule. Every
/// name a command is given (its arguments, a request's field) passes here before any work, so
/// `victim/../other` never reaches the tree.
void require_package_name(const std::string& name);

/// The commands that repair or remove a damaged package, for messages.
std::string repair_hint(const std::string& name);

/// The file skinstall writes beside manifest.json: how the package was installed (who, from
/// which .run, signed by whom). Its mtime is the installation time.
inline constexpr const char* k_install_record = ".skforge-installed.json";
/// The file an uninstall leaves in a directory it could not remove (files it did not install).
inline constexpr const char* k_left_behind = ".skforge-left-behind.json";

/// How and when an installed package was installed (empty fields when unknown, e.g. after a
/// shell-only install).
struct InstallRecord {
    std::string installed_by;      ///< user name (and the sudo user, when there was one)
    std::string from;              ///< the .run it was installed from, resolved
    std::string signature;         ///< package::signature_state_name
    std::string signer_key_id;     ///< empty when unsigned
    std::int64_t installed_at = 0; ///< seconds since the epoch (0: unknown)
};

/// The record of an installed package; fields it does not have are left empty.
InstallRecord read_install_record(const Dir& package_dir);

/// The package that owns `rel` (a path relative to ai_core/, like an index's binPath): its name
/// when its manifest lists the path (or it is the package directory, its manifest or install
/// record), "" when it is one of the tree's own files (config.ini, config/, log/, ...), nullopt
/// when nothing installed owns it.
std::optional<std::string> owner_of(const InstallTree& tree, const std::string& rel);

/// The SHA-256 (hex) of the installed manifest.json, or nullopt when there is none.
std::optional<std::string> installed_manifest_digest(const Dir& package_dir);

/// PATH as given (absolute under the tree, or relative to ai_core/ as an index's binPath), as a
/// path relative to ai_core/; throws a usage error for a path outside the tree. `given_root` is
/// the install path as the user gave it, for the message.
std::string tree_relative(const InstallTree& tree, const std::string& given_root, std::string path);

} // namespace skforge::install
