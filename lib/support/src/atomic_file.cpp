// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/atomic_file.hpp"

#include "skforge/support/error.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace skforge::support {

AtomicFile::AtomicFile(std::string path, mode_t mode) : m_path(std::move(path)), m_mode(mode) {
    std::string dir = parent_directory(m_path);
    std::string tmpl = dir + "/." + base_name(m_path) + ".tmp." + temp_tag() + ".XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    int fd = ::mkostemp(buf.data(), O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        struct stat st {};
        if ((err == ENOENT || err == ENOTDIR) && ::stat(dir.c_str(), &st) != 0)
            throw Error("cannot write '" + m_path + "': the directory '" + dir +
                        "' does not exist (" + std::strerror(err) + "); create it first");
        throw io_error("cannot create a temporary file for", m_path, err);
    }
    m_fd.reset(fd);
    m_temp.assign(buf.data());
    m_registration.emplace(m_temp);
}

AtomicFile::~AtomicFile() {
    if (!m_committed && !m_temp.empty())
        ::unlink(m_temp.c_str());
}

void AtomicFile::write(std::span<const std::uint8_t> data) {
    write_all(m_fd.get(), data, m_temp);
}

void AtomicFile::write(std::string_view text) {
    write_all(m_fd.get(), text, m_temp);
}

void AtomicFile::commit() {
    if (::fchmod(m_fd.get(), m_mode) != 0)
        throw io_error("cannot set the mode of", m_temp, errno);
    if (::fsync(m_fd.get()) != 0)
        throw io_error("cannot fsync", m_temp, errno);
    if (::rename(m_temp.c_str(), m_path.c_str()) != 0)
        throw io_error("cannot rename into place", m_path, errno);
    m_committed = true;
    m_registration.reset();
    m_fd.reset();
    fsync_directory(parent_directory(m_path));
}

} // namespace skforge::support
