// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace skforge::kernel {

/// How many cube (AIC) and vector (AIV) cores a SoC has.
struct SocCores {
    int aic;
    int aiv;
};

/// The cores of `soc` (matched by prefix, e.g. Ascend910B1); the host target's worker threads
/// for arch "host"; 24 AIC / 48 AIV (Ascend910B1 and Ascend910_93 class) when unknown.
SocCores soc_cores(std::string_view soc, std::string_view npu_arch);
/// The cores of `soc` when skforge's table has it (matched as soc_cores matches), else nullopt.
std::optional<SocCores> known_soc_cores(std::string_view soc);

/// The directory CANN's runtime reads a SoC's kernels and index from (`ascend910b`,
/// `ascend910_93`, `ascend950`, ...) for a SoC name such as Ascend910B1 or Ascend910_9391, matched
/// without regard to case; nullopt for a SoC name the table does not have.
std::optional<std::string_view> soc_dir(std::string_view soc);

/// The SoC directory a package for `npu_arch` targeting `soc` is laid out in: "host" for the host
/// target; otherwise soc_dir(soc), which must be a family `npu_arch` compiles for (dav-2201:
/// ascend910b, ascend910_93; dav-3510: ascend950). Throws an Error saying which SoC names fit.
std::string target_soc_dir(std::string_view soc, std::string_view npu_arch);

/// Whether `name` is, exactly (lower case), a SoC directory soc_dir gives ("ascend910b"): the
/// first-generation SoC `Ascend910B` is spelled alike, so a caller taking either asks this first.
bool is_soc_dir_name(std::string_view name);

/// The SoC a compile for `npu_arch` targets when neither the environment nor the graph names one.
std::string_view default_soc(std::string_view npu_arch);

} // namespace skforge::kernel
