// SPDX-License-Identifier: Apache-2.0
#pragma once

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

} // namespace skforge::install
