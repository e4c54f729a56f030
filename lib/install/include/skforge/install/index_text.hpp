// SPDX-License-Identifier: Apache-2.0
#pragma once

// The global index as text: what skinstall writes and what a package's own install.sh and
// uninstall.sh write with awk (share/skforge/fallback-lib.sh.in), byte for byte. Both read the
// packages' index files as tokens, never as values, so they agree on any input: an entry is kept
// as written with the whitespace outside strings removed (share/doc/installer.md, "The global
// index").

#include "skforge/package/index_text.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::install {

using package::compact_json_text;
using package::IndexEntry;
using package::scan_index_text;
using package::SocIndex;

/// One package's `config/<soc dir>/binary_info_config.json` files, by SoC directory name.
using PackageIndex = std::map<std::string, SocIndex>;

/// Merges SoC indexes in install order: per OpType, an entry replaces an earlier one with the
/// same key and goes to the end. Renders the result: "{", then per OpType with entries, in
/// byte order of its name, `"<OpType>":{"staticList":[`, one entry per line joined by ",",
/// `]}` (followed by "," but for the last OpType), then "}"; every line ends with "\n".
std::string merge_and_render(const std::vector<const SocIndex*>& in_order);

/// A JSON string's text as written (with its quotes) decoded for messages; other JSON text is
/// returned unchanged.
std::string shown_json_text(const std::string& text);

} // namespace skforge::install
