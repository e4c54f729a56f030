// SPDX-License-Identifier: Apache-2.0
#pragma once

// Every target's build, for compile.cpp: the host (host_build.hpp), the NPU with skforge's
// backend (npu_build.hpp) or the vendor's (cann_build.hpp), and operators as static kernels
// (static_kernels.hpp).
#include "cann_build.hpp"
#include "host_build.hpp"
#include "npu_build.hpp"
#include "static_kernels.hpp"

#include "skforge/compile/compile.hpp"

#include <string>

namespace skforge::compile {

/// The architecture a compile of `g` with `o` targets: --npu-arch, else the graph's, else host.
inline std::string target_arch(const CompileOptions& o, const graph::Graph& g) {
    return !o.npu_arch.empty() ? o.npu_arch : !g.npu_arch.empty() ? g.npu_arch : "host";
}

} // namespace skforge::compile
