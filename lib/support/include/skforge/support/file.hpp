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

/// Reads the whole file at `path`; throws an Error naming the path on failure.
std::string read_file(const std::string& path);

/// Text shared by whatever views it (a parsed document's nodes point into it).
using SharedText = std::shared_ptr<const std::string_view>;

/// `text`, owned by the result.
SharedText share_text(std::string text);

/// The whole file at `path`, like read_file. A large regular file is mapped into memory
/// read-only instead of copied: no buffer to zero and fill (for a graph of tens of megabytes,
/// ten times faster). Like compilers that map their sources, this assumes the file is not cut
/// short while it is read (its pages would then be gone).
SharedText read_file_shared(const std::string& path);

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

/// fsyncs the directory at `dir` so a rename inside it is durable.
void fsync_directory(const std::string& dir);

/// The directory part of `path` ("." when there is none).
std::string parent_directory(const std::string& path);

/// The final component of `path`.
std::string base_name(const std::string& path);

} // namespace skforge::support
