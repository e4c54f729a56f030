#pragma once

// The NPU backend: each SuperKernel's entry as AscendC source for bisheng, its device helpers,
// and the commands that build it. See share/doc/npu-target.md.
#include "skforge/fusion/plan.hpp"
#include "skforge/graph/graph.hpp"

#include <string>
#include <vector>

namespace skforge::codegen {

/// What the NPU build of one compile needs to know.
struct NpuTarget {
    std::string arch;        ///< dav-2201 or dav-3510
    std::string soc;         ///< e.g. Ascend910B1
    std::string ascend_home; ///< $ASCEND_HOME_PATH, or empty
};

/// The exported name of segment `s`'s entry: `<graph>_<segment>` as an identifier (the
/// SuperKernel metadata's kernelName).
std::string npu_entry_symbol(const graph::Graph& g, const fusion::Segment& s);

/// The AscendC source of segment `s`'s entry: it calls the sub-kernels in plan order on the
/// cores of their kind (and index below their blockDim), with the plan's barriers (vector:
/// CrossCoreSetFlag mode 0 on the vector cores, cube: the same on the cube cores, full:
/// SyncAll<false>), early-start and event flags in per-core slots, cache maintenance and code
/// preload where the plan asks.
std::string npu_entry_source(const graph::Graph& g, const fusion::Segment& s,
                             const NpuTarget& target);

/// skforge_superkernel.h: the device helpers the entries use (parameter block access, per-core
/// flag slots, dcci), written next to the generated sources.
std::string npu_helpers_header();

/// Bytes of per-core flag slots segment `s` needs after its workspace: one 32-byte slot per core
/// per early-start pair and per event pair.
std::uint64_t npu_sync_bytes(const fusion::Segment& s);

/// The bisheng commands that build segment `s` in a build directory holding gen/<segment>.cpp,
/// include/skforge_superkernel.h and obj/<kernelName>.o for every sub-kernel: compile the
/// entry, then link it with the sub-kernels into one relocatable device object
/// lib/<segment>.o.
std::vector<std::vector<std::string>>
bisheng_commands(const graph::Graph& g, const fusion::Segment& s, const NpuTarget& target);

} // namespace skforge::codegen
