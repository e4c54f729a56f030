// SPDX-License-Identifier: Apache-2.0
#pragma once

// Building a target's package tree: host kernels and SuperKernels, NPU SuperKernels with
// bisheng, static kernels. Used by compile.cpp.
#include "skforge/codegen/ascendc.hpp"
#include "skforge/compile/compile.hpp"
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

/// The architecture a compile of `g` with `o` targets: --npu-arch, else the graph's, else host.
inline std::string target_arch(const CompileOptions& o, const graph::Graph& g) {
    return !o.npu_arch.empty() ? o.npu_arch : !g.npu_arch.empty() ? g.npu_arch : "host";
}

/// Builds every kernel and SuperKernel of `g` for the host in `build_dir` (with up to `jobs`
/// compilers at once) and lays the package tree out in `stage`: host/<OpType>/ kernels,
/// host/SuperKernel/ entries (their source kept), config/host/binary_info_config.json (the
/// staticList index, binPaths under `package`) and host/program.json. Every command line and
/// compiler message goes to `log`. Throws an Error naming the operator, file or command that
/// failed.
void build_host_package(const graph::Graph& g, const fusion::Plan& plan, const std::string& package,
                        const std::string& build_dir, const std::string& stage, unsigned jobs,
                        std::string& log, support::Progress* progress = nullptr);

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

/// Whether python3 can import the vendor's SuperKernel compiler (superkernel.super_kernel).
struct CannProbe {
    bool ok = false;
    std::string module; ///< the super_kernel module's file, when ok
    std::string output; ///< what the probe printed (the ImportError when not ok)
};

/// Runs the import probe; a python3 that cannot be started counts as not importable.
CannProbe probe_cann();

/// The vendor compiler of `probe` identified for the cache key: its module's path and SHA-256.
std::string cann_fingerprint(const CannProbe& probe);

/// Builds every SuperKernel of `plan` with the vendor's super_kernel.compile (one python3 per
/// segment, up to `jobs` at once, in build_dir/cann/<segment>/) and lays the package tree out in
/// `stage`: what the vendor wrote, <soc_dir>/SuperKernel/<kernel name>.{o,json} (and its generated
/// source as .cpp when it left one), and the static kernels of the operators left out; the
/// index covers both. The vendor's own log goes to `log`.
void build_cann_package(const graph::Graph& g, const fusion::Plan& plan, const std::string& soc,
                        const std::string& soc_dir, const std::string& package,
                        const std::string& build_dir, const std::string& stage, unsigned jobs,
                        std::string& log, support::Progress* progress = nullptr);

/// What build_npu_package would build, without building it: in `out_dir`, per SuperKernel,
/// <soc_dir>/SuperKernel/<segment>.cpp (the entry source), <segment>.json (its metadata as
/// packaged, sha256 empty) and the vendor compiler's inputs.
void write_npu_sources(const graph::Graph& g, const fusion::Plan& plan,
                       const codegen::NpuTarget& target, const std::string& soc_dir,
                       const std::string& out_dir, std::string& log);

/// Lays precompiled kernels out as static kernels: <soc_dir>/<OpType>/<stem>.{json,o}, and the
/// package's own index config/<soc_dir>/binary_info_config.json (written, and returned as text) in
/// the form CANN's runtime reads: per OpType a staticList, each entry's binPath
/// `<package>/<soc_dir>/<OpType>/<stem>.o` and simplifiedKey built from the operator's tensors.
/// With a plan, only the operators left out of every SuperKernel, and the index also lists
/// `extra` (the SuperKernels).
std::string stage_static_kernels(const graph::Graph& g, const fusion::Plan* plan,
                                 const std::string& package, const std::string& soc_dir,
                                 const std::string& stage, std::string& log,
                                 const std::string& extra_index = "{}");

} // namespace skforge::compile
