// SPDX-License-Identifier: Apache-2.0
#pragma once

// A package's index files read as the global index takes them: skinstall's merge
// (lib/install/index_text.hpp), install.sh's index records (generated.hpp) and the scripts' awk
// (share/skforge/fallback-lib.sh.in) read entries as tokens, never as values, so they agree on
// any input: an entry is kept as written with the whitespace outside strings removed
// (share/doc/installer.md, "The global index").

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::package {

/// One staticList entry as the global index holds it.
struct IndexEntry {
    /// What a later package replaces it by: "k:" + its simplifiedKey's JSON text, else "p:" +
    /// its binPath's, else "e:" + the entry's own text.
    std::string key;
    std::string text; ///< the entry's JSON text without whitespace outside strings
};

/// One SoC's index: each OpType (its name as written between the quotes) with its entries.
using SocIndex = std::map<std::string, std::vector<IndexEntry>>;

/// The staticList entries of an index file, in order. `text` must already have parsed as JSON;
/// what is not an object of OpType objects contributes nothing.
SocIndex scan_index_text(std::string_view text);

/// `text` without the whitespace (space, tab, CR, LF) outside its JSON strings.
std::string compact_json_text(std::string_view text);

} // namespace skforge::package
