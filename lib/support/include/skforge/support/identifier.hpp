// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace skforge::support {

/// `text` with every character that may not appear in a C identifier replaced by '_' (for
/// symbol names made from graph and segment names).
inline std::string c_identifier(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text)
        out += (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_') ? c : '_';
    return out;
}

} // namespace skforge::support
