#pragma once

// Building a target's package tree: host kernels and SuperKernels, NPU SuperKernels with
// bisheng, static kernels. Used by compile.cpp.
#include "skforge/codegen/ascendc.hpp"
#include "skforge/fusion/plan.hpp"
#include "skforge/graph/graph.hpp"

#include <string>

namespace skforge::compile {

/// Everything about the host toolchain and sources that decides the output, for the cache key:
/// the compiler's identity, the kernel ABI header, every kernel's source or object.
std::string host_fingerprint(const graph::Graph& g);

/// Builds every kernel and SuperKernel of `g` for the host in `build_dir` (with up to `jobs`
/// compilers at once) and lays the package tree out in `stage`: host/<OpType>/ kernels,
/// host/SuperKernel/ entries (their source kept), config/host/binary_info_config.json (the
/// staticList index, binPaths under `package`) and host/program.json. Every command line and
/// compiler message goes to `log`. Throws an Error naming the operator, file or command that
/// failed.
void build_host_package(const graph::Graph& g, const fusion::Plan& plan, const std::string& package,
                        const std::string& build_dir, const std::string& stage, unsigned jobs,
                        std::string& log);

/// The bisheng on PATH, identified for the cache key (`bisheng --version`).
std::string npu_fingerprint();

/// Builds every SuperKernel of `plan` with bisheng in `build_dir` and lays the package tree out
/// in `stage`: <soc>/SuperKernel/<segment>.{o,json,cpp} and, for the operators left out of
/// every SuperKernel, their precompiled kernels as static kernels; the index covers both.
void build_npu_package(const graph::Graph& g, const fusion::Plan& plan,
                       const codegen::NpuTarget& target, const std::string& package,
                       const std::string& soc_dir, const std::string& build_dir,
                       const std::string& stage, unsigned jobs, std::string& log);

/// Lays precompiled kernels out as static kernels: <soc>/<OpType>/<stem>.{json,o}, and the
/// package's own index config/<soc>/binary_info_config.json (written, and returned as text) in
/// the form CANN's runtime reads: per OpType a staticList, each entry's binPath
/// `<package>/<soc>/<OpType>/<stem>.o` and simplifiedKey built from the operator's tensors.
/// With a plan, only the operators left out of every SuperKernel, and the index also lists
/// `extra` (the SuperKernels).
std::string stage_static_kernels(const graph::Graph& g, const fusion::Plan* plan,
                                 const std::string& package, const std::string& soc_dir,
                                 const std::string& stage, std::string& log,
                                 const std::string& extra_index = "{}");

} // namespace skforge::compile
