// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace skforge::support {

/// Length (1 to 4) of the valid UTF-8 sequence at `text[i]`, with its code point in `cp`, or 0
/// when none starts there (a stray continuation byte, a truncated sequence, an overlong form, a
/// surrogate, a code point past U+10FFFF).
std::size_t utf8_sequence(std::string_view text, std::size_t i, std::uint32_t& cp);

/// Whether printable() keeps line breaks: `keep` for a message of several lines, `join` for one
/// field of a line (a name, a path, a value read from a file), where a newline would forge a line.
enum class Lines { join, keep };

/// `text` as it may reach a terminal: every control character (C0, DEL and the C1 range
/// U+0080..U+009F, which some terminals take as escape introducers) and every byte that is not
/// part of valid UTF-8 shown as '?'; newline and tab kept only with Lines::keep. The one function
/// through which skinstall and skc show text read from files, logs and packages.
std::string printable(std::string_view text, Lines lines = Lines::join);

} // namespace skforge::support
