// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/package/manifest.hpp"

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::package {

/// Where a package keeps its own static-kernel index: `config/<soc dir>/` + this name.
inline constexpr std::string_view k_index_file_name = "binary_info_config.json";

/// True when `path` (a package entry path) is a package index: `config/<soc dir>/` +
/// k_index_file_name.
bool is_index_path(std::string_view path);

/// Every reason `doc` is not a static-kernel index CANN's runtime reads for package `name`
/// (empty when it is): an object of OpType objects whose `staticList` is an array of objects,
/// each `binPath` a normalised relative path `<name>/...` naming a regular file `manifest` lists,
/// `simplifiedKey` a string when present. The dynamic-kernel `binaryList` format is refused: the
/// runtime ignores it for static kernels (share/doc/cann-conformance.md).
std::vector<std::string> check_package_index(const nlohmann::json& doc, const std::string& name,
                                             const Manifest& manifest);

/// The first path component of every `binPath` string in `doc`'s staticLists (the package name
/// CANN's runtime expects the index's package to install under).
std::set<std::string> index_package_names(const nlohmann::json& doc);

/// Parses (depth-limited) and checks the index text `text` read from `origin`; throws an Error
/// naming `origin` and listing every problem.
nlohmann::json parse_package_index(std::string_view text, std::string_view origin,
                                   const Manifest& manifest);

} // namespace skforge::package
