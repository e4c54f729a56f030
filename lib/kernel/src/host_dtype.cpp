// SPDX-License-Identifier: Apache-2.0
#include "skforge/kernel/host_dtype.hpp"

#include "skforge_host_kernel.h"

#include <utility>

namespace skforge::kernel {

std::optional<std::uint32_t> host_dtype(std::string_view d) {
    static const std::pair<std::string_view, std::uint32_t> k_types[] = {
        {"float32", SK_DT_FLOAT32}, {"float", SK_DT_FLOAT32},     {"float16", SK_DT_FLOAT16},
        {"half", SK_DT_FLOAT16},    {"bfloat16", SK_DT_BFLOAT16}, {"int8", SK_DT_INT8},
        {"uint8", SK_DT_UINT8},     {"int16", SK_DT_INT16},       {"int32", SK_DT_INT32},
        {"int64", SK_DT_INT64},     {"bool", SK_DT_BOOL}};
    for (const auto& [name, value] : k_types)
        if (name == d)
            return value;
    return std::nullopt;
}

} // namespace skforge::kernel
