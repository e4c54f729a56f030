// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace skforge::support {

/// What went wrong, as a category the apps map to exit codes.
enum class ErrorKind {
    failure,   ///< the operation failed (bad input, I/O, verification): exit 1
    usage,     ///< the command line was wrong: exit 2
    integrity, ///< a package failed its size, digest or signature checks
};

/// The one exception orchestration code throws; its message is written for the user and
/// names the operation, the path and the reason.
class Error : public std::runtime_error {
  public:
    explicit Error(std::string message, ErrorKind kind = ErrorKind::failure)
        : std::runtime_error(std::move(message)), m_kind(kind) {}

    /// The category of the failure.
    ErrorKind kind() const noexcept { return m_kind; }

  private:
    ErrorKind m_kind;
};

/// `strerror(errnum)` as a std::string.
std::string errno_text(int errnum);

/// An Error for a failed system call: "<op> <path>: <strerror(errnum)>".
Error io_error(std::string_view op, std::string_view path, int errnum);

} // namespace skforge::support
