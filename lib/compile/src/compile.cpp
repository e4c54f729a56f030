// SPDX-License-Identifier: Apache-2.0
// The pipeline driver behind `skc compile`: check, plan, build, package, with compile logs and a
// cache. The host target builds kernels and SuperKernels (host_build.cpp); the NPU targets
// package precompiled kernels as static kernels, and refuse fusion they cannot build.
#include "skforge/compile/compile.hpp"
#include "skforge/compile/cache_store.hpp"

#include "skforge/compile/depfile.hpp"
#include "skforge/compile/output_cache.hpp"

#include "build_runner.hpp"
#include "inputs.hpp"
#include "npu_program.hpp"
#include "targets.hpp"

#include "skforge/codegen/cann_release.hpp"
#include "skforge/fusion/plan.hpp"
#include "skforge/graph/graph.hpp"
#include "skforge/kernel/soc.hpp"
#include "skforge/kernel/toolkit.hpp"
#include "skforge/package/cann_stamp.hpp"
#include "skforge/package/path_rules.hpp"
#include "skforge/package/writer.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/interrupt.hpp"
#include "skforge/support/json.hpp"
#include "skforge/support/process.hpp"
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
    if (!support::on_path("bisheng"))
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
        write_text(out.cache_file(arch), support::dump_json(cache, 2) + "\n");
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

// One compile of a graph for one target, as its steps fill it in.
struct Pipeline {
    const CompileOptions& o;
    const Outputs& out;
    const std::string& arch;
    graph::Graph& g;
    std::string& log;
    support::Log& user;
    const codegen::CannRelease* release = nullptr; ///< NPU: whose conventions
    std::optional<fusion::Plan> plan;
    std::string soc, soc_dir;
    std::string toolchain; ///< what builds the package, for the cache key
    bool npu_fusion = false;
    SkBackend backend = SkBackend::skforge;
    std::string key;                         ///< the cache key
    json cache;                              ///< the output directory's cache
    std::optional<package::CannStamp> stamp; ///< NPU targets: the CANN release built with
    std::optional<CacheStore> shared;

    codegen::NpuTarget target() const {
        return {arch, soc, ascend_home(),
                release ? release->version : codegen::k_default_cann_version};
    }
    // `r` with what the plan says about it.
    CompileResult described(CompileResult r) const {
        r.soc = soc;
        r.superkernels = plan->segments.size();
        r.cann_version = release ? std::string(release->name) : "";
        return r;
    }
};

// Step 0: the CANN release whose conventions an NPU target follows (option defaults, JSON keys,
// synchronisation): --cann-version, else the installed toolkit's, else the default.
void select_release(Pipeline& p) {
    if (!p.o.cann_version.empty() && !is_npu_arch(p.arch))
        throw Error("--cann-version chooses the conventions of NPU SuperKernels; the '" + p.arch +
                        "' target follows skforge's own",
                    support::ErrorKind::usage);
    if (is_npu_arch(p.arch)) {
        std::string where;
        p.release = &codegen::select_cann_release(p.o.cann_version, ascend_home(), where);
        // The package's stamp (cann-stamp.md): the release given or found; none by default.
        if (!p.o.cann_version.empty())
            p.stamp = package::CannStamp{p.o.cann_version, package::StampSource::option, {}, {}};
        else if (auto v = kernel::toolkit_version(ascend_home()); v && package::cann_line(*v))
            p.stamp = package::CannStamp{*v, package::StampSource::toolkit, {}, {}};
        p.log += "CANN conventions " + std::string(p.release->name) + " (" + where + ")\n";
        if (!p.release->operator_json_debug_fields)
            p.log += "CANN " + std::string(p.release->name) +
                     ": operator JSONs do not say whether a sub-kernel was compiled with printf, "
                     "assert or timestamp (asc-devkit 883c0f8b), so skforge's generator cannot "
                     "refuse one that was\n";
    }
}

