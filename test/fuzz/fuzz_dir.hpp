// SPDX-License-Identifier: Apache-2.0
#pragma once

// A private directory for fuzz targets that read what they are given from disk, made once per
// process under TMPDIR and removed when it exits.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace skforge::fuzz {

/// The process's directory (created on first use).
inline const std::string& scratch_dir() {
    static const std::string dir = [] {
        const char* tmp = std::getenv("TMPDIR");
        std::string tmpl =
            std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/skforge-fuzz.XXXXXX";
        if (::mkdtemp(tmpl.data()) == nullptr) {
            std::perror("mkdtemp");
            std::abort();
        }
        static const std::string removed_at_exit = tmpl;
        std::atexit([] {
            std::error_code ec;
            std::filesystem::remove_all(removed_at_exit, ec);
        });
        return tmpl;
    }();
    return dir;
}

/// Writes `bytes` to `path` (creating its directory), replacing whatever is there.
inline void put(const std::string& path, std::string_view bytes) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::error_code ec;
    std::filesystem::remove(path, ec);
    std::ofstream(path, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// `text` cut at the first line "---8<---": the part before it and the part after it (empty
/// when there is none). How a target takes two files from one input.
inline std::pair<std::string_view, std::string_view> split_input(std::string_view text) {
    constexpr std::string_view k_cut = "\n---8<---\n";
    auto at = text.find(k_cut);
    if (at == std::string_view::npos)
        return {text, {}};
    return {text.substr(0, at), text.substr(at + k_cut.size())};
}

} // namespace skforge::fuzz
