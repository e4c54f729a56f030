// SPDX-License-Identifier: Apache-2.0
#pragma once

// The one check of a package's CANN stamp against the host (share/doc/cann-stamp.md), made by
// `skinstall install`/`upgrade`, `skinstall doctor` and skf_open on an NPU.
#include "skforge/package/manifest.hpp"

#include <optional>
#include <string>
#include <vector>

namespace skforge::install {

/// What is known of the host: each part may be unknown (empty), and an unknown part is not
/// checked.
struct HostCann {
    std::string version;      ///< the CANN release here ("9.1.0"), "" unknown
    std::string version_from; ///< where it was read, for messages
    std::string soc_dir;      ///< the host's SoC directory ("ascend910b"), "" unknown
    std::string soc_from;     ///< where that was read
};

/// One reason a package does not fit the host.
struct StampRefusal {
    enum class Kind { release, soc } kind;
    std::string message; ///< names the package, both releases (or SoCs) and where each came from
};

/// Why package `m` does not fit `host`: another CANN line (only when both are known; a package
/// without a stamp is not checked), another SoC (the manifest's soc_version, when it names one
/// skforge knows). Empty: nothing known differs.
std::vector<StampRefusal> stamp_refusals(const package::Manifest& m, const HostCann& host);

} // namespace skforge::install
