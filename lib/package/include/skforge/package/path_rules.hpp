#pragma once

#include "skforge/support/safe_path.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace skforge::package {

/// Longest path (bytes) a package may hold.
inline constexpr std::size_t k_max_path_bytes = 4096;
/// Longest path component (bytes).
inline constexpr std::size_t k_max_component_bytes = support::k_max_component_bytes;

/// Why `text` is not valid UTF-8 (overlong forms, surrogates and code points past U+10FFFF
/// included), or nullopt when it is.
std::optional<std::string> check_utf8(std::string_view text);

/// Why `path` may not name an entry of a package, or nullopt when it may: relative, non-empty,
/// no empty, "." or ".." component, no NUL or control character, valid UTF-8, components of at
/// most 255 bytes and at most 4096 bytes in all.
std::optional<std::string> check_entry_path(std::string_view path);

/// Why `name` is not a package name, or nullopt: the rule for every name that becomes a path
/// component (support::check_name_component).
std::optional<std::string> check_package_name(std::string_view name);

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
