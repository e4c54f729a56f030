// SPDX-License-Identifier: Apache-2.0
#pragma once

// The program of an NPU package (npu/program.json): what libskforge_runtime launches on an NPU,
// and in which order. Format: share/doc/npu-program.md.
#include "skforge/codegen/ascendc.hpp"
#include "skforge/fusion/plan.hpp"
#include "skforge/graph/graph.hpp"

#include <string>

namespace skforge::compile {

/// Whose generator built the package's SuperKernels: their JSON and object are named after the
/// segment (skforge's) or after the vendor's kernel name (the vendor's backend).
enum class SuperKernelNames { segment, vendor };

/// Writes `<stage>/npu/program.json` for a package already laid out in `stage` (its SuperKernel
/// JSONs are read back from there), and copies the kernels of the fused operators, which the
/// package has no static kernel of, to `<stage>/npu/kernels/<OpType>/<stem>.{json,o}` so that
/// every operator can also run alone. Throws an Error naming the operator or file.
void write_npu_program(const graph::Graph& g, const fusion::Plan& plan,
                       const codegen::NpuTarget& target, const std::string& soc_dir,
                       SuperKernelNames names, const std::string& stage, std::string& log);

} // namespace skforge::compile
