// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/support/json_depth.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace skforge::package {

using support::check_json_depth;

/// Why the object keys of JSON text `text` (already parsed as JSON) are not what every reader of a
/// package index sees alike, or nullopt: a key written twice in one object (a parser keeps one of
/// them, a reader of the text both), or a key written with a backslash escape (two spellings of
/// one key). The scripts' awk applies the same rule (share/doc/installer.md, "The global index").
std::optional<std::string> check_json_keys(std::string_view text);

/// Parses JSON read from a package or a tree: refuses nesting past support::k_max_json_depth
/// before the parser sees it, then parses, then refuses the keys check_json_keys refuses.
/// Throws an Error naming `origin` and the reason.
nlohmann::json parse_json_limited(std::string_view text, std::string_view origin);

/// The same limit for callers that judge the document themselves: null when `text` nests too
/// deep, a discarded value when it is not JSON, else the document. Never throws.
nlohmann::json parse_json_quiet(std::string_view text);

/// `j` as JSON text (`indent` as nlohmann's dump takes it), with every invalid UTF-8 sequence in
/// its strings replaced by U+FFFD (text from paths and files that is not UTF-8 never makes
/// writing a record, a log line or a --json result fail) and control characters, C1 included,
/// escaped (JSON on a terminal sends it no escape sequence): support::dump_json, under the name
/// the package and install layers already use.
std::string json_text(const nlohmann::json& j, int indent = -1);

} // namespace skforge::package
