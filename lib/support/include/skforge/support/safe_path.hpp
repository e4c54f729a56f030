// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/support/printable.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace skforge::support {

/// Longest path component (bytes).
inline constexpr std::size_t k_max_component_bytes = 255;

/// True for the characters a name that becomes a path component may hold: letters, digits and
/// `._+-`.
bool is_name_char(char c);

/// Why `name` may not become one file or directory name (a package, graph, scope, OpType or
/// kernel name), or nullopt: 1..255 bytes of letters, digits and `._+-`, starting with a letter,
/// digit or `_`. Installed trees and their shell scripts use such names verbatim, hence the
/// narrow alphabet.
std::optional<std::string> check_name_component(std::string_view name);

/// Why `path` is not a plain relative path, or nullopt: non-empty, not absolute, no NUL byte,
/// no empty, "." or ".." component, components of at most 255 bytes.
std::optional<std::string> check_relative_path(std::string_view path);

/// `relative`, once it is known to stay under the directory `base`: a plain relative path
/// (check_relative_path) none of whose existing parts under `base` is a symbolic link leading
/// out of `base`. Throws an Error naming the path and the reason otherwise.
std::string checked_beneath(const std::string& base, std::string_view relative);

/// `base`/`relative`, checked as checked_beneath does: how every path skc writes under its
/// output directory is made.
std::string path_beneath(const std::string& base, std::string_view relative);

} // namespace skforge::support
