// SPDX-License-Identifier: Apache-2.0
#pragma once

// skinstall's commands: each takes the options its command line gave and returns the exit
// status; main.cpp declares which options each command takes.
#include "skforge/install/cann_check.hpp"
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
    bool ignore_cann_version = false;
    std::string cann_version; ///< --cann-version: the host's CANN release
    std::string outputs;
    std::string from;
    std::string key;
    std::string log_file;
    std::string
        holder; ///< --holder PID[:START]: the process an install is for or an uninstall comes from
    std::optional<double> lock_timeout;
    std::vector<std::string> args;
    std::string command_line; ///< for the history
    // explain and doctor (diagnose.cpp)
    std::string op_type, impl_mode, soc, cores;
    std::vector<std::string> tensors;
    bool deterministic = false;
};

/// The SoC directory --soc names (a SoC or a directory name), "" when not given; a usage error
/// for a name that is neither.
std::string soc_dir_option(const std::string& soc);
/// What install and doctor know of the host: --cann-version, else (with `read_toolkit`) the
/// toolkit under $ASCEND_HOME_PATH; --soc.
install::HostCann host_cann(const Options& o, bool read_toolkit = true);

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
int cmd_gc(const Options& o);

} // namespace skforge::skinstall
