// SPDX-License-Identifier: Apache-2.0
#include "skforge/kernel/toolkit.hpp"

#include "skforge/support/file.hpp"

#include <filesystem>

namespace skforge::kernel {

namespace {

// The value of the `Version=` line of a version.info text, or nullopt.
std::optional<std::string> version_line(const std::string& text) {
    std::size_t start = 0;
    while (start < text.size()) {
        auto end = text.find('\n', start);
        std::string line = text.substr(start, end == std::string::npos ? end : end - start);
        start = end == std::string::npos ? text.size() : end + 1;
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (line.rfind("Version=", 0) == 0 && line.size() > 8)
            return line.substr(8);
    }
    return std::nullopt;
}

} // namespace

std::optional<std::string> toolkit_version(const std::string& ascend_home, std::string* from) {
    if (ascend_home.empty())
        return std::nullopt;
    for (const char* name : {"/compiler/version.info", "/version.info"}) {
        std::string path = ascend_home + name;
        std::error_code ec;
        if (!std::filesystem::exists(path, ec))
            continue;
        if (auto v = version_line(support::read_file(path, {1 << 20}))) {
            if (from != nullptr)
                *from = path;
            return v;
        }
    }
    return std::nullopt;
}

} // namespace skforge::kernel
