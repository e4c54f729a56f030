// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace skforge::test {

/// A fresh directory under TMPDIR, removed with everything in it on destruction.
class ScopedTempDir {
  public:
    ScopedTempDir() {
        // No '.' in the name: CANN's runtime (and the opbase-logic reader, opbase_reader.hpp)
        // finds a kernel's JSON by cutting its path at the first ".o", so a directory such as
        // "skforge-test.oXXXXX" (one mkdtemp name in 62) made kernel JSONs unreadable at random.
        std::string tmpl =
            (std::filesystem::temp_directory_path() / "skforge-test-XXXXXX").string();
        std::vector<char> buf(tmpl.begin(), tmpl.end());
        buf.push_back('\0');
        if (::mkdtemp(buf.data()) == nullptr)
            throw std::runtime_error("mkdtemp failed");
        m_path = buf.data();
    }
    ~ScopedTempDir() {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    ScopedTempDir(const ScopedTempDir&) = delete;
    ScopedTempDir& operator=(const ScopedTempDir&) = delete;

    /// The directory's path.
    const std::string& path() const { return m_path; }
    /// `path()/rel`.
    std::string operator/(const std::string& rel) const { return m_path + "/" + rel; }

  private:
    std::string m_path;
};

/// Writes `text` to `path`, creating parent directories.
inline void write_text(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

/// The whole content of `path`.
inline std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace skforge::test
