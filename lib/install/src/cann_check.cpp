// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/cann_check.hpp"

#include "skforge/kernel/soc.hpp"

namespace skforge::install {

std::vector<StampRefusal> stamp_refusals(const package::Manifest& m, const HostCann& host) {
    std::vector<StampRefusal> out;
    if (m.cann && !host.version.empty())
        if (auto why = package::cann_mismatch(*m.cann, host.version))
            out.push_back(
                {StampRefusal::Kind::release, "package '" + m.name + "' was " + *why +
                                                  ", read from " + host.version_from +
                                                  ": CANN's runtime of one line may not run "
                                                  "kernels built with another"});
    if (!host.soc_dir.empty() && !m.soc_version.empty())
        if (auto dir = kernel::soc_dir(m.soc_version); dir && *dir != host.soc_dir)
            out.push_back({StampRefusal::Kind::soc,
                           "package '" + m.name + "' is for " + m.soc_version + " (" +
                               std::string(*dir) + "), and this host's SoC is " + host.soc_dir +
                               " (" + host.soc_from + "): the runtime never reads its kernels"});
    return out;
}

} // namespace skforge::install
