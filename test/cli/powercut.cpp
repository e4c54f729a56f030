// SPDX-License-Identifier: Apache-2.0
// A power cut for tests, preloaded (LD_PRELOAD) into skinstall: it keeps what a file system
// would still hold after losing every write not yet synced, and at the cut turns the tree into
// that state in place. Nothing of it is in skforge itself.
//
// The model (the strictest POSIX allows): at the start everything under SKFORGE_POWERCUT_ROOT is
// durable. A file's content and mode become durable when it is fsynced (fsync/fdatasync on any
// descriptor of it); a directory's entries (names, which inode each names, symlink targets) and
// its mode when the directory is fsynced; everything when syncfs or sync returns. Nothing else is:
// a file created and renamed into a synced directory but never fsynced itself comes back empty, an
// entry created in a directory never synced afterwards is gone, an unlink or rename not followed by
// a sync of its directory is undone. Inodes are told apart by device, number and birth time, so a
// number reused after an unlink is a different file.
//
// Since the durable state only changes at a sync, cutting after the k-th sync for k = 1, 2, ...
// reaches every state a power cut at any moment could leave. With SKFORGE_POWERCUT_AFTER=k the
// k-th sync completes, then the tree under the root is made the durable state in place (every
// inode that survives keeps its number, as on a disk: the journal's stage_ino must still match;
// entries move through a sibling directory `<root>.powercut-hold`) and the process ends with
// _exit(99), as SKFORGE_FAULT_AT's steps do. One process only: the state is the process's.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <vector>

namespace {

struct Key {
    dev_t dev = 0;
    ino_t ino = 0;
    long long btime_sec = 0;
    unsigned btime_nsec = 0;
    bool operator<(const Key& o) const {
        if (dev != o.dev)
            return dev < o.dev;
        if (ino != o.ino)
            return ino < o.ino;
        if (btime_sec != o.btime_sec)
            return btime_sec < o.btime_sec;
        return btime_nsec < o.btime_nsec;
    }
};

struct Entry {
    std::string name;
    Key key;
    mode_t mode = 0;    ///< type and permissions when the entry was made durable
    std::string target; ///< a symlink's target
};

struct Node {
    mode_t mode = 0;
    bool has_data = false; ///< files: content durable
    std::string data;
    bool has_entries = false; ///< directories: entries durable
    std::vector<Entry> entries;
};

// Everything the shim keeps, made on first use: the constructor below may run before the
// globals of this file are constructed.
struct State {
    std::mutex mutex;
    std::map<Key, Node> durable;
    Key root;
    bool active = false;
    long cut_after = 0;
    long syncs = 0;
    std::string root_path;
};

State& state() {
    static State* s = new State;
    return *s;
}

void die(const char* what, const std::string& path) {
    std::fprintf(stderr, "powercut: %s '%s': %s\n", what, path.c_str(), std::strerror(errno));
    std::abort();
}

bool key_at(int dirfd, const char* name, Key& key, mode_t& mode) {
    struct statx sx {};
    if (::statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME,
                &sx) != 0)
        return false;
    key.dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
    key.ino = sx.stx_ino;
    if (sx.stx_mask & STATX_BTIME) {
        key.btime_sec = sx.stx_btime.tv_sec;
        key.btime_nsec = sx.stx_btime.tv_nsec;
    }
    mode = sx.stx_mode;
    return true;
}

