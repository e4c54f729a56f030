// SPDX-License-Identifier: Apache-2.0
#pragma once

// The host target's build: every kernel from its C++ source (or host object) with the host C++
// compiler, each segment's threaded entry linked with its sub-kernels into one shared object.
#include "skforge/fusion/plan.hpp"
#include "skforge/graph/graph.hpp"
#include "skforge/support/progress.hpp"

#include <string>
#include <vector>

namespace skforge::compile {

/// Everything about the host toolchain and sources that decides the output, for the cache key:
/// the compiler's identity, the kernel ABI header, every kernel's source or object.
std::string host_fingerprint(const graph::Graph& g);

/// The file each kernel of `g` is built from on the host target: its host object (bin_path) or
/// its C++ source (source_path, else the .cpp beside its metadata), one per kernel.
std::vector<std::string> host_kernel_files(const graph::Graph& g);

/// Builds every kernel and SuperKernel of `g` for the host in `build_dir` (with up to `jobs`
/// compilers at once) and lays the package tree out in `stage`: host/<OpType>/ kernels,
/// host/SuperKernel/ entries (their source kept), config/host/binary_info_config.json (the
/// staticList index, binPaths under `package`) and host/program.json. Every command line and
/// compiler message goes to `log`. Throws an Error naming the operator, file or command that
/// failed.
void build_host_package(const graph::Graph& g, const fusion::Plan& plan, const std::string& package,
                        const std::string& build_dir, const std::string& stage, unsigned jobs,
                        std::string& log, support::Progress* progress = nullptr);

} // namespace skforge::compile
