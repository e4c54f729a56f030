// SPDX-License-Identifier: Apache-2.0
#pragma once

// The host backend: the C++ source of each SuperKernel's entry (worker threads stand in for AI
// cores) and the program the runtime follows. See share/doc/host-target.md.
#include "skforge/fusion/plan.hpp"
#include "skforge/graph/graph.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace skforge::codegen {

/// The SK_CORE_* bits a kernel type runs on: vector 1, cube 2, both 3.
unsigned core_mask(kernel::KernelType type);

/// The SK_CORE_* bits a barrier synchronises.
unsigned barrier_mask(fusion::BarrierKind kind);

/// Where a SuperKernel keeps things in the one workspace block it is given: the sub-kernels'
/// scratch workspaces at the plan's offsets (shared where the sub-kernels are ordered), then the
/// arena, as the plan's metadata describes it.
struct HostLayout {
    std::uint64_t workspace_bytes = 0;        ///< the whole block
    std::uint64_t arena_base = 0;             ///< where the arena starts
    std::vector<std::uint64_t> sub_workspace; ///< offset of each sub-kernel's workspace
    std::uint32_t sync_slots = 0;             ///< early-start flags
};

/// The layout of segment `s`.
HostLayout host_layout(const fusion::Segment& s);

/// The exported symbol of segment `s`'s entry: "sk_entry_" + its name as an identifier.
std::string host_entry_symbol(const fusion::Segment& s);

/// The C++ source of segment `s`'s entry. Every argument's shape and dtype is a constant; the
/// plan's barriers, early-start pairs and event pairs become barrier calls and flags. Throws an
/// Error naming the operator when a tensor has a dtype the host ABI lacks.
std::string host_entry_source(const graph::Graph& g, const fusion::Segment& s);

/// The linker version script that exports only the entry of segment `s`.
std::string host_version_script(const fusion::Segment& s);

/// Where the built pieces are inside the package, for the program.
struct HostFiles {
    std::vector<std::string> kernel_library;  ///< by Graph::kernels index: the kernel's .so
    std::vector<std::string> kernel_symbol;   ///< by Graph::kernels index
    std::vector<std::string> segment_library; ///< by segment: the SuperKernel's .so
};

/// The program skrun follows (share/doc/host-target.md): tensors, operators with their kernels,
/// segments with their parameter blocks, and the fused launch order.
std::string host_program_json(const graph::Graph& g, const fusion::Plan& plan,
                              const HostFiles& files);

} // namespace skforge::codegen
