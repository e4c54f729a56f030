// SPDX-License-Identifier: Apache-2.0
#pragma once

// JSON written straight into a buffer, for the outputs that can hold a hundred thousand objects
// (building them as nlohmann::json first costs seconds). Keys are written by the caller in
// sorted order, so the text equals nlohmann's compact dump of the same object.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::fusion::json_text {

/// A growing text buffer. The writers append many short pieces (a plan's metadata is a hundred
/// bytes per key); appending to std::string costs a call and a terminator per piece, this costs
/// a capacity check and a copy the compiler sees the length of.
class Out {
  public:
    Out& operator+=(char c) {
        tail(1)[0] = c;
        ++m_len;
        return *this;
    }
    Out& operator+=(std::string_view s) {
        std::memcpy(tail(s.size()), s.data(), s.size());
        m_len += s.size();
        return *this;
    }
    /// Makes the text `n` bytes longer and returns where they go (the caller writes them all).
    char* extend(std::size_t n) {
        char* p = tail(n);
        m_len += n;
        return p;
    }
    /// Room for at least `n` more bytes at the end of the text: the caller writes what it
    /// needs of them, then commits that many.
    char* tail(std::size_t n) {
        if (m_len + n > m_buf.size()) [[unlikely]]
            grow(n);
        return m_buf.data() + m_len;
    }
    void commit(std::size_t n) { m_len += n; }
    char back() const { return m_len == 0 ? '\0' : m_buf[m_len - 1]; }
    std::size_t size() const { return m_len; }
    void clear() { m_len = 0; }
    std::string_view view() const { return {m_buf.data(), m_len}; }
    std::string str() const { return std::string(view()); }

  private:
    [[gnu::noinline]] void grow(std::size_t n) {
        m_buf.resize(std::max(m_buf.size() * 2, m_len + n + 4096));
    }
    std::string m_buf; ///< bytes [0, m_len) are the text; the rest is room
    std::size_t m_len = 0;
};

/// Appends `s` as a JSON string literal.
inline void string(Out& out, std::string_view s) {
    // Most strings (names) need no escape: checked without a branch per byte, copied whole.
    bool plain = true;
    for (char c : s) {
        auto u = static_cast<unsigned char>(c);
        plain &= (u >= 0x20) & (u != '"') & (u != '\\');
    }
    if (plain) {
        char* p = out.tail(s.size() + 2);
        p[0] = '"';
        std::memcpy(p + 1, s.data(), s.size());
        p[s.size() + 1] = '"';
        out.commit(s.size() + 2);
        return;
    }
    out += '"';
    std::size_t run = 0; // start of the characters not yet appended
    for (std::size_t i = 0; i < s.size(); ++i) {
        auto u = static_cast<unsigned char>(s[i]);
        if (u >= 0x20 && u != '"' && u != '\\')
            continue;
        out += s.substr(run, i - run);
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
    out += s.substr(run);
    out += '"';
}

/// Writes `"key":` at `p` (room for N + 3 bytes), preceded by a comma unless `after` (the
/// byte before it) opens the object; returns the end. Keys are the writer's own names (string
/// literals), which need no escapes.
template <std::size_t N> char* put_key(char* p, char after, const char (&k)[N]) {
    constexpr std::size_t n = N - 1;
    if (after != '{')
        *p++ = ',';
    *p++ = '"';
    std::memcpy(p, k, n);
    p += n;
    *p++ = '"';
    *p++ = ':';
    return p;
}

/// Appends `"key":`, preceded by a comma unless it is the object's first member.
template <std::size_t N> void key(Out& out, const char (&k)[N]) {
    char after = out.back();
    char* p = out.tail(N + 3);
    out.commit(static_cast<std::size_t>(put_key(p, after, k) - p));
}

/// Any 64-bit integer, with its sign, fits in this many bytes.
inline constexpr std::size_t k_digits = 24;

/// Appends an integer.
template <class T> void integer(Out& out, T v) {
    char* p = out.tail(k_digits);
    out.commit(static_cast<std::size_t>(std::to_chars(p, p + k_digits, v).ptr - p));
}

/// Appends `"key":<number>`, with one check for room.
template <std::size_t N, class T> void number(Out& out, const char (&k)[N], T v) {
    char after = out.back();
    char* p = out.tail(N + 3 + k_digits);
    char* q = put_key(p, after, k);
    out.commit(static_cast<std::size_t>(std::to_chars(q, q + k_digits, v).ptr - p));
}

/// Appends `"key":"text"`.
template <std::size_t N> void text(Out& out, const char (&k)[N], std::string_view v) {
    key(out, k);
    string(out, v);
}

/// Appends `"key":[n,n,...]`.
template <std::size_t N, class T>
void numbers(Out& out, const char (&k)[N], const std::vector<T>& v) {
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
