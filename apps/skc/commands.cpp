// SPDX-License-Identifier: Apache-2.0
// skc's commands: glue between the options and the libraries (they do the work and render the
// results; this file only checks option values, calls them and prints).
#include "commands.hpp"

#include "../common/cli_main.hpp"
#include "skforge/codegen/cann_release.hpp"
#include "skforge/compile/report.hpp"
#include "skforge/fusion/report.hpp"
#include "skforge/graph/graph.hpp"
#include "skforge/graph/report.hpp"
#include "skforge/package/reader.hpp"
#include "skforge/package/report.hpp"
#include "skforge/package/signature.hpp"
#include "skforge/support/atomic_file.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/json.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace pkg = skforge::package;
using nlohmann::json;
using skforge::support::Error;
using skforge::support::ErrorKind;

namespace skforge::skc {

namespace {

using Lines = std::vector<std::string>;

void print_json(const json& j) {
    std::cout << support::dump_json(j, 2) << "\n";
}

// A result's text lines on stdout, each made printable (they quote names, paths and fields read
// from packages and caches).
void print_lines(const Lines& lines) {
    for (const auto& l : lines)
        cli::print_safe("%s\n", l.c_str());
}

// What pack and import say of their work, on stderr (stdout carries the result), made printable
// like print_lines: they quote names read from the directory or the vendor's .run.
void tell(const Lines& lines) {
    for (const auto& l : lines)
        std::fprintf(stderr, "%s\n", cli::terminal_safe(l).c_str());
}

// What pack and compile print on stdout: the result's path, or the result as one JSON object.
void print_result(const std::string& path, const json& doc, bool as_json) {
    if (as_json)
        print_json(doc);
    else
        std::cout << path << "\n";
}

std::int64_t source_date_epoch() {
    const char* env = std::getenv("SOURCE_DATE_EPOCH");
    if (env == nullptr || *env == '\0')
        return 0;
    char* end = nullptr;
    long long v = std::strtoll(env, &end, 10);
    if (*end != '\0' || v < 0)
        throw Error("SOURCE_DATE_EPOCH='" + std::string(env) + "' is not a non-negative integer",
                    ErrorKind::usage);
    return v;
}

// Checks --compress and --sign-key and sets what they say.
void apply(const Packing& p, pkg::Compression& compression, std::optional<std::string>& sign_key,
           std::optional<pkg::CannStamp>& cann) {
    if (p.compress != "gzip" && p.compress != "zstd")
        throw Error("--compress must be gzip or zstd, not '" + p.compress + "'", ErrorKind::usage);
    compression = p.compress == "gzip" ? pkg::Compression::gzip : pkg::Compression::zstd;
    if (!p.key.empty())
        sign_key = p.key;
    if (!p.cann_version.empty())
        cann = pkg::CannStamp{p.cann_version, pkg::StampSource::option, {}, {}};
}

// With SKFORGE_TIMING set, prints how long each phase took to stderr (for benchmarks).
class Timing {
  public:
    Timing() : m_on(std::getenv("SKFORGE_TIMING") != nullptr) {}
    void mark(const char* phase) {
        if (!m_on)
            return;
        auto now = std::chrono::steady_clock::now();
        std::fprintf(stderr, "timing: %-10s %.3f s\n", phase,
                     std::chrono::duration<double>(now - m_last).count());
        m_last = now;
    }

