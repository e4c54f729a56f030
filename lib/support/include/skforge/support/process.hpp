// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

namespace skforge::support {

/// How a child process ended, with everything it wrote to stdout and stderr (interleaved).
struct ProcessResult {
    int exit_code = -1; ///< the exit status, or 128 + signal when a signal ended it
    std::string output;
};

/// Runs `argv` (argv[0] looked up on PATH) in directory `cwd` (empty: ours) without a shell,
/// stdin from /dev/null, and waits for it. Throws an Error naming the program when it cannot be
/// started (also where the spawn itself cannot report a failed exec, as under qemu-user, whose
/// emulated vfork is a fork: the program is looked up first).
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& cwd = "");

/// Whether `program` can be run: with a '/', that file is executable; without, an executable file
/// of that name is in a directory of PATH (as posix_spawnp and execvp search it).
bool on_path(const std::string& program);

/// The command line as a user would type it (arguments quoted for sh where needed).
std::string command_line(const std::vector<std::string>& argv);

} // namespace skforge::support
