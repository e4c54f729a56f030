// SPDX-License-Identifier: Apache-2.0
#pragma once

// Checked arithmetic on sizes read from files or given by callers: a sum, product or rounding
// that does not fit is nullopt, never a wrapped value.
#include <cstdint>
#include <optional>

namespace skforge::support {

/// a + b, or nullopt when it does not fit in 64 bits.
inline std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) {
    std::uint64_t r = 0;
    if (__builtin_add_overflow(a, b, &r))
        return std::nullopt;
    return r;
}

/// a × b, or nullopt when it does not fit in 64 bits.
inline std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
    std::uint64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r))
        return std::nullopt;
    return r;
}

/// `v` rounded up to a multiple of `align` (not 0), or nullopt when that does not fit.
inline std::optional<std::uint64_t> round_up(std::uint64_t v, std::uint64_t align) {
    auto r = checked_add(v, align - 1);
    if (!r)
        return std::nullopt;
    return *r / align * align;
}

} // namespace skforge::support