  private:
    bool m_on;
    std::chrono::steady_clock::time_point m_last = std::chrono::steady_clock::now();
};

// Loads and validates a graph; prints every diagnostic to stderr. Returns nullptr on errors.
// The graph is deliberately never freed (like mold and clang's -disable-free): freeing millions
// of small objects of a large graph costs more than the rest of `skc check`, and the process ends
// right after. It stays reachable through `t_keep`, so leak checkers do not report it.
const graph::Graph* load_checked(const std::string& path, std::optional<fusion::Plan>& plan,
                                 fusion::PlanDepth depth) {
    static graph::Graph* t_keep = nullptr;
    graph::Diagnostics diags;
    Timing timing;
    t_keep = new graph::Graph(graph::load_graph(path, diags));
    timing.mark("load");
    auto& g = *t_keep;
    if (!diags.has_errors()) {
        // Validation and planning only read the graph and its dependencies: plan on the other
        // core meanwhile, and keep the plan only if the graph is valid.
        graph::Diagnostics plan_diags;
        auto deps = graph::dependencies(g);
        timing.mark("depends");
        // An NPU graph is planned with the vendor's option defaults, as skc compile plans it
        // (the same on every CANN line skforge knows), and the default line's refusals.
        const bool npu = g.npu_arch == "dav-2201" || g.npu_arch == "dav-3510";
        const auto& release = codegen::cann_release(codegen::k_default_cann_version);
        auto planned = std::async(std::launch::async, [&] {
            return fusion::make_plan(g, deps, plan_diags, depth, {},
                                     npu ? &release.option_defaults : nullptr,
                                     npu ? release.plan_checks : fusion::ReleaseChecks{});
        });
        graph::validate_graph(g, deps, diags);
        timing.mark("validate");
        auto p = planned.get();
        timing.mark("plan");
        if (!diags.has_errors()) {
            diags.append(plan_diags);
            plan = std::move(p);
        }
    }
    std::fputs(diags.format().c_str(), stderr);
    if (diags.has_errors())
        tell({graph::report::errors_text(path, diags)});
    return diags.has_errors() ? nullptr : t_keep;
}

// The plan, like the graph, is never freed: a process-long object, reachable for leak checkers.
std::optional<fusion::Plan>& kept_plan() {
    static auto* t_plan = new std::optional<fusion::Plan>;
    return *t_plan;
}

// The shared compile cache's directory: the option, else SKFORGE_CACHE_DIR, else none.
std::string cache_dir_or_env(const std::string& option) {
    const char* env = std::getenv("SKFORGE_CACHE_DIR");
    return !option.empty() ? option : env != nullptr ? env : "";
}

// --cache-max-size: nullopt when not given; a usage error when not a size.
std::optional<std::uint64_t> cache_max_size(const std::string& text) {
    if (text.empty())
        return std::nullopt;
    auto size = compile::parse_size(text);
    if (!size)
        throw Error("--cache-max-size '" + text + "': expected bytes, or digits with K, M, G or T",
                    ErrorKind::usage);
    return size;
}

compile::CacheStore open_cache(const CacheArgs& a) {
    std::string dir = cache_dir_or_env(a.dir);
    if (dir.empty())
        throw Error("no cache directory: give --cache-dir DIR or set SKFORGE_CACHE_DIR",
                    ErrorKind::usage);
    // What the store finds damaged and works around (stats.json) is a warning on stderr.
    static cli::ConsoleLog warnings(true);
    return compile::CacheStore({dir,
                                cache_max_size(a.max_size),
                                compile::CacheOpen::existing,
                                {},
                                [](const std::string& m) { warnings.warn(m); }});
}

// A `skc cache` result: the JSON value with --json, else its text lines.
void show(const CacheArgs& a, const json& result, Lines (*text)(const json&)) {
    if (a.json)
        print_json(result);
    else
        print_lines(text(result));
}

} // namespace

int cmd_pack(PackArgs a) {
    auto& o = a.pack;
    apply(a.packing, o.compression, o.sign_key, o.cann);
    o.mtime = source_date_epoch();
    support::TerminalProgress bar(64u << 20);
    if (!a.out.quiet && ::isatty(2))
        o.progress = &bar;
    auto result = pkg::report::pack_result(o.output, pkg::pack(o));
    if (!a.out.quiet)
        tell(pkg::report::pack_text(result));
    print_result(o.output, result, a.out.json);
    return 0;
}

int cmd_import(ImportArgs a) {
    auto& o = a.import;
    apply(a.packing, o.compression, o.sign_key, o.cann);
    o.mtime = source_date_epoch();
    auto result = pkg::report::import_result(o.input, o.output, pkg::import_makeself(o));
    if (!a.out.quiet)
        tell(pkg::report::import_text(result));
    print_result(o.output, result, a.out.json);
    return 0;
}

int cmd_inspect(const InspectArgs& a) {
    pkg::report::InspectOptions o{a.list, a.verify, {}};
    for (const auto& k : a.trusted_keys)
        o.trusted.push_back(pkg::Key::load_public(k));
    if (!o.trusted.empty()) // --trusted-key implies --verify
        o.verify = true;
    pkg::RunPackage run(a.path);
    auto doc = pkg::report::inspect(run, o);
    if (a.json)
        print_json(doc);
    else
        print_lines(pkg::report::inspect_text(doc));
    return doc.at("ok").get<bool>() ? 0 : 1;
}

int cmd_keygen(const std::string& name) {
    for (const auto& p : {name + ".pem", name + ".pub.pem"}) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) == 0)
            throw Error("refusing to overwrite existing key file '" + p + "'");
    }
    auto key = pkg::Key::generate(name);
    print_lines(pkg::report::keygen_text(name, key));
    return 0;
}

