// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/safe_fs.hpp"

#include "skforge/support/error.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
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
        // What openat2's RESOLVE_BENEATH refuses, refused here too (kernels before 5.6 take
        // this walk): a path that climbs out with '..' or starts at '/'.
        if (comp == ".." || (start == 0 && rel.starts_with('/')))
            throw Error("refusing '" + std::string(rel) + "': it leaves " + dir.path +
                        (comp == ".." ? " through '..'" : " (an absolute path)") +
                        "; paths below the install root go down only");
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
    bool created = ::mkdirat(dir.fd.get(), name.c_str(), mode) == 0;
    if (!created && errno != EEXIST) {
        int err = errno;
        if (auto why = err == EACCES || err == EPERM ? write_refusal(dir) : std::nullopt)
            throw Error("cannot create directory '" + joined(dir, name) + "': " + *why);
        throw support::io_error("cannot create directory", joined(dir, name), err);
    }
    auto sub = open_dir_beneath(dir, name);
    if (!sub)
        throw Error("'" + joined(dir, name) + "' disappeared while it was being opened");
    // mkdir applies the umask; the tree's modes are exact (0770 for the run user's group).
    if (created && ::fchmod(sub->fd.get(), mode) != 0)
        throw support::io_error("cannot set the mode of", sub->path, errno);
    return std::move(*sub);
}

namespace {

std::string user_name(uid_t uid) {
    const passwd* pw = ::getpwuid(uid);
    return (pw != nullptr ? std::string(pw->pw_name) + " " : "") + "(uid " + std::to_string(uid) +
           ")";
}

std::string group_name(gid_t gid) {
    const group* gr = ::getgrgid(gid);
    return (gr != nullptr ? std::string(gr->gr_name) + " " : "") + "(gid " + std::to_string(gid) +
           ")";
}

// "user X (uid N) in groups a (gid 1), b (gid 2)" for this process's effective ids.
std::string current_identity() {
    std::string out = "user " + user_name(::geteuid()) + " in group " + group_name(::getegid());
    int n = ::getgroups(0, nullptr);
    std::vector<gid_t> groups(n > 0 ? static_cast<std::size_t>(n) : 0);
    if (n > 0 && ::getgroups(n, groups.data()) == n)
        for (gid_t g : groups)
            if (g != ::getegid())
                out += ", " + group_name(g);
    return out;
}

} // namespace

std::optional<std::string> write_refusal(const Dir& dir) {
    if (::faccessat(dir.fd.get(), ".", W_OK | X_OK, AT_EACCESS) == 0)
        return std::nullopt;
    int err = errno;
    if (err == EROFS)
        return "'" + dir.path + "' is on a read-only file system";
    struct stat st {};
    if (err != EACCES && err != EPERM)
        return "cannot check access to '" + dir.path + "': " + support::errno_text(err);
    if (::fstat(dir.fd.get(), &st) != 0)
        return "'" + dir.path + "' is not writable by " + current_identity();
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    const passwd* pw = ::getpwuid(st.st_uid);
    std::string who = pw != nullptr ? pw->pw_name : "uid " + std::to_string(st.st_uid);
    return "'" + dir.path + "' belongs to user " + user_name(st.st_uid) + " and group " +
           group_name(st.st_gid) + " with mode " + mode + ", and you are " + current_identity() +
           ", who may not write it. Run this as " + who +
           " (the user the tree expects), or as a member of its group once the tree is "
           "group-writable (CANN's run-user trees are 0770), or install under an "
           "--install-path you own";
}

void require_writable_tree(const Dir& dir, int depth) {
    if (auto why = write_refusal(dir))
        throw Error(*why);
    if (depth <= 0)
        return;
    for (const auto& name : support::list_subdirectories(dir.fd.get(), dir.path))
        if (auto sub = open_dir_beneath(dir, name))
            require_writable_tree(*sub, depth - 1);
}

const Dir* ParentDir::open(const Dir& pkg, const std::string& rel) {
    if (!m_dir || rel != m_rel) {
        m_dir.reset();
        m_rel = rel;
        m_dir = open_dir_beneath(pkg, rel);
    }
    return m_dir ? &*m_dir : nullptr;
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

namespace {

// Hands pieces to writev a few dozen at a time; the pieces stay valid until the file is written.
class PieceWriter {
  public:
    PieceWriter(int fd, const std::string& path) : m_fd(fd), m_path(path) {}
    void add(std::string_view s) {
        if (s.empty())
            return;
        m_vec[m_n++] = {const_cast<char*>(s.data()), s.size()};
        if (m_n == m_vec.size())
            flush();
    }
    void flush() {
        std::size_t i = 0;
        while (i < m_n) {
            ssize_t w = ::writev(m_fd, m_vec.data() + i, static_cast<int>(m_n - i));
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                throw support::io_error("cannot write", m_path, errno);
            }
            auto left = static_cast<std::size_t>(w);
            for (; i < m_n && left >= m_vec[i].iov_len; ++i)
                left -= m_vec[i].iov_len;
            if (left > 0) {
                m_vec[i].iov_base = static_cast<char*>(m_vec[i].iov_base) + left;
                m_vec[i].iov_len -= left;
            }
        }
        m_n = 0;
    }

  private:
    int m_fd;
    const std::string& m_path;
    std::array<iovec, 64> m_vec{};
    std::size_t m_n = 0;
};

// Whether `old` is exactly the content the pieces give.
bool same_content(std::string_view old, const Pieces& pieces) {
    std::size_t at = 0;
    bool same = true;
    pieces([&](std::string_view s) {
        same = same && old.substr(at, s.size()) == s;
        at += s.size();
    });
    return same && at == old.size();
}

} // namespace

