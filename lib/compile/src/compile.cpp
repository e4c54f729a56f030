// SPDX-License-Identifier: Apache-2.0
// The pipeline driver behind `skc compile`: check, plan, build, package, with compile logs and a
// cache. The host target builds kernels and SuperKernels (host_build.cpp); the NPU targets
// package precompiled kernels as static kernels, and refuse fusion they cannot build.
#include "skforge/compile/compile.hpp"
#include "skforge/compile/cache_store.hpp"

#include "skforge/compile/depfile.hpp"
#include "skforge/compile/output_cache.hpp"

#include "inputs.hpp"
#include "npu_program.hpp"
#include "targets.hpp"

#include "skforge/codegen/cann_release.hpp"
#include "skforge/fusion/plan.hpp"
#include "skforge/graph/graph.hpp"
#include "skforge/kernel/soc.hpp"
#include "skforge/package/path_rules.hpp"
#include "skforge/package/writer.hpp"
#include "skforge/support/atomic_file.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/interrupt.hpp"
#include "skforge/support/json.hpp"
#include "skforge/support/safe_path.hpp"
#include "skforge/support/sha256.hpp"
#include "skforge/support/temp_dir.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <unistd.h>

namespace skforge::compile {

namespace fs = std::filesystem;
using nlohmann::json;
using support::Error;

std::string target_soc(const std::string& graph_soc, const std::string& npu_arch) {
    for (const char* var :
         {"SUPERKERNEL_COMPILE_SOC_VERSION", "ASCEND_COMPILE_SOC_VERSION", "ASCEND_SOC_VERSION"})
        if (const char* v = std::getenv(var); v != nullptr && *v != '\0')
            return v;
    return graph_soc.empty() ? std::string(kernel::default_soc(npu_arch)) : graph_soc;
}

std::optional<SkBackend> parse_sk_backend(std::string_view text) {
    if (text == "auto")
        return SkBackend::auto_detect;
    if (text == "cann")
        return SkBackend::cann;
    if (text == "skforge")
        return SkBackend::skforge;
    return std::nullopt;
}

namespace {

std::string ascend_home() {
    const char* v = std::getenv("ASCEND_HOME_PATH");
    return v != nullptr ? v : "";
}

bool on_path(const std::string& tool) {
    const char* path = std::getenv("PATH");
    std::string p = path ? path : "";
    std::size_t start = 0;
    while (start <= p.size()) {
        auto colon = p.find(':', start);
        std::string dir =
            p.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        if (!dir.empty() && ::access((dir + "/" + tool).c_str(), X_OK) == 0)
            return true;
        if (colon == std::string::npos)
            break;
        start = colon + 1;
    }
    return false;
}

// Everything that decides the output, hashed: skforge, target, options, graph, kernels.
std::string cache_key(const graph::Graph& g, const CompileOptions& o, const std::string& arch,
                      const std::string& soc, const std::string& toolchain) {
    support::Sha256 h;
    h.update("toolchain " + toolchain + "\n");
    h.update(std::string("skforge ") + SKFORGE_VERSION + "\narch=" + arch + "\nsoc=" + soc +
             "\nname=" + o.name + "\nversion=" + o.version +
             "\nsign=" + (o.sign_key ? support::sha256_hex(support::read_file(*o.sign_key)) : "") +
             "\nSOURCE_DATE_EPOCH=" +
             (std::getenv("SOURCE_DATE_EPOCH") ? std::getenv("SOURCE_DATE_EPOCH") : "") + "\n");
    h.update(support::read_file(g.file));
    // Operators share kernels: read and hash each file once.
    std::map<std::string, std::string> file_digest;
    auto digest_of = [&](const std::string& path) -> const std::string& {
        auto it = file_digest.find(path);
        if (it == file_digest.end())
            it = file_digest
                     .emplace(path, support::sha256_file(path, support::k_max_read_bytes).sha256)
                     .first;
        return it->second;
    };
    for (const auto& op : g.ops) {
        h.update("\nop " + op.name + " " + op.kernel.json_path + " " + op.kernel.bin_path + "\n");
        if (!op.kernel.json_path.empty()) // a prefetch runs no kernel
            h.update(digest_of(graph::resolve_path(g, op.kernel.json_path)));
        if (!op.kernel.bin_path.empty())
            h.update(digest_of(graph::resolve_path(g, op.kernel.bin_path)));
    }
    return support::digest_hex(h.finish());
}

// The backend that builds this compile's NPU SuperKernels: `asked`, with auto resolved by the
// import probe. Sets `toolchain` to the chosen compiler's identity for the cache key.
SkBackend resolve_backend(SkBackend asked, std::size_t segments, std::string& toolchain,
                          std::string& log) {
    if (asked != SkBackend::skforge) {
        CannProbe probe = probe_cann();
        if (probe.ok) {
            log += "SuperKernel backend: cann (" + probe.module + ")\n";
            toolchain = cann_fingerprint(probe);
            return SkBackend::cann;
        }
        if (asked == SkBackend::cann)
            throw Error("--sk-backend cann: python3 cannot import the vendor's SuperKernel "
                        "compiler (from superkernel import super_kernel):\n" +
                        probe.output + (probe.output.ends_with('\n') ? "" : "\n") +
                        "install the CANN toolkit and source its set_env.sh (PYTHONPATH), or use "
                        "--sk-backend skforge");
        log += "SuperKernel backend: skforge (python3 cannot import superkernel)\n";
    } else {
        log += "SuperKernel backend: skforge\n";
    }
    if (!on_path("bisheng"))
        throw Error("the graph asks for SuperKernel fusion (" + std::to_string(segments) +
                    " segment(s)), which needs the CANN compiler 'bisheng' on PATH: install the "
                    "CANN toolkit and source its set_env.sh, set super_kernel_optimize: false to "
                    "package the precompiled kernels unfused, or compile for --npu-arch host");
    // The CANN headers the generated sources include come from ASCEND_HOME_PATH.
    toolchain = npu_fingerprint() + "ASCEND_HOME_PATH=" + ascend_home() + "\n";
    return SkBackend::skforge;
}

// Every path under the output directory, each made by support::path_beneath.
struct Outputs {
    std::string dir, name;
    std::string run() const { return support::path_beneath(dir, name + ".run"); }
    std::string log_dir() const { return support::path_beneath(dir, name + "_compile_log"); }
    std::string succ_log() const {
        return support::path_beneath(dir, name + "_compile_log/" + name + "_compile_succ.log");
    }
    std::string error_log() const {
        return support::path_beneath(dir, name + "_compile_error.log");
    }
    std::string sources() const { return support::path_beneath(dir, name + "_sources"); }
    std::string cache_file(const std::string& arch) const {
        return support::path_beneath(dir, "static_kernel_cache/skforge-" SKFORGE_VERSION "_" +
                                              arch + ".json");
    }
};

void write_whole(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    support::AtomicFile f(path, 0644);
    f.write(text);
    f.commit();
}

// Records OUTDIR/<name>.run under `key` in the output directory's cache; it replaces whatever
// another key recorded for the same file.
// A cache that cannot be written is a warning.
void record_run(json& cache, const std::string& key, const Outputs& out, const std::string& arch,
                support::Log& user) {
    for (auto it = cache.begin(); it != cache.end();)
        it = it.value()["run"] == out.name + ".run" ? cache.erase(it) : std::next(it);
    cache[key] = {{"run", out.name + ".run"},
                  {"sha256", support::sha256_file(out.run(), UINT64_MAX).sha256}};
    try {
        write_whole(out.cache_file(arch), support::dump_json(cache, 2) + "\n");
    } catch (const std::exception& e) {
        user.warn("output directory's cache not written: " + std::string(e.what()));
    }
}

// The shared cache, or nullopt when there is none or it cannot be used (a warning says why: a
// cache is never a reason for a compile to fail).
std::optional<CacheStore> open_shared(const CompileOptions& o, support::Log& user) {
    if (!o.use_cache || o.cache_dir.empty())
        return std::nullopt;
    try {
        return CacheStore(
            {o.cache_dir, o.cache_max_size, CacheOpen::create, {}, [&user](const std::string& m) {
                 user.warn(m);
             }});
    } catch (const Error& e) {
        user.warn("shared cache not used: " + std::string(e.what()));
        return std::nullopt;
    }
}

// True when the shared cache had the .run for `key` and put a verified copy in place.
bool fetch_shared(CacheStore& store, const std::string& key, const Outputs& out, std::string& log,
                  support::Log& user) {
    try {
        auto r = store.fetch(key, out.run());
        if (r.outcome == FetchOutcome::hit) {
            user.info("cache hit: " + out.run() + " from the shared cache " + store.dir());
            log += "shared cache hit " + key + " (" + store.dir() + ")\n";
            return true;
        }
        if (r.outcome == FetchOutcome::corrupt) {
            user.warn(r.problem + "; rebuilding");
            log += r.problem + "\n";
        }
    } catch (const Error& e) {
        user.warn("shared cache " + store.dir() + " not read: " + e.what());
    }
    return false;
}

void insert_shared(CacheStore& store, const std::string& key, const Outputs& out, std::string& log,
                   support::Log& user) {
    try {
        auto evicted = store.insert(key, out.run());
        log += "stored in the shared cache " + store.dir() + "\n";
        if (evicted.removed != 0)
            user.info("shared cache " + store.dir() + ": evicted " +
                      std::to_string(evicted.removed) + " least recently used entries (" +
                      format_size(evicted.bytes) + ") to stay within max_size");
    } catch (const Error& e) {
        user.warn("cannot store " + out.run() + " in the shared cache " + store.dir() + ": " +
                  e.what());
    }
}

// A build directory `.skc-build.<pid>.XXXXXX` beside the output (support::TempDir: removed when
// it goes out of scope or the process is interrupted, and by a later compile if its process was
// killed).
struct TempDir : support::TempDir {
    explicit TempDir(const std::string& parent) : support::TempDir(parent, ".skc-build.") {}
};

void mark_fresh(const std::string& path) {
    std::error_code ec;
    fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
    if (ec)
        throw Error("cannot set the modification time of " + path + ": " + ec.message());
}

// A depfile's prerequisites: the compile's inputs and skc itself.
std::vector<std::string> with_self(std::vector<std::string> inputs) {
    inputs.push_back(self_executable());
    return inputs;
}

bool is_npu_arch(const std::string& arch) {
    return arch == "dav-2201" || arch == "dav-3510";
}

// --sources-only: what the NPU build would compile, written whole into OUTDIR/<name>_sources.
CompileResult write_sources(const graph::Graph& g, const fusion::Plan& plan,
                            const codegen::NpuTarget& target, const std::string& soc_dir,
                            const Outputs& out, std::string& log, support::Log& user) {
    const std::string& arch = target.arch;
    if (!is_npu_arch(arch))
        throw Error("--sources-only writes the sources of NPU SuperKernels, not of the '" + arch +
                        "' target: compile for --npu-arch dav-2201 or dav-3510",
                    support::ErrorKind::usage);
    TempDir tmp(out.dir);
    write_npu_sources(g, plan, target, soc_dir, tmp.path(), log);
    fs::permissions(tmp.path(), fs::perms(0755));
    fs::remove_all(out.sources());
    fs::rename(tmp.path(), out.sources());
    tmp.release();
    user.info("sources of " + std::to_string(plan.segments.size()) + " SuperKernel(s) in " +
              out.sources() + " (nothing built)");
    log += "sources written to " + out.sources() + "\n";
    CompileResult r;
    r.sources_dir = out.sources();
    return r;
}

CompileResult run_pipeline(const CompileOptions& o, const Outputs& out, const std::string& arch,
                           graph::Graph& g, std::string& log, support::Log& user) {
    // 0. The CANN release whose conventions an NPU target follows (option defaults, JSON keys,
    // synchronisation): --cann-version, else the installed toolkit's, else the default.
    const codegen::CannRelease* release = nullptr;
    if (!o.cann_version.empty() && !is_npu_arch(arch))
        throw Error("--cann-version chooses the conventions of NPU SuperKernels; the '" + arch +
                        "' target follows skforge's own",
                    support::ErrorKind::usage);
    if (is_npu_arch(arch)) {
        std::string where;
        release = &codegen::select_cann_release(o.cann_version, ascend_home(), where);
        log += "CANN conventions " + std::string(release->name) + " (" + where + ")\n";
    }
    // 1. Check and plan.
    graph::Diagnostics diags;
    auto deps = graph::dependencies(g);
    graph::validate_graph(g, deps, diags);
    std::optional<fusion::Plan> plan;
    if (!diags.has_errors()) // planned for the target, whose NPU rules may refuse the graph
        plan = fusion::make_plan(g, deps, diags, fusion::PlanDepth::full, arch,
                                 release ? &release->option_defaults : nullptr);
    log += diags.format();
    if (diags.has_errors())
        throw Error(o.graph_path + ": " + std::to_string(diags.error_count()) +
                    " error(s) in the graph:\n" + diags.format());
    // The graph's SoC is one of the graph's architecture: a compile for another one (--npu-arch)
    // takes that architecture's default instead.
    const bool graph_arch = g.npu_arch.empty() || g.npu_arch == arch;
    std::string soc =
        arch == "host" ? "host" : target_soc(graph_arch ? g.soc_version : std::string(), arch);
    // Where the runtime will look for this package's kernels: refused here, before any build.
    std::string soc_dir = kernel::target_soc_dir(soc, arch);
    log += "graph " + g.name + ": " + std::to_string(g.ops.size()) + " operators, " +
           std::to_string(plan->segments.size()) + " SuperKernel segment(s); target " + arch +
           ", SoC " + soc + "\n";
    auto described = [&](CompileResult r) {
        r.soc = soc;
        r.superkernels = plan->segments.size();
        r.cann_version = release ? std::string(release->name) : "";
        return r;
    };
    const codegen::NpuTarget target{arch, soc, ascend_home(),
                                    release ? release->version : codegen::k_default_cann_version};
    if (o.mode == CompileMode::sources_only)
        return described(write_sources(g, *plan, target, soc_dir, out, log, user));
    // 2. Targets.
    std::string toolchain;
    bool npu_fusion = false;
    SkBackend backend = SkBackend::skforge;
    if (arch == "host") {
        if (o.sk_backend == SkBackend::cann)
            throw Error("--sk-backend cann builds NPU SuperKernels; the host target has only "
                        "skforge's generator",
                        support::ErrorKind::usage);
        toolchain = host_fingerprint(g);
    } else { // dav-2201 or dav-3510: target_soc_dir refused any other
        npu_fusion = !plan->segments.empty();
        if (npu_fusion)
            backend = resolve_backend(o.sk_backend, plan->segments.size(), toolchain, log);
        toolchain += "CANN conventions " + std::string(release->name) + "\n";
        for (const auto& op : g.ops)
            if (op.kernel_index >= 0 && op.kernel.bin_path.empty())
                throw Error("operator '" + op.name + "' has no kernel binary (bin_path): " +
                            (npu_fusion ? "SuperKernels link the compiled sub-kernels"
                                        : "static packaging needs every kernel compiled"));
    }
    // 3. Cache: the output directory's, then the shared one.
    std::string key = cache_key(g, o, arch, soc, toolchain);
    json cache = read_output_cache(out.cache_file(arch), user);
    for (auto it = cache.begin(); it != cache.end();)
        it = output_cache_entry_live(it.value(), out.dir) ? std::next(it) : cache.erase(it);
    if (o.use_cache && cache.contains(key) && cache[key]["run"] == out.name + ".run") {
        user.info("cache hit: " + out.run() + " is up to date");
        log += "cache hit " + key + "\n";
        return described({out.run(), true});
    }
    auto shared = open_shared(o, user);
    if (shared && fetch_shared(*shared, key, out, log, user)) {
        record_run(cache, key, out, arch, user);
        return described({out.run(), true});
    }
    user.info(std::string(o.use_cache ? "cache miss" : "cache disabled") + ": building " +
              out.run());
    // 4. Build (host) or lay out the precompiled kernels (NPU), then package.
    TempDir stage(out.dir);
    unsigned jobs = o.jobs != 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
    if (arch == "host") {
        TempDir build(out.dir);
        build_host_package(g, *plan, o.name, build.path(), stage.path(), jobs, log, o.progress);
    } else if (npu_fusion && backend == SkBackend::cann) {
        TempDir build(out.dir);
        build_cann_package(g, *plan, soc, soc_dir, o.name, build.path(), stage.path(), jobs, log,
                           o.progress);
    } else if (npu_fusion) {
        TempDir build(out.dir);
        build_npu_package(g, *plan, target, o.name, soc_dir, build.path(), stage.path(), jobs, log,
                          o.progress);
    } else {
        log += "static kernels:\n";
        stage_static_kernels(g, nullptr, o.name, soc_dir, stage.path(), log);
    }
    // What libskforge_runtime launches on an NPU, whichever built the SuperKernels.
    if (arch != "host")
        write_npu_program(g, *plan, {arch, soc, ascend_home()}, soc_dir,
                          npu_fusion && backend == SkBackend::cann ? SuperKernelNames::vendor
                                                                   : SuperKernelNames::segment,
                          stage.path(), log);
    package::PackOptions po{stage.path(), out.run(), o.version, arch, soc};
    po.sign_key = o.sign_key;
    po.inputs_digest = key;
    po.progress = o.progress;
    if (const char* sde = std::getenv("SOURCE_DATE_EPOCH"))
        po.mtime = std::atoll(sde);
    auto packed = package::pack(po);
    log += "packed " + out.run() + " (payload sha256 " + packed.header.payload_sha256 + ")\n";
    record_run(cache, key, out, arch, user);
    if (shared)
        insert_shared(*shared, key, out, log, user);
    return described({out.run(), false});
}

} // namespace

CompileResult compile(const CompileOptions& options, support::Log& user) {
    if (options.depfile && options.mode == CompileMode::sources_only)
        throw Error("--depfile lists what a .run is made from; --sources-only writes none",
                    support::ErrorKind::usage);
    CompileOptions o = options;
    graph::Diagnostics load_diags;
    graph::Graph g = graph::load_graph(o.graph_path, load_diags);
    std::string arch = target_arch(o, g);
    if (g.from_kernel_info && arch == "host")
        throw Error(o.graph_path +
                        " is a vendor kernel_info: it names precompiled NPU sub-kernels, "
                        "which the host target cannot build; compile for dav-2201 or "
                        "dav-3510",
                    support::ErrorKind::usage);
    if (o.name.empty())
        o.name = g.name + "_" + arch;
    if (auto bad = package::check_package_name(o.name))
        throw Error("package name '" + o.name + "' " + *bad + " (use --name)",
                    support::ErrorKind::usage);
    Outputs out{o.outdir, o.name};
    fs::create_directories(out.dir);
    // What an interrupted or killed compile left (its pid is gone): build directories, files.
    support::remove_stale_temporaries(out.dir);
    std::string log = "skc compile " + o.graph_path + " (skforge " SKFORGE_VERSION ")\n";
    try {
        if (load_diags.has_errors())
            throw Error(o.graph_path + ": " + std::to_string(load_diags.error_count()) +
                        " error(s) in the graph:\n" + load_diags.format());
        auto result = run_pipeline(o, out, arch, g, log, user);
        // A hit leaves the .run as it was: make and ninja, which compare times, must still see it
        // newer than the input whose change made them run this compile.
        if (result.cache_hit)
            mark_fresh(result.run_path);
        if (o.depfile)
            write_whole(*o.depfile,
                        depfile_rule(result.run_path, with_self(compile_inputs(g, arch, o))));
        write_whole(out.succ_log(), log + "success\n");
        fs::remove(out.error_log());
        result.name = o.name;
        result.version = o.version;
        result.npu_arch = arch;
        result.operators = g.ops.size();
        result.compile_log = out.succ_log();
        return result;
    } catch (const Error& e) {
        // Failure: the error log and nothing else, not even a .run from an earlier build.
        std::error_code ec;
        fs::remove_all(o.mode == CompileMode::sources_only ? out.sources() : out.run(), ec);
        fs::remove_all(out.log_dir(), ec);
        if (o.depfile)
            fs::remove(*o.depfile, ec);
        write_whole(out.error_log(), log + "error: " + e.what() + "\n");
        throw Error(std::string(e.what()) + "\n(details: " + out.error_log() + ")", e.kind());
    }
}

} // namespace skforge::compile
