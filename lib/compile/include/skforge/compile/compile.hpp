#pragma once

#include "skforge/support/log.hpp"

#include <optional>
#include <string>

namespace skforge::compile {

/// What `skc compile` produces.
enum class CompileMode {
    package,      ///< build and pack a .run
    sources_only, ///< NPU targets: write the SuperKernels' sources and JSON, build nothing
};

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
    CompileMode mode = CompileMode::package;
};

/// What it did.
struct CompileResult {
    std::string run_path; ///< empty with --sources-only
    bool cache_hit = false;
    std::string sources_dir; ///< OUTDIR/<name>_sources with --sources-only, else empty
};

/// The SoC a compile targets: SUPERKERNEL_COMPILE_SOC_VERSION, then ASCEND_COMPILE_SOC_VERSION,
/// then ASCEND_SOC_VERSION, then the graph's, else Ascend910_9391.
std::string target_soc(const std::string& graph_soc);

/// Runs the pipeline: check, plan, (code generation), package. On success writes
/// OUTDIR/<name>.run and OUTDIR/<name>_compile_log/<name>_compile_succ.log; on failure writes
/// OUTDIR/<name>_compile_error.log, leaves no .run, and throws an Error saying what failed.
/// With CompileMode::sources_only (NPU targets only) it stops after code generation and writes
/// OUTDIR/<name>_sources instead of the .run, whole or not at all.
CompileResult compile(const CompileOptions& options, support::Log& log);

} // namespace skforge::compile
