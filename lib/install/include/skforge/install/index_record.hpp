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
#include "skforge/install/safe_fs.hpp"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
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
    std::uint32_t len = 0;             ///< the size of `text` (kept when the text is not read)
};

/// One installed package as the record knows it.
struct RecordPackage {
    /// What the record's lines call it: numbers that rise along the install order, kept while
    /// the package stays installed, so a change rewrites only the lines it touches (a full
    /// build numbers the packages 0, 1, ...; an install takes the last number plus one).
    std::uint32_t seq = 0;
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
    /// The record's text, which parse_record's views point into: shared, so that a process
    /// keeps one copy of it however many of its commands read it.
    std::shared_ptr<const std::string> text;
    /// Per SoC, the global index text parse_record paired the lines with (in `store`): a line
    /// taken from it is followed there by its ",\n", so rendering writes runs of it whole.
    std::map<std::string, std::string_view> globals;
    /// Per SoC, its lines of the record text (its "b" line to its last entry line, each with its
    /// newline): what parse_record with RecordBody::skip leaves unparsed for patch_record.
    std::map<std::string, std::string_view> bodies;

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

/// The record as the text of static_kernel.keys (ending in its own CRC-32).
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
std::optional<IndexRecord>
parse_record(std::shared_ptr<const std::string> text,
             const std::function<std::optional<std::string>(const std::string&)>& global,
             RecordBody body = RecordBody::read, RecordDigest digest = RecordDigest::check);

/// A line of the record whose winner hides another provider: (soc, op, key, providers oldest
/// first, the winner last).
struct ShadowLine {
    std::string soc;
    std::string op;
    std::string key;
    std::vector<std::string> providers;
};

/// What patch_record writes for one SoC it touches.
/// A SoC's lines of a record (IndexRecord::bodies' form) as pieces, in order: views into texts
/// their holder keeps (the old record's text, RecordPatch::store).
using BodyPieces = std::vector<std::string_view>;

struct PatchedSoc {
    BodyPieces body;               ///< its lines of the new record, mostly runs of the old text
    std::vector<FilePiece> global; ///< its new global index: ranges of the old one, and text
    std::uint64_t old_size = 0;    ///< the size the old global index has, by the record
    bool has_old = false;          ///< whether the record had this SoC (and so an old index)
};

/// apply_change done on the record's text, for a record parsed with RecordBody::skip: the
/// entry lines are walked once per SoC the change touches, those it does not touch are kept as
/// they are in the text, and each global index comes out as ranges of the old one (whose
/// offsets the lines' lengths give) around the entries that change, so that the cost of an
/// install or uninstall is the package's, not the tree's (issue 22). The result, assembled by
/// assemble_record, is serialize_record of apply_change's record. Throws when the record's text
/// does not hold together.
struct RecordPatch {
    std::vector<RecordPackage> packages;                   ///< the new order
    std::map<std::string, std::optional<PatchedSoc>> socs; ///< touched; nullopt: gone
    std::deque<std::string> store;                         ///< text the pieces point into
    /// The package's own lines that hide another provider, when it stays: what record_shadows
    /// of the new record gives for it alone, known without reading the record again.
    std::vector<ShadowLine> shadows;
};
RecordPatch patch_record(const IndexRecord& head, const std::string& name,
                         const PackageIndex* index, const IndexLoader& load);

/// A record's text in three parts: its head (magic, package and SoC-stamp lines) and its last
/// line (the digest), which it holds, and between them the SoCs' lines, views it does not hold.
/// Written as it is (writev), so the 4 MB of lines at fleet scale are not copied into a new
/// string to be written once.
struct RecordText {
    std::string head;
    BodyPieces body;
    std::string end;

    std::uint64_t size() const;
    void each(const std::function<void(std::string_view)>& emit) const;
    std::string joined() const;
};

/// Each SoC's lines of `r` (read with RecordBody::skip) as one piece.
std::map<std::string, BodyPieces> body_pieces(const IndexRecord& r);

/// The text of a record of `packages`, `soc_stamps` and, per SoC, its lines (`bodies`), with its
/// digest, computed over the pieces as they are.
RecordText assemble_record(const std::vector<RecordPackage>& packages,
                           const std::map<std::string, std::string>& soc_stamps,
                           const std::map<std::string, BodyPieces>& bodies);

/// A record's text with its packages renumbered 0, 1, ... (what a full build writes): two
/// records describe the same state when their canonical texts are equal. nullopt when `text`
/// is not a record.
std::optional<std::string> canonical_record(const std::string& text);

/// The lines of `head`'s record won by one of the packages named in `winners` that hide another
/// provider: (soc, op, key, providers oldest first, the winner last), from the text.
std::vector<ShadowLine> record_shadows(const IndexRecord& head,
                                       const std::vector<std::string>& winners);

} // namespace skforge::install
