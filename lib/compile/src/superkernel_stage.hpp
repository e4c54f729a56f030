// SPDX-License-Identifier: Apache-2.0
#pragma once

// One SuperKernel skforge built, into the package: its metadata (the plan's, with what the build
// decided), its binary, its generated source and its entry in the package's index. Shared by the
// host and the NPU builds.
#include "skforge/codegen/ascendc.hpp"
#include "skforge/codegen/cann_release.hpp"
#include "skforge/fusion/plan.hpp"
#include "skforge/graph/graph.hpp"
#include "skforge/kernel/package_index.hpp"

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace skforge::compile {

/// Where and how a SuperKernel is packaged.
struct SuperKernelFiles {
    std::string dir;                         ///< e.g. host/SuperKernel/
    std::string suffix;                      ///< of the binary: .so on the host, .o on the NPU
    std::string kernel_name;                 ///< the entry's symbol
    std::uint64_t workspace;                 ///< bytes of its workspace block
    std::string arch;                        ///< host, dav-2201 or dav-3510: which metadata shape
    std::string package;                     ///< the package's name: the first component of binPath
    std::optional<fusion::NpuLaunch> launch; ///< NPU: the launch on the compile's SoC
    std::string soc;                         ///< NPU: the compile's SoC
    codegen::CannVersion cann = codegen::k_default_cann_version; ///< NPU: whose JSON keys
};

/// The SuperKernel's metadata as packaged: the plan's, with what the build decided. `sha256` is
/// the binary's, or empty when nothing was built (--sources-only).
nlohmann::json superkernel_meta(const graph::Graph& g, const fusion::Segment& s,
                                const SuperKernelFiles& f, const std::string& sha256);

/// Packages segment `s`, built into `build` (lib/<segment><suffix>, gen/<segment>.cpp), into
/// `stage` under `f.dir`, and adds its index entry (keyed by package and segment: no call looks
/// a SuperKernel up, and another package's segment of the same name must not replace it).
void stage_superkernel(const graph::Graph& g, const fusion::Segment& s, const SuperKernelFiles& f,
                       const std::filesystem::path& build, const std::filesystem::path& stage,
                       kernel::PackageIndex& index, std::string& log);

} // namespace skforge::compile
