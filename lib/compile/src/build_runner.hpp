// SPDX-License-Identifier: Apache-2.0
#pragma once

// What every target's build uses: the host C++ compiler's name, files written atomically into
// a build or stage directory, and the runner that executes build commands in parallel.
#include "skforge/support/progress.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace skforge::compile {

/// The host C++ compiler: $CXX when set and not empty, else "c++".
std::string compiler();

/// Writes `text` to `path` atomically with `mode`, creating its parent directories.
void write_text(const std::filesystem::path& path, std::string_view text, mode_t mode = 0644);

/// `text` cut at spaces and tabs (a SuperKernel's compile-options as compiler arguments).
std::vector<std::string> split_words(const std::string& text);

/// Runs build commands in one directory on up to `jobs` threads. Each command line and what it
/// printed go to `log`; each finished command advances `progress` (one task per run_all).
class Builder {
  public:
    Builder(std::string dir, std::string& log, support::Progress* progress)
        : m_dir(std::move(dir)), m_log(log), m_progress(progress) {}

    /// Runs every command (`what[i]` names command i in a failure); when one fails, throws an
    /// Error with its command line and output after all have stopped.
    void run_all(const std::vector<std::vector<std::string>>& commands,
                 const std::vector<std::string>& what, unsigned jobs);

  private:
    std::string m_dir;
    std::string& m_log;
    support::Progress* m_progress;
};

} // namespace skforge::compile
