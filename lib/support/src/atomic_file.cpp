// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/atomic_file.hpp"

#include "skforge/support/error.hpp"
#include "skforge/support/safe_path.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace skforge::support {

namespace {

// Six characters for a temporary's name, different on every call.
std::string random_suffix() {
    static const char k_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    thread_local std::mt19937_64 rng(std::random_device{}());
    std::string s(6, 'x');
    for (char& c : s)
        c = k_chars[rng() % (sizeof k_chars - 1)];
    return s;
}

} // namespace

AtomicFile::AtomicFile(std::string path, mode_t mode)
    : m_path(std::move(path)), m_name(base_name(m_path)), m_mode(mode) {
    std::string dir = parent_directory(m_path);
    m_dir.reset(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!m_dir) {
        int err = errno;
        if (err == ENOENT || err == ENOTDIR)
            throw Error("cannot write '" + m_path + "': the directory '" + dir +
                        "' does not exist (" + std::strerror(err) + "); create it first");
        throw io_error("cannot create a temporary file for", m_path, err);
    }
    create(dir);
}

AtomicFile::AtomicFile(int dir_fd, const std::string& dir, std::string name, mode_t mode)
    : m_path(dir + "/" + name), m_name(std::move(name)), m_mode(mode) {
    m_dir.reset(::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0));
    if (!m_dir)
        throw io_error("cannot create a temporary file for", m_path, errno);
    create(dir);
}

// Creates the temporary `.<name>.tmp.<tag>.XXXXXX` in m_dir, never through a symbolic link; a
// name too long to leave room for the rest is cut short, so that every file name skforge may
// write can be written.
void AtomicFile::create(const std::string& dir) {
    const std::string tail = ".tmp." + temp_tag() + ".";
    const std::size_t room = k_max_component_bytes - 1 - tail.size() - 6;
    const std::string stem = "." + m_name.substr(0, room) + tail;
    for (int attempt = 0; !m_fd; ++attempt) {
        m_temp_name = stem + random_suffix();
        m_fd.reset(::openat(m_dir.get(), m_temp_name.c_str(),
                            O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
        if (!m_fd && (errno != EEXIST || attempt == 100))
            throw io_error("cannot create a temporary file for", m_path, errno);
    }
    m_temp = dir + "/" + m_temp_name;
    m_registration.emplace(m_temp);
}

AtomicFile::~AtomicFile() {
    if (!m_committed && m_fd)
        ::unlinkat(m_dir.get(), m_temp_name.c_str(), 0);
}

void AtomicFile::write(std::span<const std::uint8_t> data) {
    write_all(m_fd.get(), data, m_temp);
}

void AtomicFile::write(std::string_view text) {
    write_all(m_fd.get(), text, m_temp);
}

void AtomicFile::commit(Durability durability) {
    bool sync = durability == Durability::fsync;
    if (::fchmod(m_fd.get(), m_mode) != 0)
        throw io_error("cannot set the mode of", m_temp, errno);
    if (sync && ::fsync(m_fd.get()) != 0)
        throw io_error("cannot fsync", m_temp, errno);
    if (::renameat(m_dir.get(), m_temp_name.c_str(), m_dir.get(), m_name.c_str()) != 0)
        throw io_error("cannot rename into place", m_path, errno);
    m_committed = true;
    m_registration.reset();
    m_fd.reset();
    if (sync && ::fsync(m_dir.get()) != 0 && errno != EINVAL)
        throw io_error("cannot fsync directory", parent_directory(m_path), errno);
}

} // namespace skforge::support
