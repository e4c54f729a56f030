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

// What a file that is not a regular one is, for messages.

Error too_large(const std::string& path, std::uint64_t max_bytes) {
    return Error("cannot read '" + path + "': larger than the limit of " +
                 std::to_string(max_bytes) + " bytes");
}

// The size of the regular file open at `fd`.
std::size_t file_size(const UniqueFd& fd, const std::string& path) {
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        throw io_error("cannot stat", path, errno);
    return static_cast<std::size_t>(st.st_size);
}

// Reads what is left of the file open at `fd`, expecting about `size` bytes and never more
// than `max_bytes`. Straight into the string (a graph can be tens of megabytes: growing it would
// copy it several times); a file that grows meanwhile is read to its end all the same.
std::string read_rest(const UniqueFd& fd, std::size_t size, const std::string& path,
                      std::uint64_t max_bytes) {
    // One byte more than the limit tells a file over it from one exactly at it.
    const std::uint64_t cap = max_bytes == UINT64_MAX ? max_bytes : max_bytes + 1;
    std::string out(std::min<std::uint64_t>(size + 1, cap), '\0');
    std::size_t have = 0;
    for (;;) {
        if (have == out.size()) {
            if (have > max_bytes)
                throw too_large(path, max_bytes);
            out.resize(std::min<std::uint64_t>(out.size() * 2 + 65536, cap));
        }
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
    if (have > max_bytes)
        throw too_large(path, max_bytes);
    out.resize(have);
    return out;
}

} // namespace

UniqueFd open_regular_at(int dir_fd, const std::string& name, const std::string& path,
                         ReadLimits limits) {
    int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
                (limits.follow == Follow::no ? O_NOFOLLOW : 0);
    UniqueFd fd(::openat(dir_fd, name.c_str(), flags));
    if (!fd) {
        int err = errno;
        struct stat st {};
        if (err == ELOOP && limits.follow == Follow::no &&
            ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
            throw Error("cannot read '" + path + "': it is a symbolic link");
        throw io_error("cannot open", path, err);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        throw io_error("cannot stat", path, errno);
    if (!S_ISREG(st.st_mode))
        throw Error("cannot read '" + path + "': " + file_kind(st.st_mode) +
                    ", not a regular file");
    if (static_cast<std::uint64_t>(st.st_size) > limits.max_bytes)
        throw too_large(path, limits.max_bytes);
    return fd;
}

UniqueFd open_regular(const std::string& path, ReadLimits limits) {
    return open_regular_at(AT_FDCWD, path, path, limits);
}

std::string read_file_at(int dir_fd, const std::string& name, const std::string& path,
                         ReadLimits limits) {
    UniqueFd fd = open_regular_at(dir_fd, name, path, limits);
    return read_rest(fd, file_size(fd, path), path, limits.max_bytes);
}

std::string read_file(const std::string& path, ReadLimits limits) {
    return read_file_at(AT_FDCWD, path, path, limits);
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

SharedText read_file_shared(const std::string& path, ReadLimits limits) {
    constexpr std::size_t k_map_from = 1 << 20; // smaller files are read: mapping costs more
    UniqueFd fd = open_regular(path, limits);
    const std::size_t size = file_size(fd, path);
    if (size < k_map_from)
        return share_text(read_rest(fd, size, path, limits.max_bytes));
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
        return share_text(read_rest(fd, size, path, limits.max_bytes));
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

namespace {

// The names in the directory open at `dir_fd` (without "." and ".."), sorted, of the entries
// `keep` takes (readdir's entry, with its name).
template <class Keep>
std::vector<std::string> read_directory(int dir_fd, const std::string& path, Keep keep) {
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
        if (n != "." && n != ".." && keep(*e, n))
            names.push_back(std::move(n));
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
}

} // namespace

std::vector<std::string> list_directory(int dir_fd, const std::string& path) {
    return read_directory(dir_fd, path, [](const dirent&, const std::string&) { return true; });
}

std::vector<std::string> list_subdirectories(int dir_fd, const std::string& path) {
    return read_directory(dir_fd, path, [&](const dirent& e, const std::string& n) {
        if (e.d_type != DT_UNKNOWN)
            return e.d_type == DT_DIR;
        struct stat st {};
        return ::fstatat(dir_fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    });
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

const char* file_kind(mode_t mode) {
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISLNK(mode))
        return "a symbolic link";
    return S_ISREG(mode) ? "a regular file" : "not a regular file";
}

} // namespace skforge::support
