// SPDX-License-Identifier: Apache-2.0
// Pseudo-random and file inputs, and bitwise comparison of tensors.
#include "skforge/runtime/data.hpp"

#include "skforge/kernel/host_dtype.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge_host_kernel.h"

#include <cstring>
#include <filesystem>

namespace skforge::runtime {

using support::Error;

namespace {

std::uint64_t splitmix(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

} // namespace

void random_fill(void* memory, std::uint64_t bytes, const std::string& dtype, std::size_t index,
                 std::uint64_t seed) {
    auto dt = kernel::host_dtype(dtype);
    if (!dt)
        throw Error("tensor number " + std::to_string(index) + " has dtype '" + dtype +
                    "', which has no host representation");
    std::uint64_t state = seed * 0x100000001b3ull + index;
    std::uint64_t n = bytes / sk_dtype_size(*dt);
    sk_tensor view{memory, *dt, 0, {}};
    for (std::uint64_t e = 0; e < n; ++e) {
        std::uint64_t r = splitmix(state);
        switch (*dt) {
        case SK_DT_INT8:
            static_cast<std::int8_t*>(memory)[e] =
                static_cast<std::int8_t>(static_cast<int>(r % 255) - 127);
            break;
        case SK_DT_UINT8:
        case SK_DT_BOOL:
            static_cast<std::uint8_t*>(memory)[e] = static_cast<std::uint8_t>(r % 2);
            break;
        case SK_DT_INT16:
            static_cast<std::int16_t*>(memory)[e] = static_cast<std::int16_t>(r % 16);
            break;
        case SK_DT_INT32:
            static_cast<std::int32_t*>(memory)[e] = static_cast<std::int32_t>(r % 16);
            break;
        case SK_DT_INT64:
            static_cast<std::int64_t*>(memory)[e] = static_cast<std::int64_t>(r % 16);
            break;
        default:
            sk_store(&view, static_cast<std::int64_t>(e),
                     static_cast<float>(r >> 40) / static_cast<float>(1u << 23) - 1.0f);
        }
    }
}

void read_tensor_file(void* memory, std::uint64_t bytes, const std::string& dir,
                      const std::string& name, const std::string& dtype) {
    std::string path = dir + "/" + name + ".bin";
    if (!std::filesystem::is_regular_file(path))
        throw Error(path + ": missing: every graph input needs <name>.bin");
    std::string data = support::read_file(path);
    if (data.size() != bytes)
        throw Error(path + ": " + std::to_string(data.size()) + " bytes, but " + name + " (" +
                    dtype + ") needs " + std::to_string(bytes));
    std::memcpy(memory, data.data(), data.size());
}

Difference compare_bytes(const std::string& tensor, const void* a, const void* b,
                         std::uint64_t bytes) {
    const auto* x = static_cast<const unsigned char*>(a);
    const auto* y = static_cast<const unsigned char*>(b);
    Difference d{tensor, 0, 0};
    for (std::uint64_t k = 0; k < bytes; ++k)
        if (x[k] != y[k] && d.differing_bytes++ == 0)
            d.first_byte = k;
    return d;
}

} // namespace skforge::runtime
