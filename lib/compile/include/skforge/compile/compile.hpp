// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/support/log.hpp"
#include "skforge/support/progress.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace skforge::compile {

/// Which generator builds the SuperKernels of an NPU target.
enum class SkBackend {
    auto_detect, ///< cann when python3 can import the vendor's superkernel, else skforge
    cann,        ///< CANN's own superkernel.super_kernel.compile
    skforge,     ///< skforge's AscendC generator, built with bisheng
};

/// The backend named `text` ("auto", "cann" or "skforge"), or nullopt.
std::optional<SkBackend> parse_sk_backend(std::string_view text);

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
    bool use_cache = true; ///< false: neither the output directory's cache nor the shared one
    std::string cache_dir; ///< the shared cache (cache_store.hpp); empty: none
    std::optional<std::uint64_t> cache_max_size; ///< overrides the shared cache's config.json
    unsigned jobs = 0;                           ///< parallel builds; 0: one per core
    SkBackend sk_backend = SkBackend::auto_detect;
    /// NPU targets: whose conventions ("8.5", "9.0"); empty: the installed toolkit's
    /// (ASCEND_HOME_PATH), else the default (codegen/cann_release.hpp).
    std::string cann_version;
    CompileMode mode = CompileMode::package;
    /// Where to write a Makefile rule `<run>: <every input>` (depfile.hpp); nullopt: none.
    std::optional<std::string> depfile;
    support::Progress* progress = nullptr; ///< builds and packing (a bar on a TTY)
};

/// What it did.
struct CompileResult {
    std::string run_path; ///< empty with --sources-only
    bool cache_hit = false;
    std::string sources_dir; ///< OUTDIR/<name>_sources with --sources-only, else empty
    std::string name, version, npu_arch, soc; ///< the package compiled
    std::string cann_version; ///< NPU targets: the release line followed ("8.5", "9.0")
    std::size_t operators = 0, superkernels = 0;
    std::string compile_log; ///< OUTDIR/<name>_compile_log/<name>_compile_succ.log
};

/// The SoC a compile for `npu_arch` targets: SUPERKERNEL_COMPILE_SOC_VERSION, then
/// ASCEND_COMPILE_SOC_VERSION, then ASCEND_SOC_VERSION, then `graph_soc` (the graph's, when the
/// graph is for `npu_arch`), else kernel::default_soc(npu_arch) (Ascend910_9391; Ascend950PR_9599
/// for dav-3510).
std::string target_soc(const std::string& graph_soc, const std::string& npu_arch);

/// Runs the pipeline: check, plan, (code generation), package. On success writes
/// OUTDIR/<name>.run and OUTDIR/<name>_compile_log/<name>_compile_succ.log; on failure writes
/// OUTDIR/<name>_compile_error.log, leaves no .run, and throws an Error saying what failed.
/// With CompileMode::sources_only (NPU targets only) it stops after code generation and writes
/// OUTDIR/<name>_sources instead of the .run, whole or not at all. A cache hit sets the .run's
/// modification time to now. With `depfile`, writes it (whole) after every success, hit or
/// miss, and removes it on failure.
CompileResult compile(const CompileOptions& options, support::Log& log);

} // namespace skforge::compile
