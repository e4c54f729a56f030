// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/json_depth.hpp"

namespace skforge::support {

std::size_t json_string_end(std::string_view text, std::size_t at) {
    for (std::size_t j = at + 1; j < text.size(); ++j) {
        if (text[j] == '\\')
            ++j; // the escaped character cannot end the string
        else if (text[j] == '"')
            return j + 1;
    }
    return text.size();
}

std::optional<std::string> check_json_depth(std::string_view text, std::size_t max_depth) {
    std::size_t depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (in_string) {
            if (c == '\\')
                ++i; // the escaped character cannot end the string
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth)
                return "nests arrays and objects more than " + std::to_string(max_depth) +
                       " deep (at byte " + std::to_string(i) + ")";
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return std::nullopt;
}

} // namespace skforge::support
