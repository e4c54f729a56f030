#pragma once

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

} // namespace skforge::kernel
