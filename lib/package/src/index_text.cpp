// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/index_text.hpp"

#include "skforge/support/json_depth.hpp"

namespace skforge::package {

namespace {

bool is_ws(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// A reader of JSON text already known to be valid: it finds where tokens and values start and
// end and never converts them.
struct Cursor {
    std::string_view s;
    std::size_t i = 0;

    char peek() {
        while (i < s.size() && is_ws(s[i]))
            ++i;
        return i < s.size() ? s[i] : '\0';
    }
    bool eat(char c) {
        if (peek() != c)
            return false;
        ++i;
        return true;
    }
    // The end of the string token that starts at `at` (a '"').
    std::size_t string_end(std::size_t at) const { return support::json_string_end(s, at); }
    // Moves over one value (after whitespace) and returns its text.
    std::string_view value() {
        peek();
        std::size_t begin = i;
        int depth = 0;
        while (i < s.size()) {
            char c = s[i];
            if (c == '"') {
                i = string_end(i);
                if (depth == 0)
                    break;
                continue;
            }
            if (c == '{' || c == '[') {
                ++depth;
            } else if (c == '}' || c == ']') {
                if (depth == 0)
                    break;
                if (--depth == 0) {
                    ++i;
                    break;
                }
            } else if (depth == 0 && (c == ',' || is_ws(c))) {
                break;
            }
            ++i;
        }
        return s.substr(begin, i - begin);
    }
};

// Calls fn(key token with its quotes, cursor at the value) for every member of the object at the
// cursor; fn moves over the value. A value that is not an object is skipped.
template <class F> void for_members(Cursor& c, F fn) {
    if (!c.eat('{')) {
        c.value();
        return;
    }
    if (c.eat('}'))
        return;
    do {
        c.peek();
        std::size_t begin = c.i;
        c.i = c.string_end(c.i);
        std::string_view key = c.s.substr(begin, c.i - begin);
        c.eat(':');
        fn(key, c);
    } while (c.eat(','));
    c.eat('}');
}

IndexEntry scan_entry(std::string_view raw) {
    IndexEntry e{"", compact_json_text(raw)};
    std::string simplified, bin;
    bool has_simplified = false, has_bin = false;
    Cursor c{raw};
    if (c.peek() == '{')
        for_members(c, [&](std::string_view key, Cursor& at) {
            std::string_view v = at.value();
            if (key == "\"simplifiedKey\"") {
                simplified = compact_json_text(v);
                has_simplified = true;
            } else if (key == "\"binPath\"") {
                bin = compact_json_text(v);
                has_bin = true;
            }
        });
    e.key = has_simplified ? "k:" + simplified : has_bin ? "p:" + bin : "e:" + e.text;
    return e;
}

} // namespace

std::string compact_json_text(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c != '"') {
            if (!is_ws(c))
                out += c;
            continue;
        }
        std::size_t end = Cursor{text}.string_end(i);
        out.append(text.substr(i, end - i));
        i = end - 1;
    }
    return out;
}

SocIndex scan_index_text(std::string_view text) {
    SocIndex out;
    Cursor c{text};
    if (text.starts_with("\xEF\xBB\xBF"))
        c.i = 3;
    if (c.peek() != '{')
        return out;
    for_members(c, [&](std::string_view op, Cursor& at) {
        if (at.peek() != '{') {
            at.value();
            return;
        }
        auto& list = out[std::string(op.substr(1, op.size() - 2))];
        for_members(at, [&](std::string_view member, Cursor& in) {
            if (member != "\"staticList\"" || in.peek() != '[') {
                in.value();
                return;
            }
            ++in.i;
            if (in.eat(']'))
                return;
            do
                list.push_back(scan_entry(in.value()));
            while (in.eat(','));
            in.eat(']');
        });
    });
    return out;
}

} // namespace skforge::package
