// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdarg>
#include <string>

namespace skforge::support {

/// printf into a string.
[[gnu::format(printf, 1, 2)]] std::string format(const char* fmt, ...);

/// vprintf into a string; `args` is consumed.
std::string vformat(const char* fmt, va_list args);

} // namespace skforge::support
