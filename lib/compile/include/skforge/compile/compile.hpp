#pragma once

#include "skforge/support/log.hpp"

#include <optional>
#include <string>

namespace skforge::compile {

/// What `skc compile` was asked to do.
struct CompileOptions {
    std::string graph_path;
    std::string npu_arch; ///< empty: the graph's, else "host"
    std::string outdir = "static_kernel_compile_outputs";
    std::string name; ///< empty: <graph>_<arch>
    std::string version = "1.0.0";
    std::optional<std::string> sign_key;
    bool use_cache = true;
    unsigned jobs = 0; ///< parallel builds; 0: one per core
};

/// What it did.
struct CompileResult {
    std::string run_path;
    bool cache_hit = false;
};

/// The SoC a compile for `npu_arch` targets: SUPERKERNEL_COMPILE_SOC_VERSION, then
/// ASCEND_COMPILE_SOC_VERSION, then ASCEND_SOC_VERSION, then `graph_soc` (the graph's, when the
/// graph is for `npu_arch`), else kernel::default_soc(npu_arch) (Ascend910_9391; Ascend950PR_9599
/// for dav-3510).
std::string target_soc(const std::string& graph_soc, const std::string& npu_arch);

/// Runs the pipeline: check, plan, (code generation), package. On success writes
/// OUTDIR/<name>.run and OUTDIR/<name>_compile_log/<name>_compile_succ.log; on failure writes
/// OUTDIR/<name>_compile_error.log, leaves no .run, and throws an Error saying what failed.
CompileResult compile(const CompileOptions& options, support::Log& log);

} // namespace skforge::compile
