// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/file.hpp"

#include "skforge/support/error.hpp"

#include <algorithm>
#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace skforge::support {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
    if (this != &other)
        reset(other.release());
    return *this;
}

int UniqueFd::release() noexcept {
    int fd = m_fd;
    m_fd = -1;
    return fd;
}

void UniqueFd::reset(int fd) noexcept {
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = fd;
}

UniqueFd open_read(const std::string& path, bool follow) {
    int flags = O_RDONLY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
    int fd = ::open(path.c_str(), flags);
    if (fd < 0)
        throw io_error("cannot open", path, errno);
    return UniqueFd(fd);
}

namespace {

// The size of the regular file open at `fd`, or 0 (not regular, or fstat failed).
std::size_t regular_size(const UniqueFd& fd) {
    struct stat st {};
    return ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) ? static_cast<std::size_t>(st.st_size)
                                                              : 0;
}

// Reads what is left of the file open at `fd`, expecting about `size` bytes. Straight into the
// string (a graph can be tens of megabytes: growing it would copy it several times); a file that
// grows meanwhile is read to its end all the same.
std::string read_rest(const UniqueFd& fd, std::size_t size, const std::string& path) {
    std::string out(size + 1, '\0');
    std::size_t have = 0;
    for (;;) {
        if (have == out.size())
            out.resize(out.size() * 2 + 65536);
        ssize_t n = ::read(fd.get(), out.data() + have, out.size() - have);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw io_error("cannot read", path, errno);
        }
        if (n == 0)
            break;
        have += static_cast<std::size_t>(n);
    }
    out.resize(have);
    return out;
}

} // namespace

std::string read_file(const std::string& path) {
    UniqueFd fd = open_read(path);
    return read_rest(fd, regular_size(fd), path);
}

SharedText share_text(std::string text) {
    struct Owned {
        std::string bytes;
        std::string_view view;
    };
    auto owned = std::make_shared<Owned>();
    owned->bytes = std::move(text);
    owned->view = owned->bytes;
    return {owned, &owned->view};
}

SharedText read_file_shared(const std::string& path) {
    constexpr std::size_t k_map_from = 1 << 20; // smaller files are read: mapping costs more
    UniqueFd fd = open_read(path);
    const std::size_t size = regular_size(fd);
    if (size < k_map_from)
        return share_text(read_rest(fd, size, path));
    struct Mapping {
        void* addr = nullptr;
        std::size_t size = 0;
        std::string_view view;
        Mapping() = default;
        Mapping(const Mapping&) = delete;
        Mapping& operator=(const Mapping&) = delete;
        ~Mapping() {
            if (addr != nullptr)
                ::munmap(addr, size);
        }
    };
    auto m = std::make_shared<Mapping>();
    m->size = size;
    void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
    if (addr == MAP_FAILED)
        return share_text(read_rest(fd, size, path));
    m->addr = addr;
    m->view = std::string_view(static_cast<const char*>(addr), m->size);
    return {m, &m->view};
}

std::size_t pread_full(int fd, std::span<std::uint8_t> buf, std::uint64_t offset,
                       std::string_view path) {
    std::size_t done = 0;
    while (done < buf.size()) {
        ssize_t n =
            ::pread(fd, buf.data() + done, buf.size() - done, static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw io_error("cannot read", path, errno);
        }
        if (n == 0)
            break;
        done += static_cast<std::size_t>(n);
    }
    return done;
}

void write_all(int fd, std::span<const std::uint8_t> data, std::string_view path) {
    std::size_t done = 0;
    while (done < data.size()) {
        ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw io_error("cannot write", path, errno);
        }
        done += static_cast<std::size_t>(n);
    }
}

void write_all(int fd, std::string_view text, std::string_view path) {
    write_all(fd, std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()), path);
}

std::vector<std::string> list_directory(int dir_fd, const std::string& path) {
    // fdopendir takes ownership, so it gets its own descriptor of the same directory.
    int dup = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* d = dup < 0 ? nullptr : ::fdopendir(dup);
    if (d == nullptr) {
        int err = errno;
        if (dup >= 0)
            ::close(dup);
        throw io_error("cannot list", path, err);
    }
    std::vector<std::string> names;
    while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..")
            names.push_back(std::move(n));
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
}

void fsync_directory(const std::string& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        throw io_error("cannot open directory", dir, errno);
    UniqueFd guard(fd);
    if (::fsync(fd) != 0 && errno != EINVAL)
        throw io_error("cannot fsync directory", dir, errno);
}

std::string parent_directory(const std::string& path) {
    auto pos = path.find_last_of('/');
    if (pos == std::string::npos)
        return ".";
    if (pos == 0)
        return "/";
    return path.substr(0, pos);
}

std::string base_name(const std::string& path) {
    auto pos = path.find_last_of('/');
    return pos == std::string::npos ? path : path.substr(pos + 1);
}

} // namespace skforge::support
