// SPDX-License-Identifier: Apache-2.0
#pragma once

// skinstall's commands: each takes the options its command line gave and returns the exit
// status; main.cpp declares which options each command takes.
#include "skforge/install/transaction.hpp"

#include <optional>
#include <string>
#include <vector>

namespace skforge::skinstall {

struct Options {
    std::string install_path;
    std::vector<std::string> trusted_keys;
    bool require_signature = false;
    bool quiet = false;
    bool json = false;
    bool force = false;
    bool all = false;
    bool reinstall = false;
    bool allow_downgrade = false;
    bool conflicts = false;
    bool dry_run = false;
    bool fix = false;
    bool install_for_all = false;
    std::string outputs;
    std::string from;
    std::string key;
    std::string log_file;
    std::optional<double> lock_timeout;
    std::vector<std::string> args;
    std::string command_line; ///< for the history
    // explain and doctor (diagnose.cpp)
    std::string op_type, impl_mode, soc, cores;
    std::vector<std::string> tensors;
    bool deterministic = false;
};

int cmd_install(const Options& o, install::InstallMode mode);
int cmd_repair(const Options& o);
int cmd_uninstall(const Options& o);
int cmd_list(const Options& o);
int cmd_verify(const Options& o);
int cmd_files(const Options& o);
int cmd_info(const Options& o);
int cmd_owner(const Options& o);
int cmd_history(const Options& o);
int cmd_recover(const Options& o);
int cmd_cleanup(const Options& o);
int cmd_explain(const Options& o);
int cmd_doctor(const Options& o);

} // namespace skforge::skinstall
