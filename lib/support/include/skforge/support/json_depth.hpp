// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace skforge::support {

/// Deepest nesting of arrays and objects skforge accepts in JSON it reads from a package or an
/// installed tree. nlohmann's parser, dump and destructor all recurse once per level, so an
/// unbounded depth is a stack overflow waiting for a crafted file; real indexes nest 5 deep.
inline constexpr std::size_t k_max_json_depth = 64;

/// One past the closing quote of the JSON string token that starts at `at` (a '"') in `text`,
/// or text.size() when the string does not end: how every text-level reader of JSON skips one.
std::size_t json_string_end(std::string_view text, std::size_t at);

/// Why `text` nests arrays/objects deeper than `max_depth`, or nullopt. A scan of the text that
/// skips strings; it does not validate the rest of the syntax.
std::optional<std::string> check_json_depth(std::string_view text,
                                            std::size_t max_depth = k_max_json_depth);

} // namespace skforge::support
