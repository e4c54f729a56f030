#pragma once

// Building the host target: host kernels from C++ source, SuperKernel entries from the plan, the
// program skrun follows. Used by compile.cpp.
#include "skforge/fusion/plan.hpp"
#include "skforge/graph/graph.hpp"

#include <string>

namespace skforge::compile {

/// Everything about the host toolchain and sources that decides the output, for the cache key:
/// the compiler's identity, the kernel ABI header, every kernel's source or object.
std::string host_fingerprint(const graph::Graph& g);

/// Builds every kernel and SuperKernel of `g` for the host in `build_dir` (with up to `jobs`
/// compilers at once) and lays the package tree out in `stage`: host/<OpType>/ kernels,
/// host/SuperKernel/ entries (their source kept), config/host/binary_info_config.json and
/// host/program.json. Every command line and compiler message goes to `log`. Throws an Error
/// naming the operator, file or command that failed.
void build_host_package(const graph::Graph& g, const fusion::Plan& plan,
                        const std::string& build_dir, const std::string& stage, unsigned jobs,
                        std::string& log);

} // namespace skforge::compile
