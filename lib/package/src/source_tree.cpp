// SPDX-License-Identifier: Apache-2.0
#include "source_tree.hpp"

#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"

#include <algorithm>
#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace skforge::package {

using support::Error;
using support::UniqueFd;

namespace {

std::string kind_refusal(mode_t mode, nlink_t links) {
    if (S_ISREG(mode) && links > 1)
        return "is a hard link (" + std::to_string(links) + " names for one file)";
    if (!S_ISREG(mode) && !S_ISDIR(mode))
        return std::string("is ") + support::file_kind(mode);
    return {};
}

struct Walker {
    const std::string& root;
    const std::set<std::string>& reserved;
    std::vector<SourceEntry> entries;
    std::vector<std::string> errors;

    std::vector<std::string> list(int dirfd, const std::string& rel) {
        return support::list_directory(dirfd, root + "/" + rel);
    }

    void visit(int dirfd, const std::string& rel) {
        for (const auto& name : list(dirfd, rel)) {
            std::string path = rel.empty() ? name : rel + "/" + name;
            std::string shown = root + "/" + path;
            if (rel.empty() && reserved.contains(name)) {
                errors.push_back("'" + shown + "' uses a name skforge generates (" + name + ")");
                continue;
            }
            if (auto bad = check_entry_path(path)) {
                errors.push_back("'" + shown + "': path " + *bad);
                continue;
            }
            struct stat st {};
            if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
                throw support::io_error("cannot stat", shown, errno);
            if (auto why = kind_refusal(st.st_mode, st.st_nlink); !why.empty()) {
                errors.push_back("'" + shown + "' " + why);
                continue;
            }
            if (auto why = check_source_mode(st.st_mode)) {
                errors.push_back("'" + shown + "' " + *why);
                continue;
            }
            SourceEntry e;
            e.path = path;
            e.type = S_ISDIR(st.st_mode) ? EntryType::directory : EntryType::file;
            e.mode = normalized_mode(e.type, st.st_mode);
            e.size = e.type == EntryType::file ? static_cast<std::uint64_t>(st.st_size) : 0;
            e.dev = st.st_dev;
            e.ino = st.st_ino;
            e.mtime = st.st_mtim;
            e.ctime = st.st_ctim;
            entries.push_back(e);
            if (e.type == EntryType::directory) {
                int sub =
                    ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0)
                    throw support::io_error("cannot open directory", shown, errno);
                UniqueFd guard(sub);
                visit(sub, path);
            }
        }
    }
};

} // namespace

std::vector<SourceEntry> scan_source_tree(const std::string& root,
                                          const std::set<std::string>& reserved) {
    int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        throw support::io_error("cannot open package directory", root, errno);
    UniqueFd guard(fd);
    Walker w{root, reserved, {}, {}};
    w.visit(fd, "");
    if (!w.errors.empty()) {
        std::string msg = "refusing to pack '" + root + "': " + std::to_string(w.errors.size()) +
                          " entr" + (w.errors.size() == 1 ? "y" : "ies") +
                          " the installer would refuse:";
        for (const auto& e : w.errors)
            msg += "\n  " + e;
        throw Error(msg);
    }
    std::sort(w.entries.begin(), w.entries.end(),
              [](const SourceEntry& a, const SourceEntry& b) { return a.path < b.path; });
    return w.entries;
}

int open_source_file(const std::string& root, const SourceEntry& entry) {
    std::string path = root + "/" + entry.path;
    int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        throw support::io_error("cannot open", path, errno);
    try {
        check_unchanged(fd, root, entry);
    } catch (...) {
        ::close(fd);
        throw;
    }
    return fd;
}

void check_unchanged(int fd, const std::string& root, const SourceEntry& entry) {
    struct stat st {};
    auto same = [](const timespec& a, const timespec& b) {
        return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
    };
    if (::fstat(fd, &st) != 0 || st.st_dev != entry.dev || st.st_ino != entry.ino ||
        static_cast<std::uint64_t>(st.st_size) != entry.size || !same(st.st_mtim, entry.mtime) ||
        !same(st.st_ctim, entry.ctime))
        throw Error("'" + root + "/" + entry.path +
                    "' changed while it was being packed; pack again");
}

} // namespace skforge::package
