// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CANN toolkit a host has: its release, as its version.info files say it.
#include <optional>
#include <string>
#include <string_view>

namespace skforge::kernel {

/// The version at the start of `text`: up to its first character that is not a letter, a digit
/// or '.+-' (a CR, a blank, a NUL), as every checker of the CANN stamp reads a host's release.
std::string_view version_prefix(std::string_view text);

/// The version an installed toolkit names: the first `Version=` line with a value of
/// `<ascend_home>/compiler/version.info` (what asc-devkit's gen_version_info.sh reads), else of
/// `<ascend_home>/version.info`; the value ends at its first character that is not a letter, a
/// digit or '.+-' (a CR, a blank), and a line left without one is passed over. A path that is not
/// a readable regular file is passed over too, as the .run's install.sh does. `from`, when given,
/// is set to the file it came from. nullopt when `ascend_home` is empty or neither file has such
/// a line; throws an Error naming the file when one cannot be read.
std::optional<std::string> toolkit_version(const std::string& ascend_home,
                                           std::string* from = nullptr);

} // namespace skforge::kernel