void write_file_at(const Dir& dir, const std::string& name, std::string_view content, mode_t mode,
                   Sync sync) {
    write_file_at(
        dir, name, content.size(), [&](const auto& emit) { emit(content); }, mode, sync);
}

namespace {

// Replaces `dir/name` by `size` bytes that `fill` writes to a temporary file (a temporary name in
// `dir`, fsync, rename, fsync of `dir`, as `sync` says), unless `same(old)` says the file of that
// size there already holds them.
void replace_file(const Dir& dir, const std::string& name, std::uint64_t size,
                  const std::function<bool(std::string_view)>& same,
                  const std::function<void(int, const std::string&)>& fill, mode_t mode,
                  Sync sync) {
    auto st = stat_at(dir, name);
    if (st && !S_ISREG(st->st_mode))
        throw Error("refusing to replace '" + joined(dir, name) + "': it is " +
                    (S_ISLNK(st->st_mode) ? "a symbolic link" : "not a regular file"));
    // Unchanged content is left alone: rebuilding derived files changes nothing (not even the
    // mode or owner another installing user gave them), so a refused command leaves the tree
    // byte-identical.
    if (st && static_cast<std::uint64_t>(st->st_size) == size) {
        try {
            if (auto old = read_file_at(dir, name, size); old && same(*old))
                return;
        } catch (const Error&) {
            // unreadable for this user: replaced below like any other content
        }
    }
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
        fill(fd, joined(dir, tmp));
        if (::fchmod(fd, mode) != 0 || (sync != Sync::no && ::fsync(fd) != 0))
            throw support::io_error("cannot finish", joined(dir, tmp), errno);
        if (::renameat(dir.fd.get(), tmp.c_str(), dir.fd.get(), name.c_str()) != 0)
            throw support::io_error("cannot rename into place", joined(dir, name), errno);
    } catch (...) {
        ::unlinkat(dir.fd.get(), tmp.c_str(), 0);
        throw;
    }
    if (sync == Sync::yes)
        sync_dir(dir);
}

// Copies `len` bytes at `from` of `source` to the end of `fd`: copy_file_range (the kernel moves
// the bytes, none pass through this process), or pread and write where the file system or
// kernel cannot.
void copy_range(int source, std::uint64_t from, std::uint64_t len, int fd,
                const std::string& shown) {
    auto off = static_cast<off64_t>(from);
    while (len > 0) {
        ssize_t n = ::copy_file_range(source, &off, fd, nullptr, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP))
            break;
        if (n < 0)
            throw support::io_error("cannot copy into", shown, errno);
        if (n == 0)
            throw Error("cannot copy into '" + shown + "': the file it is copied from is shorter");
        len -= static_cast<std::uint64_t>(n);
    }
    std::vector<std::uint8_t> buf(len > 0 ? std::min<std::uint64_t>(len, 1u << 20) : 0);
    while (len > 0) {
        std::span<std::uint8_t> chunk(buf.data(), std::min<std::uint64_t>(len, buf.size()));
        std::size_t n = support::pread_full(source, chunk, static_cast<std::uint64_t>(off), shown);
        if (n < chunk.size())
            throw Error("cannot copy into '" + shown + "': the file it is copied from is shorter");
        support::write_all(fd, chunk, shown);
        off += static_cast<off64_t>(n);
        len -= n;
    }
}

} // namespace

void write_file_at(const Dir& dir, const std::string& name, std::uint64_t size,
                   const Pieces& pieces, mode_t mode, Sync sync) {
    replace_file(
        dir, name, size, [&](std::string_view old) { return same_content(old, pieces); },
        [&](int fd, const std::string& shown) {
            PieceWriter out(fd, shown);
            pieces([&](std::string_view s) { out.add(s); });
            out.flush();
        },
        mode, sync);
}

void write_file_from(const Dir& dir, const std::string& name, int source,
                     const std::vector<FilePiece>& pieces, mode_t mode, Sync sync) {
    std::uint64_t size = 0;
    for (const auto& p : pieces)
        size += p.len > 0 ? p.len : p.text.size();
    auto same = [&](std::string_view old) {
        std::uint64_t at = 0;
        std::string range;
        for (const auto& p : pieces) {
            if (p.len > 0) {
                range.resize(p.len);
                if (::pread(source, range.data(), p.len, static_cast<off_t>(p.from)) !=
                    static_cast<ssize_t>(p.len))
                    return false;
            }
            std::string_view s = p.len > 0 ? std::string_view(range) : p.text;
            if (old.substr(at, s.size()) != s)
                return false;
            at += s.size();
        }
        return at == old.size();
    };
    replace_file(
        dir, name, size, same,
        [&](int fd, const std::string& shown) {
            PieceWriter out(fd, shown);
            for (const auto& p : pieces) {
                if (p.len == 0) {
                    out.add(p.text);
                    continue;
                }
                out.flush();
                copy_range(source, p.from, p.len, fd, shown);
            }
            out.flush();
        },
        mode, sync);
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
