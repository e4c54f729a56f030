// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/package/path_rules.hpp"
#include "skforge/package/writer.hpp"

#include <cstdint>
#include <ctime>
#include <set>
#include <string>
#include <sys/types.h>
#include <vector>

namespace skforge::package {

/// One file or directory found under the directory being packed.
struct SourceEntry {
    std::string path; ///< relative to the root
    EntryType type = EntryType::file;
    mode_t mode = 0644; ///< normalised
    std::uint64_t size = 0;
    std::string sha256; ///< filled in as the file is copied into the payload
    dev_t dev = 0;
    ino_t ino = 0;
    timespec mtime{}; ///< as scanned: any write after the scan changes it or ctime
    timespec ctime{};
    std::string source;            ///< a PackedFile's: read from here, not from the root
    std::string expected;          ///< a PackedFile's SHA-256, checked once it is read
    std::uint64_t offset = 0;      ///< a PackedFile's: where its bytes start in `source`
    std::uint64_t source_size = 0; ///< a PackedFile's: the size of `source` as scanned
};

/// Where `entry`'s bytes are read from: its source, else `root`/path.
std::string source_path(const std::string& root, const SourceEntry& entry);

/// Walks `root` without following symlinks and returns its entries sorted by path; throws one
/// Error listing every entry the installer would refuse, each with its path and reason.
/// Names in `reserved` may not appear at the top level.
std::vector<SourceEntry> scan_source_tree(const std::string& root,
                                          const std::set<std::string>& reserved);

/// Adds `files` to the scanned `entries` (kept sorted by path), with the directories their
/// files need; throws one Error listing every path the installer would refuse, a path both
/// hold, and a source that is not a regular file of the declared size.
void add_packed_files(std::vector<SourceEntry>& entries, const std::vector<PackedFile>& files,
                      const std::set<std::string>& reserved);

/// Opens source_path(root, entry) for reading and checks it is still the file that was scanned.
int open_source_file(const std::string& root, const SourceEntry& entry);

/// Throws "changed while it was being packed" unless `fd` is still the file the scan saw, with
/// the same size (a PackedFile's: its source's), mtime and ctime: a write since the scan (or during
/// a read) changes the ctime, which no process can set back, so a file read whole and then found
/// unchanged was not torn by a writer while it was copied.
void check_unchanged(int fd, const std::string& root, const SourceEntry& entry);

} // namespace skforge::package
