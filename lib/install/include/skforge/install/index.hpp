#pragma once

#include "skforge/install/layout.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace skforge::install {

/// One package's `config/<soc>/binary_info_config.json`, by SoC directory name.
using PackageIndex = std::map<std::string, nlohmann::json>;

/// Reads and checks the package index files under `package_dir/config/` (none is fine); throws
/// naming the file when one is not a JSON object of OpType objects.
PackageIndex read_package_index(const Dir& package_dir);

/// Merges package indexes in install order into the global one: for every OpType, binaryList
/// entries are keyed by their `simplifiedKey` (else `binPath`), a later package's entry replaces
/// an earlier one with the same key, and every `binPath` is prefixed with `<name>/` so it is
/// relative to ai_core/. Other OpType fields come from the latest package that has the OpType.
std::map<std::string, nlohmann::json>
merge_indexes(const std::vector<std::pair<std::string, PackageIndex>>& packages);

/// Rewrites everything derived from the installed packages, each file whole: config.ini (from
/// `order`), config/<soc>/binary_info_config.json (stale SoCs removed), and ai_core's
/// version.info and uninstall.sh (removed when nothing is installed).
void rebuild_derived(const InstallTree& tree, const std::vector<std::string>& order);

} // namespace skforge::install
