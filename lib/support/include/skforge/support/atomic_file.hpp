// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/support/file.hpp"
#include "skforge/support/interrupt.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace skforge::support {

/// A file that appears whole or not at all: it is written under a temporary name in the target's
/// directory (`.<name>.tmp.<pid>.XXXXXX`, registered for removal on SIGINT/SIGTERM) and only
/// commit() fsyncs it and renames it into place. Destroying it without commit() removes the
/// temporary file and leaves the target untouched.
class AtomicFile {
  public:
    /// Creates the temporary file beside `path`; the committed file gets `mode`.
    AtomicFile(std::string path, mode_t mode);
    /// The same in the directory open at `dir_fd` (duplicated: the caller keeps its own), as
    /// `name` in it; `dir` is that directory's path, for messages. No symbolic link is followed:
    /// the temporary is created, renamed and removed relative to the descriptor.
    AtomicFile(int dir_fd, const std::string& dir, std::string name, mode_t mode);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    /// Appends `data`.
    void write(std::span<const std::uint8_t> data);
    /// Appends `text`.
    void write(std::string_view text);
    /// The temporary file's descriptor (for positioned writes and read-back).
    int fd() const noexcept { return m_fd.get(); }
    /// The temporary file's path.
    const std::string& temp_path() const noexcept { return m_temp; }
    /// Whether commit waits for the file and its name to reach the disk.
    enum class Durability {
        fsync, ///< fsync the file before the rename and the directory after it
        none,  ///< only the rename: for a file checked before every use (a crash may leave it
               ///< empty or short, never half of two versions)
    };
    /// chmod, then rename over the target (fsynced as `durability` says).
    void commit(Durability durability = Durability::fsync);

  private:
    std::string m_path;
    std::string m_temp;
    std::string m_name;      // in m_dir
    std::string m_temp_name; // in m_dir
    UniqueFd m_dir;
    mode_t m_mode;
    UniqueFd m_fd;
    std::optional<TempRegistration> m_registration;
    bool m_committed = false;

    void create(const std::string& dir);
};

} // namespace skforge::support
