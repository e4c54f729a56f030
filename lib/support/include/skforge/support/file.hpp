// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::support {

/// Owns a file descriptor; closes it on destruction.
class UniqueFd {
  public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) noexcept : m_fd(fd) {}
    ~UniqueFd() { reset(); }
    UniqueFd(UniqueFd&& other) noexcept : m_fd(other.release()) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept;
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;

    /// The descriptor, or -1.
    int get() const noexcept { return m_fd; }
    /// True when a descriptor is held.
    explicit operator bool() const noexcept { return m_fd >= 0; }
    /// Gives up ownership and returns the descriptor.
    int release() noexcept;
    /// Closes the held descriptor (if any) and holds `fd` instead.
    void reset(int fd = -1) noexcept;

  private:
    int m_fd = -1;
};

/// Opens `path` read-only (O_CLOEXEC, and O_NOFOLLOW when `follow` is false); throws on failure.
UniqueFd open_read(const std::string& path, bool follow = true);

/// Largest file read_file reads by default (1 GiB): graphs, kernel binaries, keys, packages'
/// files. A file a user or another process can put in skforge's way is read within a limit, so
/// /dev/zero or a growing file cannot exhaust memory.
inline constexpr std::uint64_t k_max_read_bytes = std::uint64_t(1) << 30;
/// Largest JSON document skforge reads from a file it did not just write (64 MiB): kernel
/// metadata, the caches' metadata, configuration and counters.
inline constexpr std::uint64_t k_max_json_bytes = std::uint64_t(64) << 20;

/// Whether the last component of a path may be a symbolic link.
enum class Follow { yes, no };

/// How a file is read: its size limit and whether its last component may be a symbolic link.
struct ReadLimits {
    std::uint64_t max_bytes = k_max_read_bytes;
    Follow follow = Follow::yes;
};

/// Opens `name` in the directory open at `dir_fd` (AT_FDCWD: relative to the working
/// directory) for reading without blocking (O_NONBLOCK: a FIFO opens at once) and refuses it
/// unless it is a regular file of at most `limits.max_bytes`; `path` names it in messages.
/// Throws an Error naming `path` and the reason.
UniqueFd open_regular_at(int dir_fd, const std::string& name, const std::string& path,
                         ReadLimits limits = {});

/// What kind of file `mode` is, as a message says it: "a directory", "a FIFO", "a character
/// device", "a block device", "a socket", "a symbolic link", "a regular file".
const char* file_kind(mode_t mode);

/// open_regular_at for `path`.
UniqueFd open_regular(const std::string& path, ReadLimits limits = {});

/// The whole of `name` in the directory open at `dir_fd`, opened as open_regular_at does and
/// read within `limits.max_bytes` also when it grows meanwhile.
std::string read_file_at(int dir_fd, const std::string& name, const std::string& path,
                         ReadLimits limits = {});

/// Reads the whole regular file at `path` (read_file_at); throws an Error naming the path on
/// failure.
std::string read_file(const std::string& path, ReadLimits limits = {});

/// Text shared by whatever views it (a parsed document's nodes point into it).
using SharedText = std::shared_ptr<const std::string_view>;

/// `text`, owned by the result.
SharedText share_text(std::string text);

/// The whole file at `path`, like read_file. A large regular file is mapped into memory
/// read-only instead of copied: no buffer to zero and fill (for a graph of tens of megabytes,
/// ten times faster). Like compilers that map their sources, this assumes the file is not cut
/// short while it is read (its pages would then be gone).
SharedText read_file_shared(const std::string& path, ReadLimits limits = {});

/// Reads up to `size` bytes at `offset`; throws on error; returns fewer only at end of file.
std::size_t pread_full(int fd, std::span<std::uint8_t> buf, std::uint64_t offset,
                       std::string_view path);

/// Writes all of `data` to `fd`; throws an Error naming `path` on failure.
void write_all(int fd, std::span<const std::uint8_t> data, std::string_view path);
/// Writes all of `text` to `fd`.
void write_all(int fd, std::string_view text, std::string_view path);

/// The names in the directory open at `dir_fd` (without "." and ".."), sorted; `path` is for
/// messages.
std::vector<std::string> list_directory(int dir_fd, const std::string& path);

/// The names of list_directory that are directories (not links to one), from the type readdir
/// gives, with an fstatat only where the file system gives none: a walk down a package of
/// 4,079 files needs its 65 directories, not a stat of every file.
std::vector<std::string> list_subdirectories(int dir_fd, const std::string& path);

/// fsyncs the directory at `dir` so a rename inside it is durable.
void fsync_directory(const std::string& dir);

/// The directory part of `path` ("." when there is none).
std::string parent_directory(const std::string& path);

/// The final component of `path`.
std::string base_name(const std::string& path);

} // namespace skforge::support
