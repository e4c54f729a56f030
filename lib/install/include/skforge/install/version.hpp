// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

namespace skforge::install {

/// Compares two package versions as dpkg does (`[epoch:]upstream[-revision]`; digits compare as
/// numbers, letters sort before other characters and `~` before everything, even the end):
/// negative when `a` is older than `b`, zero when equal, positive when newer.
int compare_versions(std::string_view a, std::string_view b);

} // namespace skforge::install
