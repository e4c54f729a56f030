// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/install/layout.hpp"
#include "skforge/install/transaction.hpp"
#include "skforge/support/log.hpp"

#include <functional>
#include <string>
#include <vector>

namespace skforge::install {

/// Every distinct absolute path ending in `/uninstall.sh` that `log_text` mentions, in order.
std::vector<std::string> uninstall_candidates(const std::string& log_text);

/// Why `candidate` may not be uninstalled, or an empty string when it is exactly
/// `<install-path>/opp/static_kernel/ai_core/<stem>/uninstall.sh` (with the install path as given
/// or as resolved) for a `<stem>` in `stems`, with no `..` component. Pure text: the disk checks
/// come after.
std::string check_candidate_text(const std::string& candidate,
                                 const std::string& install_path_given,
                                 const std::string& install_path_resolved,
                                 const std::vector<std::string>& stems, std::string& stem_out);

/// What `skinstall cleanup-from-log LOG --outputs DIR` is asked to do.
struct CleanupRequest {
    std::string log_text;     ///< the compile job's log
    std::string outputs_dir;  ///< the job's outputs: only the packages its .run files name go
    std::string install_path; ///< as chosen (choose_install_path)
    Force force = Force::no;
    LockWait wait;
    /// Called after each uninstall, under the lock (skinstall records it in the history).
    std::function<void(const InstallTree&, const UninstallResult&)> uninstalled;
};

/// Uninstalls each package whose uninstall script `log_text` names, when the script is exactly
/// where that package's own installation put it and the package is one the outputs' .run files
/// name. A candidate that fails a check is refused with a warning, one already removed is said
/// so; nothing else is touched. Failures are warnings: a retried cleanup is quiet.
void cleanup_from_log(const CleanupRequest& request, support::Log& log);

} // namespace skforge::install
