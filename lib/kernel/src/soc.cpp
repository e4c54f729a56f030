// SPDX-License-Identifier: Apache-2.0
#include "skforge/kernel/soc.hpp"

#include "skforge/support/error.hpp"

#include <algorithm>
#include <cctype>

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

// SoC name (lower case) -> the directory the runtime uses: the SoC family in lower case. The
// names and families are asc-devkit's SOC_TO_SHORT_SOC_MAP (cmake/asc/fwk_modules/util/
// opdesc_parser.py), which opbase's socOpMap (composite_op/aclnn_engine/op_kernel_lib.cpp)
// agrees with; ascend310b4 is opbase's alone. Note "ascend910b" is a first-generation Ascend 910
// part, not the 910B family.
struct DirRow {
    std::string_view soc;
    std::string_view dir;
};
constexpr DirRow k_dirs[] = {
    {"ascend910a", "ascend910"},        {"ascend910proa", "ascend910"},
    {"ascend910b", "ascend910"},        {"ascend910prob", "ascend910"},
    {"ascend910premiuma", "ascend910"}, {"ascend910b1", "ascend910b"},
    {"ascend910b2", "ascend910b"},      {"ascend910b2c", "ascend910b"},
    {"ascend910b3", "ascend910b"},      {"ascend910b4", "ascend910b"},
    {"ascend910b4-1", "ascend910b"},    {"ascend910_9391", "ascend910_93"},
    {"ascend910_9381", "ascend910_93"}, {"ascend910_9372", "ascend910_93"},
    {"ascend910_9392", "ascend910_93"}, {"ascend910_9382", "ascend910_93"},
    {"ascend910_9362", "ascend910_93"}, {"ascend310p1", "ascend310p"},
    {"ascend310p3", "ascend310p"},      {"ascend310p5", "ascend310p"},
    {"ascend310p7", "ascend310p"},      {"ascend310p3vir01", "ascend310p"},
    {"ascend310p3vir02", "ascend310p"}, {"ascend310p3vir04", "ascend310p"},
    {"ascend310p3vir08", "ascend310p"}, {"ascend310b1", "ascend310b"},
    {"ascend310b4", "ascend310b"},      {"ascend610lite", "ascend610lite"},
    {"ascend950pr_9599", "ascend950"},  {"ascend950pr_958a", "ascend950"},
    {"ascend950pr_9589", "ascend950"},  {"ascend950pr_958b", "ascend950"},
    {"ascend950pr_9579", "ascend950"},  {"ascend950pr_957b", "ascend950"},
    {"ascend950pr_957c", "ascend950"},  {"ascend950pr_957d", "ascend950"},
    {"ascend950pr_950z", "ascend950"},  {"ascend950dt_950x", "ascend950"},
    {"ascend950dt_950y", "ascend950"},  {"ascend950dt_95a1", "ascend950"},
    {"ascend950dt_95a2", "ascend950"},  {"ascend950dt_9591", "ascend950"},
    {"ascend950dt_9592", "ascend950"},  {"ascend950dt_9595", "ascend950"},
    {"ascend950dt_9596", "ascend950"},  {"ascend950dt_9581", "ascend950"},
    {"ascend950dt_9582", "ascend950"},  {"ascend950dt_9583", "ascend950"},
    {"ascend950dt_9584", "ascend950"},  {"ascend950dt_9585", "ascend950"},
    {"ascend950dt_9586", "ascend950"},  {"ascend950dt_9587", "ascend950"},
    {"ascend950dt_9588", "ascend950"},  {"ascend950dt_9571", "ascend950"},
    {"ascend950dt_9572", "ascend950"},  {"ascend950dt_9573", "ascend950"},
    {"ascend950dt_9574", "ascend950"},  {"ascend950dt_9575", "ascend950"},
    {"ascend950dt_9576", "ascend950"},  {"ascend950dt_9577", "ascend950"},
    {"ascend950dt_9578", "ascend950"},  {"ascend950", "ascend950"},
    {"ascend350_354f", "ascend350"},    {"ascend350_355e", "ascend350"},
};

// Which SoC families each NPU architecture compiles for, and a SoC name of each for messages.
struct ArchRow {
    std::string_view arch;
    std::string_view dirs[2];
    std::string_view example;
};
constexpr ArchRow k_archs[] = {
    {"dav-2201", {"ascend910b", "ascend910_93"}, "Ascend910B1..B4 or Ascend910_93xx"},
    {"dav-3510", {"ascend950", ""}, "Ascend950PR_xxxx or Ascend950DT_xxxx"},
};

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}
} // namespace

std::optional<SocCores> known_soc_cores(std::string_view soc) {
    // Case-insensitive, as soc_dir is: `ascend910b3` and `Ascend910B3` are one SoC.
    const std::string key = lower(soc);
    for (const auto& r : k_socs)
        if (key.substr(0, r.prefix.size()) == lower(r.prefix))
            return r.cores;
    return std::nullopt;
}

SocCores soc_cores(std::string_view soc, std::string_view npu_arch) {
    if (npu_arch == "host")
        return {64, 128};
    return known_soc_cores(soc).value_or(SocCores{24, 48});
}

std::optional<std::string_view> soc_dir(std::string_view soc) {
    const std::string key = lower(soc);
    for (const auto& r : k_dirs)
        if (r.soc == key)
            return r.dir;
    return std::nullopt;
}

bool is_soc_dir_name(std::string_view name) {
    for (const auto& r : k_dirs)
        if (r.dir == name)
            return true;
    return false;
}

std::string target_soc_dir(std::string_view soc, std::string_view npu_arch) {
    if (npu_arch == "host")
        return "host";
    const auto arch = std::find_if(std::begin(k_archs), std::end(k_archs),
                                   [&](const ArchRow& r) { return r.arch == npu_arch; });
    if (arch == std::end(k_archs))
        throw support::Error("unsupported NPU architecture '" + std::string(npu_arch) +
                                 "' (host, dav-2201 or dav-3510)",
                             support::ErrorKind::usage);
    const auto dir = soc_dir(soc);
    if (!dir)
        throw support::Error("SoC '" + std::string(soc) +
                             "' is not one skforge knows CANN's directory for (the runtime reads "
                             "static kernels from config/<SoC family>/): for " +
                             std::string(npu_arch) + " use " + std::string(arch->example));
    if (*dir != arch->dirs[0] && *dir != arch->dirs[1])
        throw support::Error("SoC '" + std::string(soc) + "' belongs to CANN's " +
                             std::string(*dir) + " family, which " + std::string(npu_arch) +
                             " does not compile for: use " + std::string(arch->example));
    return std::string(*dir);
}

std::string_view default_soc(std::string_view npu_arch) {
    // dav-3510: asc-devkit's SoC for it (cmake/asc/asc_modules/CMakeASCInformation.cmake);
    // dav-2201 keeps skforge's earlier default.
    return npu_arch == "dav-3510" ? "Ascend950PR_9599" : "Ascend910_9391";
}

} // namespace skforge::kernel
