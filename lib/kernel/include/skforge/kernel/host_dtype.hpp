// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace skforge::kernel {

/// The host kernel ABI's element type (SK_DT_* of skforge_host_kernel.h) of a graph dtype name,
/// or nullopt when the ABI has none. One table for the code generator and the runtime.
std::optional<std::uint32_t> host_dtype(std::string_view dtype);

} // namespace skforge::kernel
