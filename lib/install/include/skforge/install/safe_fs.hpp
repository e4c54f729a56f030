// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/support/file.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <vector>

namespace skforge::install {

/// A directory opened as a handle, with the path it was reached by (for messages only; nothing
/// is ever resolved through it again).
struct Dir {
    support::UniqueFd fd;
    std::string path;
};

/// Opens `rel` (relative, already validated as text) beneath `dir` without following any symlink
/// and without leaving `dir`: openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
/// RESOLVE_NO_MAGICLINKS), or where openat2 is missing (or SKFORGE_NO_OPENAT2=1) a walk of one
/// component at a time with O_NOFOLLOW | O_DIRECTORY. Returns an empty handle when the final
/// component does not exist and `flags` lacks O_CREAT; throws an Error naming the path and the
/// component when a symlink or a non-directory is met.
support::UniqueFd open_beneath(const Dir& dir, std::string_view rel, int flags, mode_t mode = 0);

/// Opens directory `rel` beneath `dir` as a Dir; nullopt when it does not exist.
std::optional<Dir> open_dir_beneath(const Dir& dir, std::string_view rel);

/// The directory a run of a package's entries sits in, opened beneath the package with
/// open_dir_beneath and kept while the next entries share it (a manifest lists the files of one
/// directory one after another): one open per directory, not one per file.
class ParentDir {
  public:
    /// Directory `rel` (an entry's parent, relative to `pkg`); nullptr when it does not exist.
    /// Throws open_dir_beneath's Error when it is unsafe; the next call then tries again.
    const Dir* open(const Dir& pkg, const std::string& rel);

  private:
    std::string m_rel;
    std::optional<Dir> m_dir;
};

/// Opens directory `name` (one component) in `dir`, creating it with exactly `mode` (whatever the
/// umask) when missing; throws when it exists as anything but a directory (a symlink included),
/// or, when this user may not create it, saying who owns `dir` (write_refusal).
Dir ensure_dir(const Dir& dir, const std::string& name, mode_t mode);

/// lstat of one component in `dir`; nullopt when it does not exist.
std::optional<struct stat> stat_at(const Dir& dir, const std::string& name);

/// Removes `name` from `dir` and, if it is a directory, everything under it, through handles:
/// symlinks are removed as links, never followed. Missing is fine.
void remove_tree(const Dir& dir, const std::string& name);

/// What write_file_at makes durable before it returns: the file and its name (yes); the
/// content only (file: a later fsync of the directory, made by the caller, keeps the name);
/// nothing (no: for a cache that checks itself when read, so a power cut may leave the old
/// file, the new one or an empty one).
enum class Sync { yes, file, no };

/// Writes `content` to `dir/name` whole or not at all: a temporary name in `dir`, fsync, rename,
/// fsync of `dir` (as `sync` says). Refuses when `name` exists as a symlink or a non-regular
/// file.
void write_file_at(const Dir& dir, const std::string& name, std::string_view content, mode_t mode,
                   Sync sync = Sync::yes);

/// Calls `emit` for each piece of a file's content, in order; may be called more than once.
using Pieces = std::function<void(const std::function<void(std::string_view)>& emit)>;

/// write_file_at of `size` bytes given as pieces, written as they come (writev) without being
/// assembled first: for the global index, 15 MB at fleet scale, most of it runs of the old text.
void write_file_at(const Dir& dir, const std::string& name, std::uint64_t size,
                   const Pieces& pieces, mode_t mode, Sync sync = Sync::yes);

/// One piece of what write_file_from writes: `text`, or when `len` is not 0, the `len` bytes at
/// offset `from` of the file it copies from.
struct FilePiece {
    std::string_view text;
    std::uint64_t from = 0;
    std::uint64_t len = 0;
};

/// write_file_at of the pieces, ranges of the file open at `source` copied by the kernel
/// (copy_file_range; read and written where it cannot): the global index rewritten from the old
/// one, whose 15 MB at fleet scale never pass through this process.
void write_file_from(const Dir& dir, const std::string& name, int source,
                     const std::vector<FilePiece>& pieces, mode_t mode, Sync sync = Sync::yes);

/// True for the names write_file_at gives its temporaries (`.<name>.tmp.<pid>`): what a killed
/// process leaves behind, never a file anyone else owns in skforge's directories.
bool is_temporary_name(std::string_view name);

/// Reads `dir/name` (one component, not followed); nullopt when it does not exist. Opens without
/// blocking and refuses anything but a regular file (a FIFO would otherwise hang the caller while
/// it holds the lock).
std::optional<std::string> read_file_at(const Dir& dir, const std::string& name,
                                        std::uint64_t max_bytes = 64ull << 20);

/// Removes the file `dir/name` (a symlink is removed as a link); missing is fine.
void unlink_at(const Dir& dir, const std::string& name);

/// fsyncs the directory handle.
void sync_dir(const Dir& dir);

/// Names in `dir`, sorted.
std::vector<std::string> list_dir(const Dir& dir);

/// Why this process may not create, rename or remove entries in `dir`, in words an operator can
/// act on: the directory's owner, group and mode, the current user and groups, and what to do;
/// nullopt when it may (faccessat W_OK|X_OK with the effective ids, so ACLs count).
std::optional<std::string> write_refusal(const Dir& dir);

/// Throws write_refusal(`dir`) for `dir` and every directory below it (at most `depth` levels,
/// never through a symlink): what uninstalling or replacing that tree needs.
void require_writable_tree(const Dir& dir, int depth = 40);

/// True when this process uses the component-walk fallback instead of openat2.
bool using_fallback_walk();

} // namespace skforge::install
