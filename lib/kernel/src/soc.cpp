#include "skforge/kernel/soc.hpp"

namespace skforge::kernel {

namespace {
struct Row {
    std::string_view prefix;
    SocCores cores;
};
// Longest prefixes first.
constexpr Row k_socs[] = {
    {"Ascend910B1", {24, 48}}, {"Ascend910B2", {24, 48}},  {"Ascend910B3", {20, 40}},
    {"Ascend910B4", {20, 40}}, {"Ascend910_93", {24, 48}}, {"Ascend910B", {24, 48}},
    {"Ascend310P", {8, 8}},
};
} // namespace

SocCores soc_cores(std::string_view soc, std::string_view npu_arch) {
    if (npu_arch == "host")
        return {64, 128};
    for (const auto& r : k_socs)
        if (soc.substr(0, r.prefix.size()) == r.prefix)
            return r.cores;
    return {24, 48};
}

} // namespace skforge::kernel
