// SPDX-License-Identifier: Apache-2.0
#pragma once

// The NPU backend: each SuperKernel's entry as AscendC source in the conventions of the vendor's
// SuperKernel compiler, and the commands that build it (share/doc/npu-target.md).
#include "skforge/codegen/cann_release.hpp"
#include "skforge/fusion/plan.hpp"
#include "skforge/graph/graph.hpp"
#include "skforge/kernel/kernel_meta.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace skforge::codegen {

/// What the NPU build of one compile needs to know.
struct NpuTarget {
    std::string arch;                          ///< dav-2201 or dav-3510
    std::string soc;                           ///< e.g. Ascend910B1
    std::string ascend_home;                   ///< $ASCEND_HOME_PATH, or empty
    CannVersion cann = k_default_cann_version; ///< whose conventions (cann_release.hpp)
};

/// How the SuperKernel is launched: the plan's fact (fusion::npu_launch), which `skc plan` shows.
using NpuLaunch = fusion::NpuLaunch;

/// The launch of segment `s` on `target`'s SoC (fusion::npu_launch).
NpuLaunch npu_launch(const graph::Graph& g, const fusion::Segment& s, const NpuTarget& target);

/// Slots of the parameter table (8-byte addresses) the entry reads, as indices: on dav-2201
/// slot 0 is the FFTS address; then, per sub-kernel in plan order, its own parameters, one
/// notify lock per event it sends and one wait lock per event it receives; then the
/// SuperKernel's workspace.
struct NpuParamLayout {
    std::vector<std::uint32_t> param_offset;  ///< per sub-kernel: its first parameter
    std::vector<std::uint32_t> notify_offset; ///< per sub-kernel: its first notify lock
    std::vector<std::uint32_t> wait_offset;   ///< per sub-kernel: its first wait lock
    std::uint32_t workspace_offset = 0;       ///< the SuperKernel's workspace
};

/// The parameter table of segment `s`.
NpuParamLayout npu_param_layout(const graph::Graph& g, const fusion::Segment& s,
                                const NpuTarget& target);

/// The exported name of segment `s`'s SuperKernel: `<graph>_<segment>` as an identifier (the
/// SuperKernel metadata's kernelName; the objects export it with `_mix_aic`/`_mix_aiv`).
std::string npu_entry_symbol(const graph::Graph& g, const fusion::Segment& s);

/// The function names sub-kernel `p` exports for the cube and the vector cores (empty where it
/// has none): the sub-kernel JSON's func_name, else its kernelName (`_mix_aic`/`_mix_aiv` added
/// for MIX kernels).
std::pair<std::string, std::string> npu_sub_functions(const graph::Graph& g,
                                                      const fusion::Segment& s, std::size_t p,
                                                      const NpuTarget& target);

/// The AscendC source of segment `s`'s entry `auto_gen_<kernelName>_kernel(void)`: sub-kernels
/// called as `<func>(args_offset)` (and their `_split<k>` copies) on the cores of their kind,
/// with the vendor's synchronisation for the scope's options (early start, cross-core sync,
/// debug-sync-all, debug-dcci-all, feed-sync-all), preload, event locks and the `.ascend.meta`
/// section of the SuperKernel's kernel type.
std::string npu_entry_source(const graph::Graph& g, const fusion::Segment& s,
                             const NpuTarget& target);

/// Bytes of workspace the entry itself needs (feed-sync-all's per-core flags), 0 without it.
std::uint64_t npu_sync_bytes(const graph::Graph& g, const fusion::Segment& s,
                             const NpuTarget& target);

/// The commands that build segment `s` in a build directory holding gen/<segment>.cpp and
/// obj/<kernelName>.o for every sub-kernel, as stages: the commands of a stage are independent
/// (split copies of the sub-kernels with llvm-objcopy, one bisheng compile per core type), the
/// stages run in order (ld.lld -r of everything into lib/<segment>.o, ld.lld relocating it in
/// place, llvm-objcopy localising the sub-kernel symbols).
std::vector<std::vector<std::vector<std::string>>>
bisheng_commands(const graph::Graph& g, const fusion::Segment& s, const NpuTarget& target);

} // namespace skforge::codegen
