// SPDX-License-Identifier: Apache-2.0
#pragma once

// The NPU target with the vendor's backend: each segment's kernel_info goes to CANN's own
// super_kernel.compile, and what it writes is checked and packaged.
#include "skforge/codegen/cann_release.hpp"
#include "skforge/fusion/plan.hpp"
#include "skforge/graph/graph.hpp"
#include "skforge/support/progress.hpp"

#include <filesystem>
#include <string>

namespace skforge::compile {

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

/// The inputs of the vendor's own SuperKernel compiler for segment `s`, written into `dir`
/// (cann/<segment>/kernel_info.json and the driver skforge_cann_driver.py), beside the segment's
/// source and JSON (by build_npu_package and by --sources-only). A segment the vendor cannot be
/// given (no bin_path, compile-options it cannot carry) is only logged: the skforge backend does
/// not need these inputs. `cann` is the CANN line the vendor's compiler is of (the sub-kernel
/// JSON copies it is handed, codegen::cann_json_copies, go beside the kernel_info).
void write_vendor_compiler_inputs(const graph::Graph& g, const fusion::Plan& plan,
                                  const fusion::Segment& s, const std::filesystem::path& dir,
                                  codegen::CannVersion cann, std::string& log);

/// Builds every SuperKernel of `plan` with the vendor's super_kernel.compile (one python3 per
/// segment, up to `jobs` at once, in build_dir/cann/<segment>/) and lays the package tree out in
/// `stage`: what the vendor wrote, <soc_dir>/SuperKernel/<kernel name>.{o,json} (and its generated
/// source as .cpp when it left one), and the static kernels of the operators left out; the
/// index covers both. The vendor's own log goes to `log`.
void build_cann_package(const graph::Graph& g, const fusion::Plan& plan, const std::string& soc,
                        const std::string& soc_dir, const std::string& package,
                        const std::string& build_dir, const std::string& stage,
                        codegen::CannVersion cann, unsigned jobs, std::string& log,
                        support::Progress* progress = nullptr);

} // namespace skforge::compile
