// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/json.hpp"

#include "skforge/support/json_depth.hpp"

#include <cstdio>
#include <limits>

namespace skforge::support {

using nlohmann::json;

json parse_json(std::string_view text) {
    if (check_json_depth(text))
        return json(json::value_t::discarded);
    return json::parse(text, nullptr, false);
}

std::string dump_json(const json& j, int indent) {
    std::string text = j.dump(indent, ' ', false, json::error_handler_t::replace);
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

template <> std::optional<std::uint64_t> json_as<std::uint64_t>(const json& v) {
    if (v.is_number_unsigned())
        return v.get<std::uint64_t>();
    if (v.is_number_integer() && v.get<std::int64_t>() >= 0)
        return static_cast<std::uint64_t>(v.get<std::int64_t>());
    return std::nullopt;
}

template <> std::optional<std::int64_t> json_as<std::int64_t>(const json& v) {
    if (v.is_number_unsigned()) {
        auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            return std::nullopt;
        return static_cast<std::int64_t>(u);
    }
    if (v.is_number_integer())
        return v.get<std::int64_t>();
    return std::nullopt;
}

template <> std::optional<double> json_as<double>(const json& v) {
    if (v.is_number())
        return v.get<double>();
    return std::nullopt;
}

template <> std::optional<std::string> json_as<std::string>(const json& v) {
    if (v.is_string())
        return v.get<std::string>();
    return std::nullopt;
}

template <> std::optional<bool> json_as<bool>(const json& v) {
    if (v.is_boolean())
        return v.get<bool>();
    return std::nullopt;
}

const json* json_member(const json& j, std::string_view key, json::value_t type) {
    if (!j.is_object())
        return nullptr;
    auto it = j.find(key);
    return it != j.end() && it->type() == type ? &*it : nullptr;
}

} // namespace skforge::support
