// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/install/index_text.hpp"
#include "skforge/install/layout.hpp"
#include "skforge/package/generated.hpp"
#include "skforge/package/manifest.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace skforge::install {

/// Reads and checks the package index files under `package_dir/config/` (none is fine); throws
/// naming the file and every problem (package::check_package_index, JSON nesting, special files,
/// a SHA-256 other than the manifest's).
PackageIndex read_package_index(const Dir& package_dir, const package::Manifest& manifest);

/// The texts of the index files under `package_dir/config/` that `manifest` lists, by path (for
/// package::index_records_problem); nothing is checked here.
package::IndexTexts package_index_texts(const Dir& package_dir, const package::Manifest& manifest);

/// The index files of a package another installer laid out as CANN's guide shows (a directory
/// config.ini lists, without manifest.json): taken as they are, only checked to be JSON objects;
/// throws naming the file when one is not.
PackageIndex read_foreign_index(const Dir& package_dir);

/// Merges package indexes in install order into the global index text of each SoC
/// (merge_and_render): for every OpType, staticList entries are keyed by their `simplifiedKey`
/// (else `binPath`) and a later package's entry replaces an earlier one with the same key and
/// moves to the end; entries are kept as the packages wrote them; only `staticList` is kept.
std::map<std::string, std::string>
merge_indexes(const std::vector<std::pair<std::string, PackageIndex>>& packages);

/// What rebuild_derived(tree, order) writes, where `order` is the current one with package
/// `name` moved last (or left out): from the per-key record (index_record.hpp), touching only
/// the entries `name` adds, shadows or restores, when the record describes every other package;
/// otherwise by rebuild_derived. Returns rebuild_derived's messages.
std::vector<std::string> update_derived(const InstallTree& tree,
                                        const std::vector<std::string>& order,
                                        const std::string& name);

/// Whether everything derived (config.ini, the global indexes, the top files, the per-key
/// record) is what rebuild_derived would write now, judged by the stamps the record keeps, with
/// no package read; false when there is no such record or a package is damaged.
bool derived_current(const InstallTree& tree);

/// The SoC directories whose global index differs from merge_indexes of the installed packages
/// (a missing, stale or extra file); nothing is written.
std::vector<std::string> stale_global_indexes(const InstallTree& tree);

/// Rewrites everything derived from the installed packages, each file whole: config.ini (from
/// `order`), config/<soc>/binary_info_config.json (stale SoCs removed), and ai_core's
/// version.info and uninstall.sh (removed when nothing is installed). A package laid out by
/// another installer contributes its index as it is (read_foreign_index). A package whose manifest
/// or index cannot be read stays in config.ini but contributes no kernels; one message per such
/// package is returned (its name, what is wrong, how to fix it) so it never blocks the others.
/// `record` says how the per-key record is written: without a sync by default (a cache that
/// checks itself), Sync::yes for `verify --fix`.
std::vector<std::string> rebuild_derived(const InstallTree& tree,
                                         const std::vector<std::string>& order,
                                         Sync record = Sync::no);

/// One derived file that is not what a rebuild writes, and how.
struct DerivedProblem {
    std::string name; ///< the SoC directory (a global index) or the top file's name
    std::string why;  ///< "missing", "not the merge of ...", ...
};

/// How the derived files differ from a full rebuild from every package in install order, by
/// content (no stamp trusted): each global index, the top files, the per-key record.
struct DerivedState {
    std::vector<DerivedProblem> socs;  ///< global indexes missing, different or superfluous
    std::vector<DerivedProblem> top;   ///< uninstall.sh, version.info
    std::optional<std::string> record; ///< what is wrong with config/static_kernel.keys
    bool ok() const { return socs.empty() && top.empty() && !record; }
};
DerivedState check_derived(const InstallTree& tree);

/// The indexes of the installed packages in `order` that can be read; one message per package
/// that cannot (as rebuild_derived reports it) goes to `skipped`.
std::vector<std::pair<std::string, PackageIndex>>
installed_indexes(const InstallTree& tree, const std::vector<std::string>& order,
                  std::vector<std::string>& skipped);

/// Every package that provides a kernel for one key of one OpType on one SoC, in install order:
/// the last one wins (its entry is in the global index), the others are hidden.
struct KeyUse {
    std::string soc;
    std::string op;
    std::string key; ///< the simplifiedKey, or the binPath of an entry without one
    std::vector<std::pair<std::string, std::string>> providers; ///< (package, binPath)
    /// The package whose kernel the runtime loads for this key.
    const std::string& winner() const { return providers.back().first; }
};

/// Every key of the merged index with who provides it (merge_indexes' rule), sorted by SoC,
/// OpType and key.
std::vector<KeyUse> key_uses(const std::vector<std::pair<std::string, PackageIndex>>& packages);

/// The keys where a package's kernel hides another package's (more than one provider).
std::vector<KeyUse> shadowed_keys(const std::vector<KeyUse>& uses);

/// shadowed_keys of the installed packages, only those won by one of `winners`: from the
/// per-key record when it describes the tree (the providers' binPaths are then left empty),
/// else from every package's index.
std::vector<KeyUse> shadows_by(const InstallTree& tree, const std::set<std::string>& winners);

} // namespace skforge::install
