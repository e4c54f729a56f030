// SPDX-License-Identifier: Apache-2.0
#include "source_tree.hpp"

#include "skforge/package/path_rules.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <map>
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
            // config/<soc dir>/ is mirrored into the tree's config/ (manifest.cpp's rule).
            if (rel == "config")
                if (auto bad = check_soc_dir_name(name)) {
                    errors.push_back("'" + shown + "': SoC directory 'config/" + name + "' " +
                                     *bad);
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

std::string source_path(const std::string& root, const SourceEntry& entry) {
    return entry.source.empty() ? root + "/" + entry.path : entry.source;
}

namespace {

// The entry for `f`, its source stat'ed as the scan stats a file: a regular file of the
// declared size (checked again, with its times, when it is read).
SourceEntry packed_entry(const PackedFile& f, std::vector<std::string>& errors) {
    SourceEntry e;
    e.path = f.path;
    e.type = f.type;
    e.mode = f.mode;
    e.size = f.type == EntryType::file ? f.size : 0;
    if (f.type == EntryType::directory)
        return e;
    e.source = f.source;
    e.expected = f.sha256;
    e.offset = f.offset;
    struct stat st {};
    if (::lstat(f.source.c_str(), &st) != 0)
        errors.push_back("'" + f.source + "' (for '" + f.path + "'): " + std::strerror(errno));
    else if (!S_ISREG(st.st_mode))
        errors.push_back("'" + f.source + "' (for '" + f.path + "') is " +
                         support::file_kind(st.st_mode));
    else if (static_cast<std::uint64_t>(st.st_size) < f.offset + f.size)
        errors.push_back("'" + f.source + "' (for '" + f.path + "') has " +
                         std::to_string(st.st_size) + " bytes, not the " +
                         std::to_string(f.offset + f.size) + " it needs");
    e.source_size = static_cast<std::uint64_t>(st.st_size);
    e.dev = st.st_dev;
    e.ino = st.st_ino;
    e.mtime = st.st_mtim;
    e.ctime = st.st_ctim;
    return e;
}

} // namespace

void add_packed_files(std::vector<SourceEntry>& entries, const std::vector<PackedFile>& files,
                      const std::set<std::string>& reserved) {
    std::map<std::string, SourceEntry> all;
    for (auto& e : entries)
        all.emplace(e.path, std::move(e));
    std::set<std::string> scanned;
    for (const auto& [path, e] : all)
        scanned.insert(path);
    std::vector<std::string> errors;
    for (const auto& f : files) {
        std::string at = "'" + f.path + "'";
        if (auto bad = check_entry_path(f.path)) {
            errors.push_back(at + ": path " + *bad);
            continue;
        }
        if (auto top = f.path.substr(0, f.path.find('/')); reserved.contains(top)) {
            errors.push_back(at + " uses a name skforge generates (" + top + ")");
            continue;
        }
        if (!is_allowed_mode(f.mode) || (f.type == EntryType::file && f.sha256.size() != 64)) {
            errors.push_back(at + " needs mode 0644 or 0755 and, a file, its SHA-256");
            continue;
        }
        auto [it, added] = all.emplace(f.path, packed_entry(f, errors));
        // Twice: one directory, or one file with one content (not one the directory holds).
        bool same = it->second.type == f.type &&
                    (f.type == EntryType::directory ||
                     (!scanned.contains(f.path) && it->second.expected == f.sha256));
        if (!added && !same)
            errors.push_back(at + " is given twice with different content" +
                             (scanned.contains(f.path) ? " (also in the directory)" : ""));
        for (auto slash = f.path.rfind('/'); slash != std::string::npos && slash > 0;
             slash = f.path.rfind('/', slash - 1)) {
            SourceEntry dir;
            dir.path = f.path.substr(0, slash);
            dir.type = EntryType::directory;
            dir.mode = 0755;
            if (!all.emplace(dir.path, dir).second)
                break; // its parents are there too
        }
    }
    if (!errors.empty()) {
        std::string msg = "refusing to pack: " + std::to_string(errors.size()) + " entr" +
                          (errors.size() == 1 ? "y" : "ies") + " the installer would refuse:";
        for (const auto& e : errors)
            msg += "\n  " + e;
        throw Error(msg);
    }
    entries.clear();
    for (auto& [path, e] : all)
        entries.push_back(std::move(e));
}

int open_source_file(const std::string& root, const SourceEntry& entry) {
    std::string path = source_path(root, entry);
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
    std::uint64_t size = entry.source.empty() ? entry.size : entry.source_size;
    if (::fstat(fd, &st) != 0 || st.st_dev != entry.dev || st.st_ino != entry.ino ||
        static_cast<std::uint64_t>(st.st_size) != size || !same(st.st_mtim, entry.mtime) ||
        !same(st.st_ctim, entry.ctime))
        throw Error("'" + source_path(root, entry) +
                    "' changed while it was being packed; pack again");
}

} // namespace skforge::package
