// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/hex.hpp"

namespace skforge::support {

namespace {
constexpr char k_digits[] = "0123456789abcdef";

int hex_value(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}
} // namespace

std::string to_hex(std::span<const std::uint8_t> bytes) {
    std::string out;
    out.reserve(bytes.size() * 2);
    for (std::uint8_t b : bytes) {
        out.push_back(k_digits[b >> 4]);
        out.push_back(k_digits[b & 0xf]);
    }
    return out;
}

std::optional<std::vector<std::uint8_t>> from_hex(std::string_view text) {
    if (text.size() % 2 != 0)
        return std::nullopt;
    std::vector<std::uint8_t> out;
    out.reserve(text.size() / 2);
    for (std::size_t i = 0; i < text.size(); i += 2) {
        int hi = hex_value(text[i]);
        int lo = hex_value(text[i + 1]);
        if (hi < 0 || lo < 0)
            return std::nullopt;
        out.push_back(static_cast<std::uint8_t>(hi * 16 + lo));
    }
    return out;
}

bool is_lower_hex(std::string_view text, std::size_t length) {
    if (text.size() != length)
        return false;
    for (char c : text)
        if (hex_value(c) < 0)
            return false;
    return true;
}

} // namespace skforge::support
