// SPDX-License-Identifier: Apache-2.0
// Child processes without a shell: posix_spawn with stdout and stderr on one pipe.
#include "skforge/support/process.hpp"

#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/interrupt.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <optional>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace skforge::support {

namespace {

// Frees the spawn attributes whatever happens.
struct FileActions {
    posix_spawn_file_actions_t actions{};
    FileActions() { ::posix_spawn_file_actions_init(&actions); }
    ~FileActions() { ::posix_spawn_file_actions_destroy(&actions); }
    FileActions(const FileActions&) = delete;
    FileActions& operator=(const FileActions&) = delete;
};

// The child starts with no signal blocked: the process may block SIGINT and SIGTERM for its
// signal thread (interrupt.hpp), and a compiler must still die on Ctrl-C.
struct SpawnAttr {
    posix_spawnattr_t attr{};
    SpawnAttr() {
        ::posix_spawnattr_init(&attr);
        sigset_t none;
        sigemptyset(&none);
        ::posix_spawnattr_setsigmask(&attr, &none);
        ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    }
    ~SpawnAttr() { ::posix_spawnattr_destroy(&attr); }
    SpawnAttr(const SpawnAttr&) = delete;
    SpawnAttr& operator=(const SpawnAttr&) = delete;
};

// An executable regular file.
bool executable_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
}

} // namespace

bool on_path(const std::string& program) {
    if (program.empty())
        return false;
    if (program.find('/') != std::string::npos)
        return executable_file(program);
    const char* env = std::getenv("PATH");
    // glibc's default search path when PATH is unset (confstr _CS_PATH).
    const std::string path = env != nullptr ? env : "/bin:/usr/bin";
    std::size_t start = 0;
    for (;;) {
        const auto colon = path.find(':', start);
        std::string dir =
            path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        if (executable_file((dir.empty() ? std::string(".") : dir) + "/" + program))
            return true;
        if (colon == std::string::npos)
            return false;
        start = colon + 1;
    }
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& cwd) {
    if (argv.empty())
        throw Error("run_process: empty command");
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        throw io_error("cannot create a pipe for", argv[0], errno);
    UniqueFd read_end(fds[0]), write_end(fds[1]);
    FileActions fa;
    ::posix_spawn_file_actions_addopen(&fa.actions, 0, "/dev/null", O_RDONLY, 0);
    ::posix_spawn_file_actions_adddup2(&fa.actions, write_end.get(), 1);
    ::posix_spawn_file_actions_adddup2(&fa.actions, write_end.get(), 2);
    if (!cwd.empty())
        ::posix_spawn_file_actions_addchdir_np(&fa.actions, cwd.c_str());
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    SpawnAttr attr;
    // (A relative path with a '/' is the child's to find, in the directory it changes to.)
    const bool relative_to_child =
        !cwd.empty() && argv[0].find('/') != std::string::npos && !argv[0].starts_with('/');
    if (!relative_to_child && !on_path(argv[0]))
        throw io_error("cannot run", argv[0], ENOENT);
    int rc = ::posix_spawnp(&pid, argv[0].c_str(), &fa.actions, &attr.attr, args.data(), environ);
    if (rc != 0)
        throw io_error("cannot run", argv[0], rc);
    std::optional<ChildRegistration> child(std::in_place, pid);
    write_end.reset();
    ProcessResult result;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(read_end.get(), buf, sizeof buf);
        if (n > 0)
            result.output.append(buf, static_cast<std::size_t>(n));
        else if (n == 0 || errno != EINTR)
            break;
    }
    // Wait without reaping first: until the child is forgotten, its pid cannot be reused by
    // another process that an interruption would then kill.
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 &&
           errno == EINTR) {
    }
    child.reset();
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

std::string command_line(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) {
        if (!out.empty())
            out += ' ';
        bool plain = !a.empty() &&
                     a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
                                         "OPQRSTUVWXYZ0123456789_-+=/.,:@%") == std::string::npos;
        if (plain) {
            out += a;
            continue;
        }
        out += '\'';
        for (char c : a)
            out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        out += '\'';
    }
    return out;
}

} // namespace skforge::support
