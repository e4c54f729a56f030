// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::support {

/// Lower-case hexadecimal text of `bytes`.
std::string to_hex(std::span<const std::uint8_t> bytes);

/// Bytes of lower-case hexadecimal `text`; nullopt when it is not exactly that.
std::optional<std::vector<std::uint8_t>> from_hex(std::string_view text);

/// True when `text` is `length` lower-case hexadecimal digits.
bool is_lower_hex(std::string_view text, std::size_t length);

} // namespace skforge::support
