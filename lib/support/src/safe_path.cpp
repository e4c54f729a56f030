// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/safe_path.hpp"

#include "skforge/support/error.hpp"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <sys/stat.h>

namespace skforge::support {

namespace fs = std::filesystem;

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '+' || c == '-';
}

std::optional<std::string> check_name_component(std::string_view name) {
    if (name.empty())
        return "is empty";
    if (name.size() > k_max_component_bytes)
        return "is longer than " + std::to_string(k_max_component_bytes) + " bytes";
    if (name.find('/') != std::string_view::npos)
        return "contains '/'";
    if (name.find('\0') != std::string_view::npos)
        return "contains a NUL byte";
    if (name == "." || name == "..")
        return "is '.' or '..'";
    char first = name.front();
    if (first == '.' || first == '+' || first == '-')
        return "must start with a letter, digit or '_'";
    if (!std::all_of(name.begin(), name.end(), is_name_char))
        return "may contain only letters, digits and '._+-'";
    return std::nullopt;
}

std::optional<std::string> check_relative_path(std::string_view path) {
    if (path.empty())
        return "is empty";
    if (path.front() == '/')
        return "is absolute";
    if (path.find('\0') != std::string_view::npos)
        return "contains a NUL byte";
    std::size_t start = 0;
    while (true) {
        std::size_t slash = path.find('/', start);
        std::string_view comp = path.substr(start, slash - start);
        if (comp.empty())
            return "has an empty component";
        if (comp == "..")
            return "has a '..' component";
        if (comp == ".")
            return "has a '.' component";
        if (comp.size() > k_max_component_bytes)
            return "has a component longer than " + std::to_string(k_max_component_bytes) +
                   " bytes";
        if (slash == std::string_view::npos)
            return std::nullopt;
        start = slash + 1;
    }
}

namespace {

bool is_within(const fs::path& root, const fs::path& p) {
    auto [r, _] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
    return r == root.end();
}

// Refuses a symbolic link among the existing parts of `base`/`relative` that resolves out of
// `base` (or does not resolve: what a dangling link points to may be created outside).
void check_links(const std::string& base, std::string_view relative) {
    fs::path at = base;
    for (const auto& comp : fs::path(relative)) {
        at /= comp;
        struct stat st {};
        if (::lstat(at.c_str(), &st) != 0) {
            if (errno == ENOENT || errno == ENOTDIR)
                return; // the rest is created, not followed
            throw io_error("cannot check", at.string(), errno);
        }
        if (!S_ISLNK(st.st_mode))
            continue;
        std::error_code ec;
        fs::path root = fs::canonical(base, ec);
        if (ec)
            throw io_error("cannot resolve", base, ec.value());
        fs::path target = fs::canonical(at, ec);
        if (ec || !is_within(root, target))
            throw Error("refusing to write under '" + at.string() +
                        "': it is a symbolic link leading out of '" + base + "'");
    }
}

} // namespace

std::string checked_beneath(const std::string& base, std::string_view relative) {
    if (auto bad = check_relative_path(relative))
        throw Error("refusing to write '" + printable(relative) + "' under '" + base +
                    "': the path " + *bad);
    check_links(base, relative);
    return std::string(relative);
}

std::string path_beneath(const std::string& base, std::string_view relative) {
    return base + "/" + checked_beneath(base, relative);
}

} // namespace skforge::support