void capture_file(int fd, const Key& key, mode_t mode) {
    std::string self = "/proc/self/fd/" + std::to_string(fd);
    int rd = ::open(self.c_str(), O_RDONLY | O_CLOEXEC);
    if (rd < 0)
        die("cannot reopen", self);
    Node& n = state().durable[key];
    n.mode = mode;
    n.has_data = true;
    n.data.clear();
    char buf[65536];
    for (;;) {
        ssize_t got = ::read(rd, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            die("cannot read", self);
        if (got == 0)
            break;
        n.data.append(buf, static_cast<std::size_t>(got));
    }
    ::close(rd);
}

// The directory open at `fd`: its entries as they are now. Returns the subdirectories, for the
// initial scan.
std::vector<std::pair<int, Key>> capture_dir(int fd, const Key& key, mode_t mode) {
    std::vector<std::pair<int, Key>> subdirs;
    int dup = ::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* d = dup < 0 ? nullptr : ::fdopendir(dup);
    if (d == nullptr)
        die("cannot list", "/proc/self/fd/" + std::to_string(fd));
    Node& n = state().durable[key];
    n.mode = mode;
    n.has_entries = true;
    n.entries.clear();
    while (dirent* e = ::readdir(d)) {
        if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0)
            continue;
        Entry entry;
        entry.name = e->d_name;
        if (!key_at(::dirfd(d), e->d_name, entry.key, entry.mode))
            continue; // gone meanwhile
        if (S_ISLNK(entry.mode)) {
            char target[4096];
            ssize_t len = ::readlinkat(::dirfd(d), e->d_name, target, sizeof target);
            entry.target.assign(target, len > 0 ? static_cast<std::size_t>(len) : 0);
        } else if (S_ISDIR(entry.mode)) {
            int sub = ::openat(::dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
            if (sub >= 0)
                subdirs.emplace_back(sub, entry.key);
        }
        n.entries.push_back(std::move(entry));
    }
    ::closedir(d);
    return subdirs;
}

// Everything below `fd` as durable: the state at the start.
void scan(int fd, const Key& key, mode_t mode) {
    for (auto& [sub, sub_key] : capture_dir(fd, key, mode)) {
        Key k;
        mode_t m = 0;
        key_at(sub, "", k, m);
        scan(sub, sub_key, m);
        ::close(sub);
    }
    for (const auto& e : state().durable[key].entries) {
        if (!S_ISREG(e.mode))
            continue;
        int f = ::openat(fd, e.name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (f < 0)
            die("cannot open", e.name);
        capture_file(f, e.key, e.mode);
        ::close(f);
    }
}

void write_all(int fd, const std::string& data, const std::string& path) {
    for (std::size_t off = 0; off < data.size();) {
        ssize_t n = ::write(fd, data.data() + off, data.size() - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            die("cannot write", path);
        off += static_cast<std::size_t>(n);
    }
}

// Moves everything below the directory `path` into `hold`, flat, one name per inode
// (`hold`/<n>), deepest first, and notes where each inode went: the inodes stay, as on a disk
// after a power cut, so what records an inode number (the journal's stage_ino) still finds it.
void hold_all(const std::string& path, const std::string& hold, std::map<Key, std::string>& held) {
    DIR* d = ::opendir(path.c_str());
    if (d == nullptr)
        die("cannot list", path);
    std::vector<std::string> names;
    while (dirent* e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
            names.emplace_back(e->d_name);
    ::closedir(d);
    for (const auto& name : names) {
        std::string p = path + "/" + name;
        Key key;
        mode_t mode = 0;
        if (!key_at(AT_FDCWD, p.c_str(), key, mode))
            die("cannot stat", p);
        if (S_ISDIR(mode))
            hold_all(p, hold, held);
        std::string to = hold + "/" + std::to_string(held.size());
        if (held.count(key) != 0 || S_ISLNK(mode)) { // a second hard link, or a symlink
            if (::unlink(p.c_str()) != 0)
                die("cannot remove", p);
            continue;
        }
        if (::rename(p.c_str(), to.c_str()) != 0)
            die("cannot move", p);
        held[key] = to;
    }
}

// Writes `node`'s durable content over the file at `path` (the same inode), or empties a file
// that was never synced: the classic zero-length file after a crash.
void restore_file(const std::string& path, const Node* node, mode_t listed_mode) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        die("cannot open", path);
    bool known = node != nullptr && node->has_data;
    if (known)
        write_all(fd, node->data, path);
    ::fchmod(fd, (known ? node->mode : listed_mode) & 07777);
    ::close(fd);
}

// Puts the durable entries of directory `key` back at `path` from the held inodes.
void restore_dir(const Key& key, const std::string& path, std::map<Key, std::string>& held) {
    auto it = state().durable.find(key);
    if (it == state().durable.end() || !it->second.has_entries)
        return; // a directory never synced comes back empty
    for (const auto& e : it->second.entries) {
        std::string p = path + "/" + e.name;
        auto from = held.find(e.key);
        auto node = state().durable.find(e.key);
        const Node* n = node == state().durable.end() ? nullptr : &node->second;
        if (S_ISLNK(e.mode)) {
            if (::symlink(e.target.c_str(), p.c_str()) != 0)
                die("cannot create", p);
            continue;
        }
        if (from != held.end()) {
            if (::rename(from->second.c_str(), p.c_str()) != 0)
                die("cannot restore", p);
            held.erase(from);
        } else if (S_ISDIR(e.mode) && ::mkdir(p.c_str(), 0700) != 0) {
            die("cannot create", p); // removed since it became durable: a new inode
        }
        if (S_ISDIR(e.mode)) {
            restore_dir(e.key, p, held);
            ::chmod(p.c_str(), (n && n->has_entries ? n->mode : e.mode) & 07777);
        } else if (S_ISREG(e.mode)) {
            restore_file(p, n, e.mode);
        }
    }
}

// The tree at the root made what the durable state says, in place.
void cut() {
    const std::string& root = state().root_path;
    std::string hold = root + ".powercut-hold";
    if (::mkdir(hold.c_str(), 0700) != 0)
        die("cannot create", hold);
    std::map<Key, std::string> held;
    hold_all(root, hold, held);
    restore_dir(state().root, root, held);
    ::chmod(root.c_str(), state().durable[state().root].mode & 07777);
    for (const auto& [k, p] : held) { // lost: never durable under any name
        if (::rmdir(p.c_str()) != 0 && ::unlink(p.c_str()) != 0)
            die("cannot remove", p);
    }
    if (::rmdir(hold.c_str()) != 0)
        die("cannot remove", hold);
}

using SyncFn = int (*)(int);

void scan_root() {
    int fd = ::open(state().root_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        die("cannot open", state().root_path);
    mode_t mode = 0;
    key_at(fd, "", state().root, mode);
    scan(fd, state().root, mode);
    ::close(fd);
}

// After a sync that succeeded: what it made durable (`whole`: the whole file system, as syncfs
// and sync do), then the cut when this is the sync to cut after.
int after_sync(int fd, int rc, bool whole) {
    if (!state().active || rc != 0)
        return rc;
    std::lock_guard<std::mutex> lock(state().mutex);
    int saved = errno;
    Key key;
    mode_t mode = 0;
    if (whole) {
        scan_root();
    } else if (key_at(fd, "", key, mode)) {
        if (S_ISDIR(mode))
            capture_dir(fd, key, mode);
        else if (S_ISREG(mode))
            capture_file(fd, key, mode);
    }
    if (++state().syncs == state().cut_after) {
        cut();
        std::fprintf(stderr, "power cut after sync %ld\n", state().syncs);
        std::fflush(stderr);
        ::_exit(99);
    }
    errno = saved;
    return rc;
}

__attribute__((constructor)) void start() {
    const char* root = std::getenv("SKFORGE_POWERCUT_ROOT");
    const char* after = std::getenv("SKFORGE_POWERCUT_AFTER");
    if (root == nullptr || after == nullptr)
        return;
    state().root_path = root;
    state().cut_after = std::atol(after);
    scan_root();
    state().active = true;
}

} // namespace

extern "C" {

int fsync(int fd) {
    static auto real = reinterpret_cast<SyncFn>(::dlsym(RTLD_NEXT, "fsync"));
    return after_sync(fd, real(fd), false);
}

int fdatasync(int fd) {
    static auto real = reinterpret_cast<SyncFn>(::dlsym(RTLD_NEXT, "fdatasync"));
    return after_sync(fd, real(fd), false);
}

int syncfs(int fd) {
    static auto real = reinterpret_cast<SyncFn>(::dlsym(RTLD_NEXT, "syncfs"));
    return after_sync(fd, real(fd), true);
}

void sync() {
    static auto real = reinterpret_cast<void (*)()>(::dlsym(RTLD_NEXT, "sync"));
    real();
    after_sync(-1, 0, true);
}

} // extern "C"
