// SPDX-License-Identifier: Apache-2.0
#pragma once

// The NPU target with skforge's backend: each segment's AscendC entry is compiled with bisheng and
// linked with the precompiled sub-kernels into one device object; operators left out are packaged
// as static kernels.
#include "skforge/codegen/ascendc.hpp"
#include "skforge/fusion/plan.hpp"
#include "skforge/graph/graph.hpp"
#include "skforge/support/progress.hpp"

#include <string>

namespace skforge::compile {

/// The bisheng on PATH, identified for the cache key (`bisheng --version`).
std::string npu_fingerprint();

/// Builds every SuperKernel of `plan` with bisheng in `build_dir` and lays the package tree out
/// in `stage`: <soc_dir>/SuperKernel/<segment>.{o,json,cpp} and, for the operators left out of
/// every SuperKernel, their precompiled kernels as static kernels; the index covers both.
void build_npu_package(const graph::Graph& g, const fusion::Plan& plan,
                       const codegen::NpuTarget& target, const std::string& package,
                       const std::string& soc_dir, const std::string& build_dir,
                       const std::string& stage, unsigned jobs, std::string& log,
                       support::Progress* progress = nullptr);

/// What build_npu_package would build, without building it: in `out_dir`, per SuperKernel,
/// <soc_dir>/SuperKernel/<segment>.cpp (the entry source), <segment>.json (its metadata as
/// packaged, sha256 empty) and the vendor compiler's inputs.
void write_npu_sources(const graph::Graph& g, const fusion::Plan& plan,
                       const codegen::NpuTarget& target, const std::string& soc_dir,
                       const std::string& out_dir, std::string& log);

} // namespace skforge::compile
