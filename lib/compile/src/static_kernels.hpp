// SPDX-License-Identifier: Apache-2.0
#pragma once

// Operators as static kernels: the index entries under which CANN's runtime finds each
// operator's call, and the precompiled kernels laid out as the runtime reads them.
#include "skforge/fusion/plan.hpp"
#include "skforge/graph/graph.hpp"
#include "skforge/kernel/package_index.hpp"

#include <string>
#include <vector>

namespace skforge::compile {

/// Adds to `index` one entry per key operator `i`'s call is looked up by (both of the runtime's
/// paths, with and without strides, each determinism mode), its kernel at `bin_path`. Throws an
/// Error naming the operator or kernel when a key cannot be built (a dtype without a
/// ge::DataType code, a dynamic or too large shape, more workspaces than the runtime takes).
void add_op_entries(kernel::PackageIndex& index, const graph::Graph& g,
                    const graph::Dependencies& deps, std::size_t i, const std::string& bin_path,
                    kernel::CoreType core);

/// One warning for each pair of operators (left out of SuperKernels by `plan`; nullptr: none
/// fused) whose calls share a static key while their kernels differ only in
/// platformInfo.deterministicLevel: an installed tree keeps one kernel per key (the later), which
/// CANN 9.0.x and 9.1.x, not comparing the level, select at every level, master only at its own
/// (no line compares it when the platformInfo has no core counts; share/doc/cann-conformance.md,
/// "opbase's rules per release").
std::vector<std::string> deterministic_level_ties(const graph::Graph& g, const fusion::Plan* plan);

/// Lays precompiled kernels out as static kernels: <soc_dir>/<OpType>/<stem>.{json,o}, and the
/// package's own index config/<soc_dir>/binary_info_config.json (written, and returned as text) in
/// the form CANN's runtime reads: per OpType a staticList, each entry's binPath
/// `<package>/<soc_dir>/<OpType>/<stem>.o` and simplifiedKey built from the operator's tensors.
/// With a plan, only the operators left out of every SuperKernel; `index` holds what else the
/// package's index lists (its SuperKernels).
std::string stage_static_kernels(const graph::Graph& g, const fusion::Plan* plan,
                                 const std::string& package, const std::string& soc_dir,
                                 const std::string& stage, std::string& log,
                                 kernel::PackageIndex index = {});

} // namespace skforge::compile
