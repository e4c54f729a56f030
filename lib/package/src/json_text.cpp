// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/json_text.hpp"

#include "skforge/support/error.hpp"
#include "skforge/support/json.hpp"

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
    return support::dump_json(j, indent);
}

} // namespace skforge::package