// Step 1: check and plan the graph for the target, whose NPU rules may refuse it; then the SoC
// and the directory the runtime will look for the package's kernels in, refused before any build.
void check_and_plan(Pipeline& p) {
    graph::Diagnostics diags;
    auto deps = graph::dependencies(p.g);
    graph::validate_graph(p.g, deps, diags);
    if (!diags.has_errors())
        p.plan = fusion::make_plan(p.g, deps, diags, fusion::PlanDepth::full, p.arch,
                                   p.release ? &p.release->option_defaults : nullptr,
                                   p.release ? p.release->plan_checks : fusion::ReleaseChecks{});
    p.log += diags.format();
    if (diags.has_errors())
        throw Error(p.o.graph_path + ": " + std::to_string(diags.error_count()) +
                    " error(s) in the graph:\n" + diags.format());
    // The graph's SoC is one of the graph's architecture: a compile for another one (--npu-arch)
    // takes that architecture's default instead.
    const bool graph_arch = p.g.npu_arch.empty() || p.g.npu_arch == p.arch;
    p.soc = p.arch == "host" ? "host"
                             : target_soc(graph_arch ? p.g.soc_version : std::string(), p.arch);
    p.soc_dir = kernel::target_soc_dir(p.soc, p.arch);
    p.log += "graph " + p.g.name + ": " + std::to_string(p.g.ops.size()) + " operators, " +
             std::to_string(p.plan->segments.size()) + " SuperKernel segment(s); target " + p.arch +
             ", SoC " + p.soc + "\n";
}

// Step 2: what builds the package (the host compiler, bisheng or the vendor's compiler), refused
// when it cannot be built.
void choose_toolchain(Pipeline& p) {
    if (p.arch == "host") {
        if (p.o.sk_backend == SkBackend::cann)
            throw Error("--sk-backend cann builds NPU SuperKernels; the host target has only "
                        "skforge's generator",
                        support::ErrorKind::usage);
        p.toolchain = host_fingerprint(p.g);
        return;
    }
    // dav-2201 or dav-3510: target_soc_dir refused any other.
    p.npu_fusion = !p.plan->segments.empty();
    if (p.npu_fusion)
        p.backend = resolve_backend(p.o.sk_backend, p.plan->segments.size(), p.toolchain, p.log);
    p.toolchain += "CANN conventions " + std::string(p.release->name) + "\n";
    if (p.stamp) { // the stamp is in the package, so in the key
        if (auto cores = kernel::known_soc_cores(p.soc)) {
            p.stamp->cube_cores = static_cast<unsigned>(cores->aic);
            p.stamp->vector_cores = static_cast<unsigned>(cores->aiv);
        }
        p.toolchain += "CANN stamp " + package::stamp_json(*p.stamp).dump() + "\n";
    }
    for (const auto& op : p.g.ops)
        if (op.kernel_index >= 0 && op.kernel.bin_path.empty())
            throw Error("operator '" + op.name + "' has no kernel binary (bin_path): " +
                        (p.npu_fusion ? "SuperKernels link the compiled sub-kernels"
                                      : "static packaging needs every kernel compiled"));
}

// Step 3: the caches, the output directory's, then the shared one. True when one of them had the
// package, which is then in place.
bool fetch_cached(Pipeline& p) {
    p.key = cache_key(p.g, p.o, p.arch, p.soc, p.toolchain);
    p.cache = read_output_cache(p.out.cache_file(p.arch), p.user);
    for (auto it = p.cache.begin(); it != p.cache.end();)
        it = output_cache_entry_live(it.value(), p.out.dir) ? std::next(it) : p.cache.erase(it);
    if (p.o.use_cache && p.cache.contains(p.key) && p.cache[p.key]["run"] == p.out.name + ".run") {
        p.user.info("cache hit: " + p.out.run() + " is up to date");
        p.log += "cache hit " + p.key + "\n";
        return true;
    }
    p.shared = open_shared(p.o, p.user);
    if (p.shared && fetch_shared(*p.shared, p.key, p.out, p.log, p.user)) {
        record_run(p.cache, p.key, p.out, p.arch, p.user);
        return true;
    }
    p.user.info(std::string(p.o.use_cache ? "cache miss" : "cache disabled") + ": building " +
                p.out.run());
    return false;
}

