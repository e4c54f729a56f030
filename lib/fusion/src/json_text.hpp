#pragma once

// JSON written straight into a string, for the outputs that can hold a hundred thousand objects
// (building them as nlohmann::json first costs seconds). Keys are written by the caller in
// sorted order, so the text equals nlohmann's compact dump of the same object.
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::fusion::json_text {

/// Appends `s` as a JSON string literal.
inline void string(std::string& out, std::string_view s) {
    out += '"';
    std::size_t run = 0; // start of the characters not yet appended
    for (std::size_t i = 0; i < s.size(); ++i) {
        auto u = static_cast<unsigned char>(s[i]);
        if (u >= 0x20 && u != '"' && u != '\\')
            continue; // most names need no escape: append them in one piece
        out.append(s.data() + run, i - run);
        run = i + 1;
        if (u == '"' || u == '\\') {
            out += '\\';
            out += s[i];
        } else if (const char* e = u == '\b'   ? "\\b"
                                   : u == '\f' ? "\\f"
                                   : u == '\n' ? "\\n"
                                   : u == '\r' ? "\\r"
                                   : u == '\t' ? "\\t"
                                               : nullptr) {
            out += e; // the short escapes, as nlohmann writes them
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", u);
            out += buf;
        }
    }
    out.append(s.data() + run, s.size() - run);
    out += '"';
}

/// Appends `"key":`, preceded by a comma unless it is the object's first member. Keys are the
/// writer's own names, which need no escapes.
inline void key(std::string& out, std::string_view k) {
    if (out.back() != '{')
        out += ',';
    out += '"';
    out += k;
    out += "\":";
}

/// Appends an integer.
template <class T> void integer(std::string& out, T v) {
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, static_cast<std::size_t>(end - buf));
}

/// Appends `"key":<number>`.
template <class T> void number(std::string& out, std::string_view k, T v) {
    key(out, k);
    integer(out, v);
}

/// Appends `"key":"text"`.
inline void text(std::string& out, std::string_view k, std::string_view v) {
    key(out, k);
    string(out, v);
}

/// Appends `"key":[n,n,...]`.
template <class T> void numbers(std::string& out, std::string_view k, const std::vector<T>& v) {
    key(out, k);
    out += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i)
            out += ',';
        integer(out, v[i]);
    }
    out += ']';
}

} // namespace skforge::fusion::json_text
