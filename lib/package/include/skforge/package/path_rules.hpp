// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/support/safe_path.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace skforge::package {

/// Longest path (bytes) a package may hold.
inline constexpr std::size_t k_max_path_bytes = 4096;
/// Longest path component (bytes).
inline constexpr std::size_t k_max_component_bytes = support::k_max_component_bytes;
/// Most components a package path may have. CANN's layout needs four
/// (`<soc>/<OpType>/<kernel>.o` under the package); the bound keeps every walk of an installed
/// package within a few dozen open directories, far below the usual limit of 1024 descriptors.
inline constexpr std::size_t k_max_path_depth = 32;

/// Why `text` is not valid UTF-8 (overlong forms, surrogates and code points past U+10FFFF
/// included), or nullopt when it is.
std::optional<std::string> check_utf8(std::string_view text);

/// Why `path` may not name an entry of a package, or nullopt when it may: relative, non-empty,
/// no empty, "." or ".." component, no NUL or control character, valid UTF-8, components of at
/// most 255 bytes, at most 32 components and at most 4096 bytes in all.
std::optional<std::string> check_entry_path(std::string_view path);

/// Longest package name (bytes). The installers stage a package in ai_core/ as
/// `.skforge-stage-<name>.XXXXXX` and, when it replaces one, move the old aside as
/// `.skforge-stage-<name>.old.XXXXXX` (26 bytes more than the name); that must still be one file
/// name of at most 255 bytes, so a name that packs also installs, with skinstall and with the
/// package's own scripts.
inline constexpr std::size_t k_max_package_name_bytes = 229;

/// Why `name` is not a package name, or nullopt: one component of letters, digits and `._+-`,
/// starting with a letter, digit or `_`, at most k_max_package_name_bytes, and none of the names
/// skforge keeps beside the packages in ai_core/ (k_reserved_names). The installed directory and
/// the shell scripts use it verbatim, hence the narrow alphabet.
std::optional<std::string> check_package_name(std::string_view name);

/// Why CANN's runtime would misread the kernels of a package named `name`, or nullopt: with ".o"
/// in the name every binPath (`<name>/<soc dir>/<OpType>/<kernel>.o`) has ".o" before its end,
/// and the runtime cuts a binPath at its first ".o" to find the kernel's JSON (the rule
/// kernel::index_bin_path applies to each binPath). Checked where a new package's name enters
/// (skc pack, skc compile, reading a .run's manifest); unlike check_package_name, not for what
/// is already installed, which stays listable and removable.
std::optional<std::string> check_kernel_package_name(std::string_view name);

/// Names in ai_core/ that belong to the tree, not to a package: a package by one of these names
/// would overwrite or be overwritten by the tree's own files.
inline constexpr std::string_view k_reserved_names[] = {
    "config", "config.ini", "uninstall.sh", "version.info", "log", "static_kernel.lock"};

/// Why `name` is not a SoC directory name (`config/<soc dir>/` in a package and in the tree), or
/// nullopt: 1..64 bytes of lower-case letters, digits, `_` and `-`, as CANN's SoC families are
/// (`ascend910b`, `ascend910_93`) and skforge's `host`. Never a name with a dot, so it can never
/// be the lock file or an index file that share config/.
std::optional<std::string> check_soc_dir_name(std::string_view name);

/// Why `text` is not a valid version / arch / SoC label (letters, digits, `._+~-`, 1..64 bytes;
/// arch and SoC may be empty when `allow_empty`).
std::optional<std::string> check_label(std::string_view text, bool allow_empty);

/// Kind of a package entry: only these two exist.
enum class EntryType { file, directory };

/// Why a file of `type` with st_mode bits `mode` may not be packed (setuid, setgid, sticky,
/// group- or world-writable), or nullopt.
std::optional<std::string> check_source_mode(mode_t mode);

/// The mode a packed entry gets: 0755 for directories and owner-executable files, else 0644.
mode_t normalized_mode(EntryType type, mode_t source_mode);

/// True when `mode` is one a package entry may have (0644 or 0755).
bool is_allowed_mode(mode_t mode);

/// The permission bits of `mode` as octal text with a leading zero ("0644", "04755").
std::string format_mode(mode_t mode);

} // namespace skforge::package
