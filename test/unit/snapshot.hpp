// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "temp_dir.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <sys/stat.h>

namespace skforge::test {

/// Everything under `root` (not following symlinks): path -> type, mode and content or link
/// target. Two equal snapshots mean the trees are byte-identical.
inline std::map<std::string, std::string> snapshot(const std::string& root) {
    namespace fs = std::filesystem;
    std::map<std::string, std::string> out;
    if (!fs::exists(fs::symlink_status(root)))
        return out;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
         ++it) {
        const auto& p = it->path();
        struct stat st {};
        ::lstat(p.c_str(), &st);
        std::string rel = fs::relative(p, root).string();
        std::string v = std::to_string(st.st_mode);
        if (S_ISLNK(st.st_mode))
            v += " -> " + fs::read_symlink(p).string();
        else if (S_ISREG(st.st_mode))
            v += " " + read_text(p.string());
        out[rel] = v;
    }
    return out;
}

} // namespace skforge::test
