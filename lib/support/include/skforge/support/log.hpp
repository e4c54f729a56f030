// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace skforge::support {

/// Where the library's messages for the user go; the app decides (stdout, stderr, quiet, JSON).
class Log {
  public:
    virtual ~Log() = default;
    /// Progress and results.
    virtual void info(const std::string& message) = 0;
    /// Something the user should look at that did not stop the operation.
    virtual void warn(const std::string& message) = 0;
};

/// Drops everything.
class NullLog final : public Log {
  public:
    void info(const std::string&) override {}
    void warn(const std::string&) override {}
};

} // namespace skforge::support
