// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/path_rules.hpp"

#include "skforge/support/safe_path.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sys/stat.h>

namespace skforge::package {

std::optional<std::string> check_utf8(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        std::uint32_t cp = 0;
        std::size_t len = support::utf8_sequence(text, i, cp);
        if (len == 0)
            return "is not valid UTF-8 (byte " + std::to_string(i) + ")";
        i += len;
    }
    return std::nullopt;
}

std::optional<std::string> check_entry_path(std::string_view path) {
    if (path.size() > k_max_path_bytes)
        return "is longer than " + std::to_string(k_max_path_bytes) + " bytes";
    if (auto bad = support::check_relative_path(path))
        return bad;
    for (char c : path)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            return "contains a control character";
    if (auto bad = check_utf8(path))
        return bad;
    std::size_t depth = 1 + static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
    if (depth > k_max_path_depth)
        return "has more than " + std::to_string(k_max_path_depth) + " components";
    return std::nullopt;
}

std::optional<std::string> check_package_name(std::string_view name) {
    if (auto bad = support::check_name_component(name))
        return bad;
    if (name.size() > k_max_package_name_bytes)
        return "is longer than " + std::to_string(k_max_package_name_bytes) +
               " bytes (the installers' stage directory .skforge-stage-<name>.old.XXXXXX must "
               "fit in one 255-byte file name)";
    for (auto reserved : k_reserved_names)
        if (name == reserved)
            return "is reserved: ai_core/" + std::string(reserved) +
                   " belongs to the install tree, not to a package";
    return std::nullopt;
}

std::optional<std::string> check_kernel_package_name(std::string_view name) {
    if (name.find(".o") == std::string_view::npos)
        return std::nullopt;
    return "has '.o' in it: every binPath of the package (" + std::string(name) +
           "/<soc dir>/<OpType>/<kernel>.o) would have '.o' before its end, and CANN's runtime "
           "cuts a binPath at its first '.o' to find the kernel's JSON, so it would read the "
           "wrong file; choose a name without '.o'";
}

std::optional<std::string> check_soc_dir_name(std::string_view name) {
    if (name.empty() || name.size() > 64)
        return "must be 1 to 64 bytes long";
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return "may contain only lower-case letters, digits, '_' and '-' (a SoC family such "
                   "as ascend910b)";
    return std::nullopt;
}

std::optional<std::string> check_label(std::string_view text, bool allow_empty) {
    if (text.empty())
        return allow_empty ? std::nullopt : std::optional<std::string>("is empty");
    if (text.size() > 64)
        return "is longer than 64 bytes";
    for (char c : text)
        if (!support::is_name_char(c) && c != '~')
            return "may contain only letters, digits and '._+~-'";
    return std::nullopt;
}

std::optional<std::string> check_source_mode(mode_t mode) {
    if (mode & S_ISUID)
        return "is setuid";
    if (mode & S_ISGID)
        return "is setgid";
    if (mode & S_ISVTX)
        return "is sticky";
    if (mode & S_IWGRP)
        return "is group-writable";
    if (mode & S_IWOTH)
        return "is world-writable";
    return std::nullopt;
}

mode_t normalized_mode(EntryType type, mode_t source_mode) {
    if (type == EntryType::directory || (source_mode & S_IXUSR))
        return 0755;
    return 0644;
}

bool is_allowed_mode(mode_t mode) {
    return mode == 0644 || mode == 0755;
}

std::string format_mode(mode_t mode) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0%03o", static_cast<unsigned>(mode & 07777));
    return buf;
}

} // namespace skforge::package
