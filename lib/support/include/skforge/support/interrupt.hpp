// SPDX-License-Identifier: Apache-2.0
#pragma once

// Interrupted work leaves nothing behind. Temporaries (AtomicFile's files, compile's build
// directories) carry the pid of the process that made them in their names and are registered
// here while they exist; SIGINT, SIGTERM or SIGHUP make a dedicated thread remove them, kill
// the registered child processes and end the process by the same signal. What a killed process
// (SIGKILL, a crash) left is removed by a later run: remove_stale_temporaries() takes away the
// temporaries whose process no longer exists.
#include <csignal>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace skforge::support {

/// "<pid>": the tag temporaries of this process carry in their names
/// (`.<file>.tmp.<pid>.XXXXXX`, `.skc-build.<pid>.XXXXXX`).
std::string temp_tag();

/// Registers a temporary file or directory for removal if the process is interrupted, for as
/// long as the object lives (or until release()).
class TempRegistration {
  public:
    explicit TempRegistration(std::string path);
    ~TempRegistration();
    TempRegistration(const TempRegistration&) = delete;
    TempRegistration& operator=(const TempRegistration&) = delete;
    /// Forgets the path (it was renamed into place or removed).
    void release();

  private:
    std::string m_path;
    bool m_registered = false;
};

/// Registers a child process to be killed (SIGKILL) if this process is interrupted.
class ChildRegistration {
  public:
    explicit ChildRegistration(pid_t pid);
    ~ChildRegistration();
    ChildRegistration(const ChildRegistration&) = delete;
    ChildRegistration& operator=(const ChildRegistration&) = delete;

  private:
    pid_t m_pid;
};

/// Takes SIGINT, SIGTERM and SIGHUP (those not ignored when the process started, so nohup and
/// background jobs keep their meaning) for the whole process and handles them on its own thread
/// with sigwait: no work in a signal handler. On a signal it removes every registered temporary,
/// and any other temporary named with this pid beside them, kills registered children, and ends
/// the process by that signal (the shell then reports 128 + signal: 130, 143). Construct it
/// first in main, before any other thread exists, so every thread inherits the blocked mask.
class InterruptHandler {
  public:
    InterruptHandler();
    /// If a signal is being handled, waits for the handler to end the process: the main thread
    /// must not return and exit with another status meanwhile.
    ~InterruptHandler();
    InterruptHandler(const InterruptHandler&) = delete;
    InterruptHandler& operator=(const InterruptHandler&) = delete;
};

/// Whether `name` is a skforge temporary (`.<file>.tmp.<pid>.XXXXXX` or
/// `.skc-build.<pid>.XXXXXX`); sets `pid` when it is. With `only_for` non-empty, only the
/// temporaries of the file of that name (`.<only_for>.tmp.<pid>.XXXXXX`).
bool is_temporary_name(std::string_view name, pid_t& pid, std::string_view only_for = {});

/// Removes, directly in `dir`, the temporaries (see is_temporary_name) whose process does not
/// exist (kill(pid, 0) fails with ESRCH); a live process's are never touched. Returns how many
/// were removed. A missing `dir` has none.
std::size_t remove_stale_temporaries(const std::string& dir, std::string_view only_for = {});

} // namespace skforge::support
