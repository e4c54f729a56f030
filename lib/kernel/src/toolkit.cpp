// SPDX-License-Identifier: Apache-2.0
#include "skforge/kernel/toolkit.hpp"

#include "skforge/support/file.hpp"

#include <filesystem>
#include <unistd.h>

namespace skforge::kernel {

namespace {

// What a version may hold (package::cann_line's characters).
constexpr std::string_view k_version_chars =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.+-";

// The value of the first `Version=` line of a version.info text that has one, or nullopt. The
// .run's install.sh reads it the same way with shell builtins (install.sh.in), so the two agree
// on every file.
std::optional<std::string> version_line(const std::string& text) {
    std::size_t start = 0;
    while (start < text.size()) {
        auto end = text.find('\n', start);
        std::string_view line(text.data() + start,
                              (end == std::string::npos ? text.size() : end) - start);
        start = end == std::string::npos ? text.size() : end + 1;
        if (!line.starts_with("Version="))
            continue;
        std::string_view value = version_prefix(line.substr(8));
        if (!value.empty())
            return std::string(value);
    }
    return std::nullopt;
}

} // namespace

std::string_view version_prefix(std::string_view text) {
    return text.substr(0, text.find_first_not_of(k_version_chars));
}

std::optional<std::string> toolkit_version(const std::string& ascend_home, std::string* from) {
    if (ascend_home.empty())
        return std::nullopt;
    for (const char* name : {"/compiler/version.info", "/version.info"}) {
        std::string path = ascend_home + name;
        // As install.sh's `[ -f ] && [ -r ]`: a FIFO, a directory, a dangling link or a file
        // this user cannot read is no version.info.
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec) || ::access(path.c_str(), R_OK) != 0)
            continue;
        if (auto v = version_line(support::read_file(path))) {
            if (from != nullptr)
                *from = path;
            return v;
        }
    }
    return std::nullopt;
}

} // namespace skforge::kernel
