// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/template.hpp"

#include "skforge/support/error.hpp"

namespace skforge::package {

namespace {
bool is_key_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
} // namespace

std::string render_template(std::string_view text,
                            const std::map<std::string, std::string>& values) {
    std::string out;
    out.reserve(text.size());
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t at = text.find('@', pos);
        if (at == std::string_view::npos) {
            out.append(text.substr(pos));
            break;
        }
        out.append(text.substr(pos, at - pos));
        std::size_t end = at + 1;
        while (end < text.size() && is_key_char(text[end]))
            ++end;
        if (end == at + 1 || end >= text.size() || text[end] != '@') {
            out.push_back('@');
            pos = at + 1;
            continue;
        }
        std::string key(text.substr(at + 1, end - at - 1));
        auto it = values.find(key);
        if (it == values.end())
            throw support::Error("template placeholder @" + key + "@ has no value");
        out.append(it->second);
        pos = end + 1;
    }
    return out;
}

} // namespace skforge::package
