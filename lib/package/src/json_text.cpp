// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/json_text.hpp"

#include "skforge/support/error.hpp"
#include "skforge/support/json.hpp"

#include <cstdio>
#include <set>
#include <vector>

namespace skforge::package {

std::optional<std::string> check_json_keys(std::string_view text) {
    struct Level {
        bool object;
        bool want_key;
        std::set<std::string_view> keys;
    };
    std::vector<Level> open;
    std::size_t line = 1;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '\n') {
            ++line;
        } else if (c == '{' || c == '[') {
            open.push_back({c == '{', c == '{', {}});
        } else if (c == '}' || c == ']') {
            if (!open.empty())
                open.pop_back();
        } else if (c == ',') {
            if (!open.empty())
                open.back().want_key = open.back().object;
        } else if (c == '"') {
            std::size_t end = support::json_string_end(text, i);
            if (!open.empty() && open.back().want_key) {
                std::string_view key = text.substr(i, end - i);
                if (key.find('\\') != std::string_view::npos)
                    return "writes the key " + std::string(key) +
                           " with a backslash escape (line " + std::to_string(line) + ")";
                if (!open.back().keys.insert(key).second)
                    return "repeats the key " + std::string(key) + " in one object (line " +
                           std::to_string(line) + ")";
                open.back().want_key = false;
            }
            i = end - 1;
        }
    }
    return std::nullopt;
}

nlohmann::json parse_json_limited(std::string_view text, std::string_view origin) {
    if (auto why = check_json_depth(text))
        throw support::Error("'" + std::string(origin) + "' " + *why);
    auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded())
        throw support::Error("'" + std::string(origin) + "' is not valid JSON");
    if (auto why = check_json_keys(text))
        throw support::Error("'" + std::string(origin) + "' " + *why);
    return doc;
}

nlohmann::json parse_json_quiet(std::string_view text) {
    if (check_json_depth(text))
        return nullptr;
    return nlohmann::json::parse(text, nullptr, false);
}

std::string json_text(const nlohmann::json& j, int indent) {
    return support::dump_json(j, indent);
}

} // namespace skforge::package
