// SPDX-License-Identifier: Apache-2.0
#pragma once

// The per-key record kept beside the global index (ai_core/config/static_kernel.keys): for every
// key of every OpType of every SoC, which installed packages provide it, in install order, and
// where the winner's entry sits in its package. With it, installing or removing one package
// touches only the entries that package adds, shadows or restores; the global index it renders
// is byte for byte merge_and_render of every package in install order (share/doc/installer.md,
// "The per-key record"). The record is a cache: it names the state it describes (config.ini,
// each package's index and manifest, each global index, by size and mtime), anything that does
// not match that state is rebuilt from the packages, and a missing or damaged record is too.

#include "skforge/install/index_text.hpp"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::install {

/// One winning entry of the global index of one OpType.
struct RecordLine {
    std::string_view key;  ///< IndexEntry::key
    std::string_view text; ///< IndexEntry::text, the line of the global index
    std::uint32_t pkg;     ///< the winner, as its position in the record's order
    std::uint32_t idx;     ///< where the winner's entry is in its own list for this OpType
    std::vector<std::uint32_t> hidden; ///< the other providers, oldest first
};

/// One installed package as the record knows it.
struct RecordPackage {
    std::string name;
    std::string stamp;             ///< what its index files and manifest looked like (stat)
    std::vector<std::string> socs; ///< the SoCs it has an index file for
    bool damaged = false;          ///< contributes nothing: its manifest or index is unusable
};

/// The record: the packages in install order and, per SoC, per OpType (its name as written),
/// the winning entries in the order of the global index.
struct IndexRecord {
    std::vector<RecordPackage> packages;
    std::map<std::string, std::string> soc_stamps; ///< the global index of each SoC (stat)
    std::map<std::string, std::map<std::string, std::vector<RecordLine>>> socs;
    std::deque<std::string> store; ///< the text the views point into
    /// Per SoC, the global index text parse_record paired the lines with (in `store`): a line
    /// taken from it is followed there by its ",\n", so rendering writes runs of it whole.
    std::map<std::string, std::string_view> globals;

    /// The order the record describes.
    std::vector<std::string> order() const;
};

/// The record of `packages` (install order) merged: what merge_indexes renders.
IndexRecord build_record(const std::vector<std::pair<std::string, PackageIndex>>& packages);

/// Reads package `name`'s index for one SoC while a change restores its entries.
using IndexLoader = std::function<const SocIndex&(const std::string& name, const std::string& soc)>;

/// Removes package `name` (wherever it is in the order) and, when `index` is given, adds it back
/// last with that index: the record becomes build_record of the new order. Entries `name` won
/// and no longer provides go back to the newest other provider, whose index `load` reads.
/// Returns the SoCs whose global index may have changed.
std::vector<std::string> apply_change(IndexRecord& record, const std::string& name,
                                      const PackageIndex* index, const IndexLoader& load);

/// The global index text of one SoC of the record (merge_and_render's form).
std::string render_soc(const IndexRecord& record, const std::string& soc);

/// render_soc's text as pieces, in order, without assembling it: lines that follow one another
/// in the global index parse_record read come as one piece (the 15 MB index of 100,000 entries
/// is written from the old text in a few runs). Returns the text's size.
std::uint64_t render_soc_pieces(const IndexRecord& record, const std::string& soc,
                                const std::function<void(std::string_view)>& piece);

/// The record as the text of static_kernel.keys (ending in its own SHA-256).
std::string serialize_record(const IndexRecord& record);

/// Parses static_kernel.keys (the text is kept in the record, not copied); `global(soc)` gives
/// the current text of that SoC's global index, whose lines the record's entries must be.
/// nullopt when the text is not a whole record of this version or does not fit the global
/// indexes. With `global` empty the entries are read without their text; with RecordBody::skip
/// too, only the packages, the stamps and the SoCs' names (the digest still covers every line).
/// RecordDigest::known skips the digest: for a caller that checked this same file's digest
/// before, under the lock it still holds.
enum class RecordBody { read, skip };
enum class RecordDigest { check, known };
std::optional<IndexRecord>
parse_record(std::string text,
             const std::function<std::optional<std::string>(const std::string&)>& global,
             RecordBody body = RecordBody::read, RecordDigest digest = RecordDigest::check);

} // namespace skforge::install
