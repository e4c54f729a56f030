#include "skforge/install/safe_fs.hpp"

#include "skforge/support/error.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace skforge::install {

using support::Error;
using support::UniqueFd;

namespace {

std::string joined(const Dir& dir, std::string_view rel) {
    return dir.path + "/" + std::string(rel);
}

bool openat2_available() {
    static const bool available = [] {
        const char* env = std::getenv("SKFORGE_NO_OPENAT2");
        if (env != nullptr && std::string_view(env) == "1")
            return false;
        open_how how{};
        how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
        long fd = ::syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof how);
        if (fd >= 0) {
            ::close(static_cast<int>(fd));
            return true;
        }
        return errno != ENOSYS && errno != EPERM;
    }();
    return available;
}

// Why opening `comp` failed, for a person.
Error refusal(const Dir& dir, std::string_view upto, int err) {
    std::string at = joined(dir, upto);
    if (err == ELOOP || err == EXDEV)
        return Error("refusing '" + at +
                     "': it is a symbolic link (nothing below the install "
                     "root is followed); remove it and retry");
    if (err == ENOTDIR)
        return Error("refusing '" + at + "': a component is not a directory");
    return support::io_error("cannot open", at, err);
}

// One component at a time, never following a symlink.
UniqueFd walk(const Dir& dir, std::string_view rel, int flags, mode_t mode) {
    UniqueFd cur;
    int base = dir.fd.get();
    std::size_t start = 0;
    for (;;) {
        std::size_t slash = rel.find('/', start);
        std::string comp(rel.substr(start, slash == std::string_view::npos ? rel.size() - start
                                                                           : slash - start));
        bool last = slash == std::string_view::npos;
        int f = last ? (flags | O_NOFOLLOW | O_CLOEXEC)
                     : (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int fd = ::openat(base, comp.c_str(), f, mode);
        if (fd < 0) {
            int err = errno;
            if (err == ENOENT && last && !(flags & O_CREAT))
                return {};
            if (err == ENOENT && !last)
                return {};
            // O_NOFOLLOW on a symlink gives ELOOP; O_DIRECTORY on one gives ENOTDIR.
            struct stat st {};
            if (::fstatat(base, comp.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
                err = ELOOP;
            throw refusal(dir, rel.substr(0, last ? rel.size() : slash), err);
        }
        cur.reset(fd);
        base = fd;
        if (last)
            return cur;
        start = slash + 1;
    }
}

} // namespace

bool using_fallback_walk() {
    return !openat2_available();
}

UniqueFd open_beneath(const Dir& dir, std::string_view rel, int flags, mode_t mode) {
    if (!openat2_available())
        return walk(dir, rel, flags, mode);
    open_how how{};
    how.flags = static_cast<__u64>(static_cast<unsigned>(flags | O_NOFOLLOW | O_CLOEXEC));
    how.mode = (flags & O_CREAT) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    std::string path(rel);
    for (;;) {
        long fd = ::syscall(SYS_openat2, dir.fd.get(), path.c_str(), &how, sizeof how);
        if (fd >= 0)
            return UniqueFd(static_cast<int>(fd));
        if (errno == EINTR || errno == EAGAIN)
            continue;
        if (errno == ENOENT) {
            // A missing parent or final component: only an error when creating.
            if (!(flags & O_CREAT))
                return {};
            throw support::io_error("cannot create", joined(dir, rel), errno);
        }
        // Name the offending component: the walk finds it and throws with its path.
        int err = errno;
        walk(dir, rel, flags & ~O_CREAT, mode);
        throw refusal(dir, rel, err);
    }
}

std::optional<Dir> open_dir_beneath(const Dir& dir, std::string_view rel) {
    UniqueFd fd = open_beneath(dir, rel, O_RDONLY | O_DIRECTORY);
    if (!fd)
        return std::nullopt;
    return Dir{std::move(fd), joined(dir, rel)};
}

Dir ensure_dir(const Dir& dir, const std::string& name, mode_t mode) {
    if (::mkdirat(dir.fd.get(), name.c_str(), mode) != 0 && errno != EEXIST)
        throw support::io_error("cannot create directory", joined(dir, name), errno);
    auto sub = open_dir_beneath(dir, name);
    if (!sub)
        throw Error("'" + joined(dir, name) + "' disappeared while it was being opened");
    return std::move(*sub);
}

std::optional<struct stat> stat_at(const Dir& dir, const std::string& name) {
    struct stat st {};
    if (::fstatat(dir.fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
        return st;
    if (errno == ENOENT)
        return std::nullopt;
    throw support::io_error("cannot stat", joined(dir, name), errno);
}

std::vector<std::string> list_dir(const Dir& dir) {
    return support::list_directory(dir.fd.get(), dir.path);
}

namespace {

UniqueFd open_subdir(int dirfd, const std::string& name, const std::string& shown) {
    int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        throw support::io_error("cannot open directory", shown, errno);
    return UniqueFd(fd);
}

// Empties the directory `cur` of everything but subdirectories; returns the first subdirectory.
std::optional<std::string> remove_files_in(int cur, const std::string& shown) {
    for (const auto& child : support::list_directory(cur, shown)) {
        struct stat st {};
        if (::fstatat(cur, child.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT)
                continue;
            throw support::io_error("cannot stat", shown + "/" + child, errno);
        }
        if (S_ISDIR(st.st_mode))
            return child;
        if (::unlinkat(cur, child.c_str(), 0) != 0 && errno != ENOENT)
            throw support::io_error("cannot remove", shown + "/" + child, errno);
    }
    return std::nullopt;
}

} // namespace

void remove_tree(const Dir& dir, const std::string& name) {
    auto st = stat_at(dir, name);
    if (!st)
        return;
    if (!S_ISDIR(st->st_mode)) {
        unlink_at(dir, name);
        return;
    }
    // Depth first with one descriptor in all, whatever the depth: descend by name with
    // O_NOFOLLOW, climb back through "..", and check that each parent reached is the directory
    // we came from (by device and inode), so a directory moved meanwhile stops the removal.
    struct Level {
        dev_t dev;
        ino_t ino;
        std::string name;
    };
    std::vector<Level> levels{{st->st_dev, st->st_ino, name}};
    std::string shown = joined(dir, name);
    UniqueFd cur = open_subdir(dir.fd.get(), name, shown);
    for (;;) {
        if (auto sub = remove_files_in(cur.get(), shown)) {
            shown += "/" + *sub;
            UniqueFd next = open_subdir(cur.get(), *sub, shown);
            struct stat sst {};
            if (::fstat(next.get(), &sst) != 0)
                throw support::io_error("cannot stat", shown, errno);
            levels.push_back({sst.st_dev, sst.st_ino, *sub});
            cur = std::move(next);
            continue;
        }
        Level done = std::move(levels.back());
        levels.pop_back();
        shown.resize(shown.size() - done.name.size() - 1);
        if (levels.empty())
            cur.reset();
        else
            cur = open_subdir(cur.get(), "..", shown);
        int parent = levels.empty() ? dir.fd.get() : cur.get();
        struct stat pst {};
        if (!levels.empty() && (::fstat(parent, &pst) != 0 || pst.st_dev != levels.back().dev ||
                                pst.st_ino != levels.back().ino))
            throw Error("'" + shown + "' was moved while it was being removed; stopped");
        if (::unlinkat(parent, done.name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
            if (errno != ENOTEMPTY && errno != EEXIST)
                throw support::io_error("cannot remove directory", shown + "/" + done.name, errno);
            // Something appeared meanwhile: go back down and empty it again.
            if (levels.empty()) {
                remove_tree(dir, name);
                return;
            }
            shown += "/" + done.name;
            cur = open_subdir(parent, done.name, shown);
            levels.push_back(std::move(done));
            continue;
        }
        if (levels.empty())
            return;
    }
}

void unlink_at(const Dir& dir, const std::string& name) {
    if (::unlinkat(dir.fd.get(), name.c_str(), 0) != 0 && errno != ENOENT)
        throw support::io_error("cannot remove", joined(dir, name), errno);
}

void sync_dir(const Dir& dir) {
    if (::fsync(dir.fd.get()) != 0 && errno != EINVAL)
        throw support::io_error("cannot fsync directory", dir.path, errno);
}

void write_file_at(const Dir& dir, const std::string& name, std::string_view content, mode_t mode) {
    if (auto st = stat_at(dir, name); st && !S_ISREG(st->st_mode))
        throw Error("refusing to replace '" + joined(dir, name) + "': it is " +
                    (S_ISLNK(st->st_mode) ? "a symbolic link" : "not a regular file"));
    std::string tmp = "." + name + ".tmp." + std::to_string(::getpid());
    int fd = ::openat(dir.fd.get(), tmp.c_str(),
                      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) {
        unlink_at(dir, tmp); // left by a killed process with our pid; ours to remove
        fd = ::openat(dir.fd.get(), tmp.c_str(),
                      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    }
    if (fd < 0)
        throw support::io_error("cannot create", joined(dir, tmp), errno);
    UniqueFd guard(fd);
    try {
        support::write_all(fd, content, joined(dir, tmp));
        if (::fchmod(fd, mode) != 0 || ::fsync(fd) != 0)
            throw support::io_error("cannot finish", joined(dir, tmp), errno);
        if (::renameat(dir.fd.get(), tmp.c_str(), dir.fd.get(), name.c_str()) != 0)
            throw support::io_error("cannot rename into place", joined(dir, name), errno);
    } catch (...) {
        ::unlinkat(dir.fd.get(), tmp.c_str(), 0);
        throw;
    }
    sync_dir(dir);
}

bool is_temporary_name(std::string_view name) {
    return name.starts_with('.') && name.find(".tmp.") != std::string_view::npos;
}

std::optional<std::string> read_file_at(const Dir& dir, const std::string& name,
                                        std::uint64_t max_bytes) {
    UniqueFd fd = open_beneath(dir, name, O_RDONLY | O_NONBLOCK);
    if (!fd)
        return std::nullopt;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        throw support::io_error("cannot stat", joined(dir, name), errno);
    if (!S_ISREG(st.st_mode))
        throw Error("refusing '" + joined(dir, name) + "': not a regular file");
    if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
        throw Error("refusing '" + joined(dir, name) + "': larger than " +
                    std::to_string(max_bytes) + " bytes");
    std::string out(static_cast<std::size_t>(st.st_size), '\0');
    auto n = support::pread_full(fd.get(),
                                 std::span(reinterpret_cast<std::uint8_t*>(out.data()), out.size()),
                                 0, joined(dir, name));
    out.resize(n);
    return out;
}

} // namespace skforge::install
