// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/json_text.hpp"

#include "skforge/support/error.hpp"

#include <cstdio>

namespace skforge::package {

nlohmann::json parse_json_limited(std::string_view text, std::string_view origin) {
    if (auto why = check_json_depth(text))
        throw support::Error("'" + std::string(origin) + "' " + *why);
    auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded())
        throw support::Error("'" + std::string(origin) + "' is not valid JSON");
    return doc;
}

nlohmann::json parse_json_quiet(std::string_view text) {
    if (check_json_depth(text))
        return nullptr;
    return nlohmann::json::parse(text, nullptr, false);
}

std::string json_text(const nlohmann::json& j, int indent) {
    std::string text = j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
    // The C1 controls (U+0080..U+009F, UTF-8 C2 80..C2 9F) as \u escapes: JSON allows them raw,
    // but some terminals take them as escape introducers. Outside strings JSON text is ASCII, so
    // every such pair is inside a string.
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0u;
        if (static_cast<unsigned char>(text[i]) == 0xc2 && next >= 0x80 && next <= 0x9f) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\u%04x", next);
            out += esc;
            ++i;
            continue;
        }
        out += text[i];
    }
    return out;
}

} // namespace skforge::package
