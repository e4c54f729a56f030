#include "skforge/support/temp_dir.hpp"

#include "skforge/support/error.hpp"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace skforge::support {

TempDir::TempDir(const std::string& parent, std::string_view prefix) {
    std::string tmpl = parent + "/" + std::string(prefix) + "XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr)
        throw io_error("cannot create a scratch directory in", parent, errno);
    m_path = buf.data();
}

TempDir::~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
}

std::string temp_parent() {
    const char* dir = std::getenv("TMPDIR");
    return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

} // namespace skforge::support