int cmd_check(const std::string& path) {
    const auto* graph = load_checked(path, kept_plan(), fusion::PlanDepth::checks);
    if (graph == nullptr)
        return 1;
    print_lines({graph::report::check_text(path, *graph)});
    return 0;
}

int cmd_plan(const PlanArgs& a) {
    auto format = fusion::parse_plan_format(a.format);
    if (!format)
        throw Error("--format must be text, json, dot, svg or html, not '" + a.format + "'",
                    ErrorKind::usage);
    auto layout = fusion::parse_layout(a.layout);
    if (!layout)
        throw Error("--layout must be auto, dot or builtin, not '" + a.layout + "'",
                    ErrorKind::usage);
    auto& plan = kept_plan();
    const auto* graph = load_checked(a.graph, plan, fusion::PlanDepth::full);
    if (graph == nullptr)
        return 1;
    Timing timing;
    std::optional<support::AtomicFile> file;
    if (!a.output.empty())
        file.emplace(a.output, 0644);
    fusion::write_plan(*graph, *plan, *format, *layout, [&](std::string_view piece) {
        if (file)
            file->write(piece);
        else
            std::cout.write(piece.data(), static_cast<std::streamsize>(piece.size()));
    });
    if (file)
        file->commit();
    std::cout.flush();
    timing.mark("output");
    return 0;
}

int cmd_compile(CompileArgs a) {
    auto& o = a.compile;
    if (!a.depfile.empty())
        o.depfile = a.depfile;
    if (a.sources_only)
        o.mode = compile::CompileMode::sources_only;
    auto backend = compile::parse_sk_backend(a.sk_backend);
    if (!backend)
        throw Error("--sk-backend '" + a.sk_backend + "': expected auto, cann or skforge",
                    ErrorKind::usage);
    o.sk_backend = *backend;
    if (!o.cann_version.empty() && !codegen::parse_cann_version(o.cann_version))
        throw Error("--cann-version '" + o.cann_version + "': expected 8.5, 9.0 or 9.1",
                    ErrorKind::usage);
    if (!a.key.empty())
        o.sign_key = a.key;
    o.use_cache = !a.no_cache;
    o.cache_dir = cache_dir_or_env(a.cache_dir);
    o.cache_max_size = cache_max_size(a.max_size);
    support::TerminalProgress bar;
    if (!a.out.quiet && ::isatty(2))
        o.progress = &bar;
    cli::ConsoleLog log(a.out.quiet, stderr);
    auto r = compile::compile(o, log);
    print_result(a.sources_only ? r.sources_dir : r.run_path,
                 compile::report::compile_result(r, o.use_cache), a.out.json);
    return 0;
}

int cmd_cache_stats(const CacheArgs& a) {
    auto store = open_cache(a);
    show(a, compile::report::cache_stats(store.dir(), store.stats()),
         compile::report::cache_stats_text);
    return 0;
}

int cmd_cache_clean(const CacheArgs& a, const compile::CleanRequest& request) {
    auto store = open_cache(a);
    show(a, compile::report::cache_clean(store.dir(), store.clean(request)),
         compile::report::cache_clean_text);
    return 0;
}

int cmd_cache_verify(const CacheArgs& a, bool fix) {
    auto store = open_cache(a);
    auto how = fix ? compile::VerifyFix::remove : compile::VerifyFix::report;
    auto result = compile::report::cache_verify(store.dir(), store.verify(how), how);
    show(a, result, compile::report::cache_verify_text);
    return result.at("ok").get<bool>() ? 0 : 1;
}

} // namespace skforge::skc
