// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/printable.hpp"

namespace skforge::support {

namespace {

// Length of the UTF-8 sequence starting with `lead`, or 0 for a byte that cannot start one.
std::size_t utf8_length(std::uint8_t lead) {
    if (lead < 0x80)
        return 1;
    if (lead >= 0xc2 && lead <= 0xdf)
        return 2;
    if (lead >= 0xe0 && lead <= 0xef)
        return 3;
    if (lead >= 0xf0 && lead <= 0xf4)
        return 4;
    return 0;
}

bool is_control(std::uint32_t cp) {
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

} // namespace

std::size_t utf8_sequence(std::string_view text, std::size_t i, std::uint32_t& cp) {
    auto lead = static_cast<std::uint8_t>(text[i]);
    std::size_t len = utf8_length(lead);
    if (len == 0 || i + len > text.size())
        return 0;
    cp = len == 1 ? lead : (lead & (0xffu >> (len + 1)));
    for (std::size_t k = 1; k < len; ++k) {
        auto cont = static_cast<std::uint8_t>(text[i + k]);
        if ((cont & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (cont & 0x3fu);
    }
    bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return len;
}

std::string printable(std::string_view text, Lines lines) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        std::uint32_t cp = 0;
        std::size_t len = utf8_sequence(text, i, cp);
        bool kept = lines == Lines::keep && (cp == '\n' || cp == '\t');
        if (len == 0 || (is_control(cp) && !kept)) {
            out += '?';
            i += len == 0 ? 1 : len;
            continue;
        }
        out.append(text.substr(i, len));
        i += len;
    }
    return out;
}

} // namespace skforge::support