// Step 4: the package tree in `stage`: built (host, NPU SuperKernels) or the precompiled kernels
// laid out (NPU without fusion); on an NPU target also what libskforge_runtime launches there,
// whichever built the SuperKernels.
void build_tree(const Pipeline& p, const std::string& stage) {
    const CompileOptions& o = p.o;
    unsigned jobs = o.jobs != 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
    const bool vendor = p.npu_fusion && p.backend == SkBackend::cann;
    if (p.arch != "host")
        for (const auto& w : deterministic_level_ties(p.g, p.npu_fusion ? &*p.plan : nullptr)) {
            p.user.warn(w);
            p.log += "warning: " + w + "\n";
        }
    if (p.arch == "host") {
        TempDir build(p.out.dir);
        build_host_package(p.g, *p.plan, o.name, build.path(), stage, jobs, p.log, o.progress);
    } else if (vendor) {
        TempDir build(p.out.dir);
        build_cann_package(p.g, *p.plan, p.soc, p.soc_dir, o.name, build.path(), stage,
                           p.release ? p.release->version : codegen::k_default_cann_version, jobs,
                           p.log, o.progress);
    } else if (p.npu_fusion) {
        TempDir build(p.out.dir);
        build_npu_package(p.g, *p.plan, p.target(), o.name, p.soc_dir, build.path(), stage, jobs,
                          p.log, o.progress);
    } else {
        p.log += "static kernels:\n";
        stage_static_kernels(p.g, nullptr, o.name, p.soc_dir, stage, p.log);
    }
    if (p.arch != "host")
        write_npu_program(p.g, *p.plan, {p.arch, p.soc, ascend_home()}, p.soc_dir,
                          vendor ? SuperKernelNames::vendor : SuperKernelNames::segment, stage,
                          p.log);
}

// Step 5: the tree packed into OUTDIR/<name>.run, recorded in both caches.
void pack_tree(Pipeline& p, const std::string& stage) {
    package::PackOptions po{stage, p.out.run(), p.o.version, p.arch, p.soc};
    po.sign_key = p.o.sign_key;
    po.inputs_digest = p.key;
    po.cann = p.stamp;
    po.progress = p.o.progress;
    if (const char* sde = std::getenv("SOURCE_DATE_EPOCH"))
        po.mtime = std::atoll(sde);
    auto packed = package::pack(po);
    p.log += "packed " + p.out.run() + " (payload sha256 " + packed.header.payload_sha256 + ")\n";
    record_run(p.cache, p.key, p.out, p.arch, p.user);
    if (p.shared)
        insert_shared(*p.shared, p.key, p.out, p.log, p.user);
}

CompileResult run_pipeline(const CompileOptions& o, const Outputs& out, const std::string& arch,
                           graph::Graph& g, std::string& log, support::Log& user) {
    Pipeline p{o, out, arch, g, log, user};
    select_release(p);
    check_and_plan(p);
    if (o.mode == CompileMode::sources_only)
        return p.described(write_sources(g, *p.plan, p.target(), p.soc_dir, out, log, user));
    choose_toolchain(p);
    if (fetch_cached(p))
        return p.described({out.run(), true});
    TempDir stage(out.dir);
    build_tree(p, stage.path());
    pack_tree(p, stage.path());
    return p.described({out.run(), false});
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
    for (auto check : {package::check_package_name, package::check_kernel_package_name})
        if (auto bad = check(o.name))
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
            write_text(*o.depfile,
                       depfile_rule(result.run_path, with_self(compile_inputs(g, arch, o))));
        write_text(out.succ_log(), log + "success\n");
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
        write_text(out.error_log(), log + "error: " + e.what() + "\n");
        throw Error(std::string(e.what()) + "\n(details: " + out.error_log() + ")", e.kind());
    }
}

} // namespace skforge::compile
