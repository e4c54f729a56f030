// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/error.hpp"

#include <cstring>

namespace skforge::support {

std::string errno_text(int errnum) {
    char buf[256];
    // GNU strerror_r returns the message, which may or may not live in buf.
    return std::string(strerror_r(errnum, buf, sizeof buf));
}

Error io_error(std::string_view op, std::string_view path, int errnum) {
    std::string msg;
    msg.append(op).append(" '").append(path).append("': ").append(errno_text(errnum));
    return Error(std::move(msg));
}

} // namespace skforge::support
