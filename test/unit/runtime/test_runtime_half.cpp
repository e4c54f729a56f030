// SPDX-License-Identifier: Apache-2.0
#include "skforge_host_kernel.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

namespace {

float bits_to_float(std::uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
}

} // namespace

TEST_CASE("half: every half converts to its exact float value and back", "[runtime][half]") {
    int wrong = 0;
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
        float f = sk_half_to_float(static_cast<std::uint16_t>(h));
        std::uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
        bool negative = (h & 0x8000) != 0;
        if (exp == 0x1f) {
            if (mant == 0 ? !std::isinf(f) : !std::isnan(f))
                ++wrong;
            continue;
        }
        float expect = exp == 0 ? std::ldexp(static_cast<float>(mant) / 1024.0f, -14)
                                : std::ldexp(1.0f + static_cast<float>(mant) / 1024.0f,
                                             static_cast<int>(exp) - 15);
        if (f != (negative ? -expect : expect) || std::signbit(f) != negative ||
            sk_float_to_half(f) != h)
            ++wrong;
    }
    CHECK(wrong == 0);
}

TEST_CASE("half: floats round to the nearest half, ties to even", "[runtime][half]") {
    CHECK(sk_float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);     // tie: down to even
    CHECK(sk_float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02); // tie: up to even
    CHECK(sk_float_to_half(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)) == 0x3c01);
    CHECK(sk_float_to_half(65504.0f) == 0x7bff);
    CHECK(sk_float_to_half(65520.0f) == 0x7c00); // rounds past the largest: infinity
    CHECK(sk_float_to_half(-1e9f) == 0xfc00);
    CHECK(sk_float_to_half(std::ldexp(1.0f, -24)) == 0x0001); // smallest subnormal
    CHECK(sk_float_to_half(std::ldexp(1.0f, -25)) == 0x0000); // tie below it: to even (zero)
    CHECK(sk_float_to_half(std::ldexp(1.5f, -25)) == 0x0001);
    CHECK((sk_float_to_half(bits_to_float(0x7fc00000u)) & 0x7e00) == 0x7e00); // NaN stays NaN
}

TEST_CASE("bfloat16 and int8 stores round to nearest even and saturate", "[runtime][half]") {
    std::uint16_t b[1];
    sk_tensor bt{b, SK_DT_BFLOAT16, 1, {1}};
    sk_store(&bt, 0, 1.0f + std::ldexp(1.0f, -8)); // tie: to even
    CHECK(b[0] == 0x3f80);
    sk_store(&bt, 0, 1.0f + 3 * std::ldexp(1.0f, -8));
    CHECK(b[0] == 0x3f82);
    CHECK(sk_load(&bt, 0) == 1.0f + std::ldexp(1.0f, -6));
    std::int8_t q[1];
    sk_tensor qt{q, SK_DT_INT8, 1, {1}};
    sk_store(&qt, 0, 300.0f);
    CHECK(q[0] == 127);
    sk_store(&qt, 0, -300.0f);
    CHECK(q[0] == -128);
    sk_store(&qt, 0, -2.5f);
    CHECK(q[0] == -3); // roundf: half away from zero
}
