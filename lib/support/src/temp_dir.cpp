// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/temp_dir.hpp"

#include "skforge/support/error.hpp"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace skforge::support {

namespace {

std::string make_temp_dir(const std::string& parent, std::string_view prefix) {
    std::string tmpl = parent + "/" + std::string(prefix) + temp_tag() + ".XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr)
        throw io_error("cannot create a scratch directory in", parent, errno);
    return buf.data();
}

} // namespace

TempDir::TempDir(const std::string& parent, std::string_view prefix)
    : m_path(make_temp_dir(parent, prefix)), m_registration(m_path) {}

TempDir::~TempDir() {
    std::error_code ec;
    if (!m_path.empty())
        std::filesystem::remove_all(m_path, ec);
}

void TempDir::release() {
    m_path.clear();
    m_registration.release();
}

std::string temp_parent() {
    const char* dir = std::getenv("TMPDIR");
    return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

} // namespace skforge::support
