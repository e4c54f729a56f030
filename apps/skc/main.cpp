// SPDX-License-Identifier: Apache-2.0
// skc: the offline pipeline's command line. It parses options into plain structs and calls the
// library; every error is caught once here and mapped to an exit code (0 ok, 1 failure, 2 usage).
#include "../common/cli_main.hpp"
#include "skforge/compile/cache_store.hpp"
#include "skforge/compile/compile.hpp"
#include "skforge/fusion/report.hpp"
#include "skforge/graph/graph.hpp"
#include "skforge/package/json_text.hpp"
#include "skforge/package/makeself.hpp"
#include "skforge/package/reader.hpp"
#include "skforge/package/signature.hpp"
#include "skforge/package/writer.hpp"
#include "skforge/support/atomic_file.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/interrupt.hpp"
#include "skforge/support/json.hpp"

#include <boost/program_options.hpp>
#include <chrono>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <iostream>
#include <malloc.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace po = boost::program_options;
using skforge::support::Error;
using skforge::support::ErrorKind;
namespace pkg = skforge::package;

namespace {

using Args = std::vector<std::string>;
using skforge::cli::CommandLine;
using skforge::cli::integer_value;

constexpr const char* k_exit_codes =
    "Exit status: 0 success, 1 failure, 2 usage error. See cli.md in /usr/share/doc/skforge/.";

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

// What pack and compile print on stdout: the result's path, or the result as one JSON object.
void print_result(const std::string& path, const nlohmann::json& doc, bool json) {
    if (json)
        std::cout << pkg::json_text(doc, 2) << "\n";
    else
        std::cout << path << "\n";
}

// --compress and --sign-key, as pack and import take them.
struct PackingFlags {
    std::string compress = "gzip";
    std::string key;

    void add(po::options_description_easy_init& add) {
        add("compress", po::value(&compress)->value_name("gzip|zstd"),
            "compression (default gzip)");
        add("sign-key", po::value(&key)->value_name("KEY.pem"),
            "Ed25519 private key (PEM, from skc keygen) to sign with");
    }
    // Checks them and sets what they say.
    void apply(pkg::Compression& compression, std::optional<std::string>& sign_key) const {
        if (compress != "gzip" && compress != "zstd")
            throw Error("--compress must be gzip or zstd, not '" + compress + "'",
                        ErrorKind::usage);
        compression = compress == "gzip" ? pkg::Compression::gzip : pkg::Compression::zstd;
        if (!key.empty())
            sign_key = key;
    }
};

int cmd_pack(const Args& args) {
    pkg::PackOptions o;
    PackingFlags packing;
    bool quiet = false, json = false;
    CommandLine cl("skc", "skc pack DIR -o OUT.run --package-version V [options]",
                   "Packs the kernel tree DIR into a signed, reproducible .run package.",
                   "Standard output: the .run's path, or with --json one JSON object (messages go\n"
                   "to stderr).\n" +
                       std::string(k_exit_codes));
    cl.positional("DIR", o.source_dir);
    cl.has_package_version();
    auto add = cl.add();
    add("output,o", po::value(&o.output)->required()->value_name("OUT.run"),
        "the .run file to write (its directory must exist)");
    add("package-version", po::value(&o.version)->required()->value_name("V"),
        "the package's version, e.g. 1.2.0");
    add("name", po::value(&o.name)->value_name("NAME"),
        "package name, the directory it installs into (default: the one name every "
        "index's binPaths start with, else OUT's stem)");
    add("npu-arch", po::value(&o.npu_arch)->value_name("A"), "NPU architecture, e.g. dav-2201");
    add("soc", po::value(&o.soc_version)->value_name("S"), "SoC version, e.g. Ascend910B1");
    packing.add(add);
    add("level", integer_value(o.level, "--level", 0, 19),
        "compression level: gzip 1..9, zstd 1..19; 0 or none: the default (gzip 6, zstd 3)");
    add("json", po::bool_switch(&json), "print the result as one JSON object");
    add("quiet,q", po::bool_switch(&quiet), "print nothing but the result and errors");
    if (!cl.parse(args))
        return 0;
    packing.apply(o.compression, o.sign_key);
    o.mtime = source_date_epoch();
    skforge::support::TerminalProgress bar(64u << 20);
    if (!quiet && ::isatty(2))
        o.progress = &bar;
    auto r = pkg::pack(o);
    const auto& h = r.header;
    if (!quiet) {
        std::fprintf(stderr,
                     "packed %s %s into %s: %llu entries, %llu bytes unpacked, %llu bytes %s "
                     "payload\npayload sha256 %s\n",
                     h.name.c_str(), h.version.c_str(), o.output.c_str(),
                     static_cast<unsigned long long>(h.file_count),
                     static_cast<unsigned long long>(h.unpacked_size),
                     static_cast<unsigned long long>(h.payload_size), packing.compress.c_str(),
                     h.payload_sha256.c_str());
        if (r.key_id)
            std::fprintf(stderr, "signed by key %s\n", r.key_id->c_str());
    }
    print_result(o.output,
                 {{"run", o.output},
                  {"name", h.name},
                  {"version", h.version},
                  {"npu_arch", h.npu_arch},
                  {"soc_version", h.soc_version},
                  {"compression", packing.compress},
                  {"file_count", h.file_count},
                  {"unpacked_size", h.unpacked_size},
                  {"payload_size", h.payload_size},
                  {"payload_sha256", h.payload_sha256},
                  {"signer_key_id", r.key_id ? nlohmann::json(*r.key_id) : nlohmann::json()}},
                 json);
    return 0;
}

// skc import: CANN's makeself static-kernel package as a skforge one (package/makeself.hpp).
int cmd_import(const Args& args) {
    pkg::ImportOptions o;
    PackingFlags packing;
    bool quiet = false, json = false;
    CommandLine cl(
        "skc", "skc import VENDOR.run -o OUT.run [options]",
        "Re-packs CANN's own static-kernel package (a makeself .run) as a signed,\n"
        "reproducible skforge package. Nothing in VENDOR.run is executed: its checksums\n"
        "are checked, its payload read with libarchive, the vendor's scripts left out.",
        "Standard output: OUT.run's path, or with --json one JSON object.\n" +
            std::string(k_exit_codes));
    cl.positional("VENDOR.run", o.input);
    auto add = cl.add();
    add("output,o", po::value(&o.output)->required()->value_name("OUT.run"),
        "the skforge .run to write (named after the package inside when you like)");
    add("package-version", po::value(&o.version)->value_name("V"),
        "version (default: the <datetime> of static_kernel_<datetime>_<pid>)");
    packing.add(add);
    add("json", po::bool_switch(&json), "print the result as one JSON object");
    add("quiet,q", po::bool_switch(&quiet), "print nothing but the result and errors");
    if (!cl.parse(args))
        return 0;
    packing.apply(o.compression, o.sign_key);
    o.mtime = source_date_epoch();
    auto r = pkg::import_makeself(o);
    if (!quiet)
        std::fprintf(stderr, "imported %s %s from %s into %s: %llu entries%s\n",
                     r.header.name.c_str(), r.header.version.c_str(), o.input.c_str(),
                     o.output.c_str(), static_cast<unsigned long long>(r.header.file_count),
                     r.key_id ? (", signed by key " + *r.key_id).c_str() : "");
    print_result(o.output,
                 {{"run", o.output},
                  {"from", o.input},
                  {"name", r.header.name},
                  {"version", r.header.version},
                  {"file_count", r.header.file_count},
                  {"payload_sha256", r.header.payload_sha256},
                  {"signer_key_id", r.key_id ? nlohmann::json(*r.key_id) : nlohmann::json()}},
                 json);
    return 0;
}

struct InspectResult {
    nlohmann::json doc;
    bool ok = true;
};

void verify_into(const pkg::RunPackage& run, const std::vector<pkg::Key>& trusted,
                 InspectResult& out) {
    auto& v = out.doc["verification"];
    auto attempt = [&](const char* key, auto&& fn) {
        try {
            fn();
            v[key] = "ok";
        } catch (const Error& e) {
            v[key] = e.what();
            out.ok = false;
        }
    };
    // A stub that differs from the one skforge renders for this header would run other code
    // than the package claims; nothing else may explain a difference.
    attempt("stub", [&] {
        if (!run.stub_is_canonical())
            throw Error("modified: it differs from the stub skforge writes for this header");
    });
    skforge::support::Digest prefix{};
    bool digests = false;
    attempt("payload_digest", [&] {
        prefix = run.verify_digests();
        digests = true;
    });
    attempt("entries", [&] {
        struct Null : pkg::EntrySink {
            void begin(const pkg::ManifestEntry&) override {}
            void data(std::span<const std::uint8_t>) override {}
            void end(const pkg::ManifestEntry&) override {}
        } sink;
        run.read_payload(sink);
    });
    attempt("scripts", [&] { run.check_scripts(run.read_manifest()); });
    if (!digests) {
        v["signature"] = "not checked (payload digest failed)";
        return;
    }
    auto state = run.check_signature(prefix, trusted);
    v["signature"] = std::string(pkg::signature_state_name(state));
    if (auto why = pkg::signature_refusal(state, !trusted.empty(), false)) {
        v["signature_policy"] = *why;
        out.ok = false;
    }
}

void print_text(const nlohmann::json& d) {
    auto line = [](const char* label, const nlohmann::json& value) {
        skforge::cli::print_safe("%-16s %s\n", label,
                                 value.is_string() ? value.get<std::string>().c_str()
                                                   : skforge::support::dump_json(value).c_str());
    };
    line("Package:", d["path"]);
    line("Name:", d["name"]);
    line("Version:", d["version"]);
    line("NPU arch:", d["npu_arch"]);
    line("SoC version:", d["soc_version"]);
    line("Toolchain:", d["toolchain"]);
    line("Compression:", d["compression"]);
    line("Files:", d["file_count"]);
    line("Unpacked size:", d["unpacked_size"]);
    line("File size:", d["file_size"]);
    line("Payload:", std::to_string(d["payload_size"].get<std::uint64_t>()) + " bytes at offset " +
                         std::to_string(d["payload_offset"].get<std::uint64_t>()));
    line("Payload SHA-256:", d["payload_sha256"]);
    if (d.contains("inputs_digest"))
        line("Inputs digest:", d["inputs_digest"]);
    line("Signer key id:",
         d["signer_key_id"].is_null() ? nlohmann::json("(unsigned)") : d["signer_key_id"]);
    line("Stub:",
         d["stub_canonical"].get<bool>() ? "canonical" : "MODIFIED (differs from skforge's)");
    if (d.contains("verification"))
        for (auto& [k, val] : d["verification"].items())
            line(("Verify " + k + ":").c_str(), val);
    if (d.contains("files"))
        for (const auto& f : d["files"])
            skforge::cli::print_safe(
                "%s %s %12s %s %s\n", f["type"].get<std::string>() == "file" ? "f" : "d",
                f["mode"].get<std::string>().c_str(),
                f.contains("size") ? std::to_string(f["size"].get<std::uint64_t>()).c_str() : "-",
                f.contains("sha256") ? f["sha256"].get<std::string>().c_str()
                                     : std::string(64, '-').c_str(),
                f["path"].get<std::string>().c_str());
}

int cmd_inspect(const Args& args) {
    std::string path;
    std::vector<std::string> keys;
    bool list = false, json = false, verify = false;
    CommandLine cl(
        "skc", "skc inspect X.run [--list] [--json] [--verify] [--trusted-key PUB.pem]...",
        "Shows and verifies a .run package without running any of it.",
        "Exit status: 0 success (with --verify: every check passed), 1 failure (a check\n"
        "failed), 2 usage error. See cli.md and inspect-json.md in /usr/share/doc/skforge/.");
    cl.positional("X.run", path);
    auto add = cl.add();
    add("list", po::bool_switch(&list), "list every file of the manifest");
    add("json", po::bool_switch(&json), "print JSON (inspect-json.md in /usr/share/doc/skforge/)");
    add("verify", po::bool_switch(&verify),
        "verify size, digests, every entry, the stub and the signature");
    add("trusted-key", po::value(&keys)->composing()->value_name("PUB.pem"),
        "trusted Ed25519 public key (PEM); repeatable; implies --verify");
    if (!cl.parse(args))
        return 0;
    std::vector<pkg::Key> trusted;
    for (const auto& k : keys)
        trusted.push_back(pkg::Key::load_public(k));
    if (!trusted.empty())
        verify = true;
    pkg::RunPackage run(path);
    const auto& h = run.header();
    InspectResult r;
    r.doc = {{"path", path},
             {"format", h.format},
             {"name", h.name},
             {"version", h.version},
             {"npu_arch", h.npu_arch},
             {"soc_version", h.soc_version},
             {"toolchain", h.toolchain},
             {"compression", pkg::compression_name(h.compression)},
             {"file_count", h.file_count},
             {"unpacked_size", h.unpacked_size},
             {"file_size", run.actual_size()},
             {"payload_offset", h.payload_offset},
             {"payload_size", h.payload_size},
             {"payload_sha256", h.payload_sha256},
             {"stub_canonical", run.stub_is_canonical()},
             {"signer_key_id", nullptr}};
    try {
        if (auto t = run.trailer())
            r.doc["signer_key_id"] = t->key_id;
        auto m = run.read_manifest();
        r.doc["inputs_digest"] = m.inputs_digest;
        if (list) {
            r.doc["files"] = nlohmann::json::array();
            for (const auto& e : m.entries) {
                nlohmann::json f = {{"path", e.path},
                                    {"type", pkg::entry_type_name(e.type)},
                                    {"mode", e.mode == 0755 ? "0755" : "0644"}};
                if (e.type == pkg::EntryType::file) {
                    f["size"] = e.size;
                    f["sha256"] = e.sha256;
                }
                r.doc["files"].push_back(f);
            }
        }
    } catch (const Error& e) {
        if (!verify)
            throw;
        r.doc["error"] = e.what();
        r.ok = false;
    }
    if (verify)
        verify_into(run, trusted, r);
    r.doc["ok"] = r.ok;
    if (json)
        std::cout << pkg::json_text(r.doc, 2) << "\n";
    else
        print_text(r.doc);
    return r.ok ? 0 : 1;
}

int cmd_keygen(const Args& args) {
    std::string name;
    CommandLine cl("skc", "skc keygen -o NAME",
                   "Makes an Ed25519 key pair for signing packages: NAME.pem (private, 0600) and\n"
                   "NAME.pub.pem.",
                   k_exit_codes);
    cl.add()("output,o", po::value(&name)->required()->value_name("NAME"),
             "writes NAME.pem and NAME.pub.pem (never overwrites either)");
    if (!cl.parse(args))
        return 0;
    for (const auto& p : {name + ".pem", name + ".pub.pem"}) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) == 0)
            throw Error("refusing to overwrite existing key file '" + p + "'");
    }
    auto key = pkg::Key::generate(name);
    std::cout << "wrote " << name << ".pem (private, keep it secret) and " << name
              << ".pub.pem\nkey id " << key.key_id() << "\n";
    return 0;
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

// Loads and validates a graph; prints every diagnostic to stderr. Returns false on errors.
// The graph is deliberately never freed (like mold and clang's -disable-free): freeing millions
// of small objects of a large graph costs more than the rest of `skc check`, and the process ends
// right after. It stays reachable through `t_keep`, so leak checkers do not report it.
skforge::graph::Graph* load_checked(const std::string& path,
                                    std::optional<skforge::fusion::Plan>& plan,
                                    skforge::fusion::PlanDepth depth) {
    static skforge::graph::Graph* t_keep = nullptr;
    skforge::graph::Diagnostics diags;
    Timing timing;
    t_keep = new skforge::graph::Graph(skforge::graph::load_graph(path, diags));
    timing.mark("load");
    auto& g = *t_keep;
    if (!diags.has_errors()) {
        // Validation and planning only read the graph and its dependencies: plan on the other
        // core meanwhile, and keep the plan only if the graph is valid.
        skforge::graph::Diagnostics plan_diags;
        auto deps = skforge::graph::dependencies(g);
        timing.mark("depends");
        auto planned = std::async(std::launch::async, [&] {
            return skforge::fusion::make_plan(g, deps, plan_diags, depth);
        });
        skforge::graph::validate_graph(g, deps, diags);
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
        std::fprintf(stderr, "%s: %zu error(s)\n", path.c_str(), diags.error_count());
    return diags.has_errors() ? nullptr : t_keep;
}

// The plan, like the graph, is never freed: a process-long object, reachable for leak checkers.
std::optional<skforge::fusion::Plan>& kept_plan() {
    static auto* t_plan = new std::optional<skforge::fusion::Plan>;
    return *t_plan;
}

int cmd_check(const Args& args) {
    std::string path;
    CommandLine cl("skc", "skc check GRAPH",
                   "Validates a graph and its kernel metadata; prints every problem as\n"
                   "file:line:col on stderr.",
                   "Exit status: 0 the graph is valid, 1 it is not, 2 usage error. See\n"
                   "graph-format.md in /usr/share/doc/skforge/.");
    cl.positional("GRAPH", path);
    if (!cl.parse(args))
        return 0;
    auto& plan = kept_plan();
    const auto* graph = load_checked(path, plan, skforge::fusion::PlanDepth::checks);
    if (graph == nullptr)
        return 1;
    const auto& g = *graph;
    skforge::cli::print_safe("%s: valid: %zu operators, %zu scopes, %zu kernel metadata files\n",
                             path.c_str(), g.ops.size(), g.scopes.size(), g.kernels.size());
    return 0;
}

// --layout as the library's enum; a usage error for anything else.
skforge::fusion::Layout plan_layout(const std::string& layout) {
    if (layout == "auto")
        return skforge::fusion::Layout::automatic;
    if (layout == "dot")
        return skforge::fusion::Layout::graphviz;
    if (layout == "builtin")
        return skforge::fusion::Layout::builtin;
    throw Error("--layout must be auto, dot or builtin, not '" + layout + "'", ErrorKind::usage);
}

int cmd_plan(const Args& args) {
    std::string path, output;
    std::string format = "text", layout = "auto";
    CommandLine cl("skc", "skc plan GRAPH [options]",
                   "Shows which operators fuse into which SuperKernel, and why the others do not;\n"
                   "svg and html draw the plan (streams, events, barriers, arena peaks).",
                   "Exit status: 0 success, 1 the graph is not valid, 2 usage error. See\n"
                   "plan-format.md in /usr/share/doc/skforge/.");
    cl.positional("GRAPH", path);
    cl.add()("format", po::value(&format)->value_name("text|json|dot|svg|html"),
             "output format (default text)")(
        "layout", po::value(&layout)->value_name("auto|dot|builtin"),
        "how svg and html lay out the picture: auto (default: Graphviz when installed), "
        "dot or builtin")("output,o", po::value(&output)->value_name("FILE"),
                          "write the plan to FILE (whole or not at all)");
    if (!cl.parse(args))
        return 0;
    if (format != "text" && format != "json" && format != "dot" && format != "svg" &&
        format != "html")
        throw Error("--format must be text, json, dot, svg or html, not '" + format + "'",
                    ErrorKind::usage);
    auto how = plan_layout(layout);
    auto& plan = kept_plan();
    const auto* graph = load_checked(path, plan, skforge::fusion::PlanDepth::full);
    if (graph == nullptr)
        return 1;
    const auto& g = *graph;
    Timing timing;
    std::optional<skforge::support::AtomicFile> file;
    if (!output.empty())
        file.emplace(output, 0644);
    auto write = [&](std::string_view piece) {
        if (file)
            file->write(piece);
        else
            std::cout.write(piece.data(), static_cast<std::streamsize>(piece.size()));
    };
    if (format == "json")
        skforge::fusion::plan_json(g, *plan, write);
    else if (format == "dot")
        write(skforge::fusion::plan_dot(g, *plan));
    else if (format == "svg")
        write(skforge::fusion::plan_svg(g, *plan, how));
    else if (format == "html")
        write(skforge::fusion::plan_html(g, *plan, how));
    else
        write(skforge::fusion::plan_text(g, *plan));
    if (file)
        file->commit();
    std::cout.flush();
    timing.mark("output");
    return 0;
}

nlohmann::json compile_json(const skforge::compile::CompileResult& r, bool use_cache) {
    auto or_null = [](const std::string& v) {
        return v.empty() ? nlohmann::json() : nlohmann::json(v);
    };
    return {{"run", or_null(r.run_path)},
            {"sources_dir", or_null(r.sources_dir)},
            {"name", r.name},
            {"version", r.version},
            {"npu_arch", r.npu_arch},
            {"soc", r.soc},
            {"cache", !r.sources_dir.empty() ? "unused"
                      : r.cache_hit          ? "hit"
                      : use_cache            ? "miss"
                                             : "disabled"},
            {"operators", r.operators},
            {"superkernels", r.superkernels},
            {"compile_log", r.compile_log}};
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
    auto size = skforge::compile::parse_size(text);
    if (!size)
        throw Error("--cache-max-size '" + text + "': expected bytes, or digits with K, M, G or T",
                    ErrorKind::usage);
    return size;
}

int cmd_compile(const Args& args) {
    skforge::compile::CompileOptions o;
    std::string cache_dir, max_size;
    std::string key;
    bool no_cache = false, sources_only = false, quiet = false, json = false;
    std::string sk_backend = "auto";
    CommandLine cl(
        "skc", "skc compile GRAPH [options]",
        "Compiles a graph into an installable .run: checks and plans it, builds its\n"
        "SuperKernels (host target) or packages its precompiled kernels (NPU targets).",
        "Standard output: the .run's path (the sources directory with --sources-only),\n"
        "or with --json one JSON object; messages go to stderr. On a terminal, builds\n"
        "show a progress bar on stderr (not with -q).\n"
        "Exit status: 0 success, 1 failure (see OUTDIR/NAME_compile_error.log), 2 usage\n"
        "error. See compile.md in /usr/share/doc/skforge/.");
    cl.positional("GRAPH", o.graph_path);
    cl.has_package_version();
    auto add = cl.add();
    add("npu-arch", po::value(&o.npu_arch)->value_name("host|dav-2201|dav-3510"),
        "the target (default: the graph's, else host)");
    add("output,o", po::value(&o.outdir)->value_name("OUTDIR"),
        "output directory (default static_kernel_compile_outputs)");
    add("name", po::value(&o.name)->value_name("NAME"), "package name (default: GRAPH_ARCH)");
    add("package-version", po::value(&o.version)->value_name("V"),
        "the package's version (default 1.0.0)");
    add("sign-key", po::value(&key)->value_name("KEY.pem"),
        "Ed25519 private key (PEM) to sign the package");
    add("jobs,j", integer_value(o.jobs, "--jobs", 0, 1024),
        "parallel build jobs, 0: one per core (default)");
    add("no-cache", po::bool_switch(&no_cache),
        "rebuild even when a cache has the result; use no shared cache");
    add("cache-dir", po::value(&cache_dir)->value_name("DIR"),
        "shared compile cache several runners may use at once (default: $SKFORGE_CACHE_DIR)");
    add("cache-max-size", po::value(&max_size)->value_name("SIZE"),
        "size limit of the shared cache, e.g. 10G (default: DIR/config.json's max_size)");
    add("sources-only", po::bool_switch(&sources_only),
        "NPU targets: write every SuperKernel's source and JSON to OUTDIR/NAME_sources, build "
        "nothing, need no CANN tool");
    add("sk-backend", po::value(&sk_backend)->value_name("auto|cann|skforge"),
        "NPU SuperKernel generator: cann (the vendor's super_kernel.compile), skforge, or auto "
        "(default: cann when python3 can import superkernel)");
    std::string depfile;
    add("depfile", po::value(&depfile)->value_name("FILE"),
        "write a Makefile rule '<run>: <every input>' to FILE, for make, ninja, CMake");
    add("json", po::bool_switch(&json), "print the result as one JSON object");
    add("quiet,q", po::bool_switch(&quiet), "print nothing but the result, warnings and errors");
    if (!cl.parse(args))
        return 0;
    if (!depfile.empty())
        o.depfile = depfile;
    if (sources_only)
        o.mode = skforge::compile::CompileMode::sources_only;
    auto backend = skforge::compile::parse_sk_backend(sk_backend);
    if (!backend)
        throw Error("--sk-backend '" + sk_backend + "': expected auto, cann or skforge",
                    ErrorKind::usage);
    o.sk_backend = *backend;
    if (!key.empty())
        o.sign_key = key;
    o.use_cache = !no_cache;
    o.cache_dir = cache_dir_or_env(cache_dir);
    o.cache_max_size = cache_max_size(max_size);
    skforge::support::TerminalProgress bar;
    if (!quiet && ::isatty(2))
        o.progress = &bar;
    skforge::cli::ConsoleLog log(quiet, stderr);
    auto r = skforge::compile::compile(o, log);
    print_result(sources_only ? r.sources_dir : r.run_path, compile_json(r, o.use_cache), json);
    return 0;
}

// Options every `skc cache` command takes.
struct CacheArgs {
    std::string dir, max_size;
    bool json = false;
};

// The command line of `skc cache NAME`, with the options every cache command takes.
CommandLine cache_command_line(const char* name, const char* usage, const char* summary,
                               CacheArgs& a) {
    CommandLine cl(
        "skc", usage, summary,
        std::string("Exit status: 0 success") +
            (std::string(name) == "verify" ? " (no problem, or --fix removed them)" : "") +
            ", 1 failure, 2 usage error.\nSee compile.md, \"Shared cache\", in "
            "/usr/share/doc/skforge/.");
    cl.add()("cache-dir", po::value(&a.dir)->value_name("DIR"),
             "the shared compile cache (default: $SKFORGE_CACHE_DIR)")(
        "cache-max-size", po::value(&a.max_size)->value_name("SIZE"),
        "size limit (default: DIR/config.json's max_size)")("json", po::bool_switch(&a.json),
                                                            "print JSON");
    return cl;
}

skforge::compile::CacheStore open_cache(const CacheArgs& a) {
    std::string dir = cache_dir_or_env(a.dir);
    if (dir.empty())
        throw Error("no cache directory: give --cache-dir DIR or set SKFORGE_CACHE_DIR",
                    ErrorKind::usage);
    // What the store finds damaged and works around (stats.json) is a warning on stderr.
    static skforge::cli::ConsoleLog warnings(true);
    return skforge::compile::CacheStore({dir,
                                         cache_max_size(a.max_size),
                                         skforge::compile::CacheOpen::existing,
                                         {},
                                         [](const std::string& m) { warnings.warn(m); }});
}

nlohmann::json size_or_null(std::optional<std::uint64_t> size) {
    return size ? nlohmann::json(*size) : nlohmann::json(nullptr);
}

int cache_stats(const Args& args) {
    CacheArgs a;
    auto cl = cache_command_line("stats", "skc cache stats [options]",
                                 "Entries, size, hits and misses of the shared compile cache.", a);
    if (!cl.parse(args))
        return 0;
    auto store = open_cache(a);
    auto s = store.stats();
    using skforge::compile::format_size;
    if (a.json) {
        std::cout << skforge::support::dump_json(
                         nlohmann::json{{"dir", store.dir()},
                                        {"entries", s.entries},
                                        {"total_size", s.total_size},
                                        {"max_size", size_or_null(s.max_size)},
                                        {"hits", s.hits},
                                        {"misses", s.misses},
                                        {"corrupt_removed", s.corrupt}},
                         2)
                  << "\n";
        return 0;
    }
    skforge::cli::print_safe(
        "cache directory  %s\nentries          %zu\ntotal size       %s\nmax size         "
        "%s\nhits             %llu\nmisses           %llu\ncorrupt removed  %llu\n",
        store.dir().c_str(), s.entries, format_size(s.total_size).c_str(),
        s.max_size ? format_size(*s.max_size).c_str() : "unlimited",
        static_cast<unsigned long long>(s.hits), static_cast<unsigned long long>(s.misses),
        static_cast<unsigned long long>(s.corrupt));
    return 0;
}

int cache_clean(const Args& args) {
    CacheArgs a;
    skforge::compile::CleanRequest request;
    auto cl = cache_command_line(
        "clean", "skc cache clean [options]",
        "Removes every entry; with --older-than or --to-max-size only those, and always\n"
        "what interrupted writers left behind.",
        a);
    cl.add()("older-than", po::value<double>()->value_name("DAYS")->notifier([&](double days) {
        if (!(days >= 0))
            throw Error("--older-than must be a number of days, at least 0", ErrorKind::usage);
        request.older_than_ms = static_cast<std::int64_t>(days * 86400000.0);
    }),
             "remove entries not used for DAYS days")(
        "to-max-size", po::bool_switch(&request.to_max_size),
        "remove least recently used entries until the cache fits its max size");
    if (!cl.parse(args))
        return 0;
    auto store = open_cache(a);
    auto r = store.clean(request);
    if (a.json)
        std::cout << skforge::support::dump_json(nlohmann::json{{"dir", store.dir()},
                                                                {"removed", r.removed},
                                                                {"removed_size", r.bytes},
                                                                {"leftovers_removed", r.leftovers}},
                                                 2)
                  << "\n";
    else
        skforge::cli::print_safe(
            "removed %zu entries (%s) and %zu leftovers of interrupted writers from %s\n",
            r.removed, skforge::compile::format_size(r.bytes).c_str(), r.leftovers,
            store.dir().c_str());
    return 0;
}

int cache_verify(const Args& args) {
    CacheArgs a;
    bool fix = false;
    auto cl = cache_command_line(
        "verify", "skc cache verify [options]",
        "Checks every entry as a hit would; exit 1 when one is bad. --fix removes them.", a);
    cl.add()("fix", po::bool_switch(&fix), "remove the bad entries and leftovers");
    if (!cl.parse(args))
        return 0;
    auto store = open_cache(a);
    auto r = store.verify(fix ? skforge::compile::VerifyFix::remove
                              : skforge::compile::VerifyFix::report);
    if (a.json) {
        auto problems = nlohmann::json::array();
        for (const auto& p : r.problems)
            problems.push_back({{"path", p.path}, {"reason", p.reason}, {"removed", p.removed}});
        std::cout << skforge::support::dump_json(nlohmann::json{{"dir", store.dir()},
                                                                {"checked", r.checked},
                                                                {"problems", problems},
                                                                {"ok", r.problems.empty() || fix}},
                                                 2)
                  << "\n";
    } else {
        for (const auto& p : r.problems)
            skforge::cli::print_safe("%s: %s%s\n", skforge::support::printable(p.path).c_str(),
                                     skforge::cli::terminal_safe(p.reason).c_str(),
                                     p.removed ? " (removed)" : "");
        skforge::cli::print_safe("%s: %zu entries checked, %zu problem(s)%s\n", store.dir().c_str(),
                                 r.checked, r.problems.size(),
                                 fix && !r.problems.empty() ? ", removed" : "");
    }
    return r.problems.empty() || fix ? 0 : 1;
}

int cmd_cache(const Args& args) {
    static const std::vector<skforge::cli::Command> table = {
        {"stats", "entries, size, hits and misses of the shared compile cache", cache_stats},
        {"clean", "remove every entry, those unused for days, or down to the max size",
         cache_clean},
        {"verify", "check every entry; with --fix remove the bad ones", cache_verify},
    };
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        skforge::cli::print_usage(args.empty() ? stderr : stdout, "skc cache", table,
                                  "Exit status: 0 success, 1 failure, 2 usage error. See\n"
                                  "compile.md, \"Shared cache\", in /usr/share/doc/skforge/.");
        return args.empty() ? 2 : 0;
    }
    for (const auto& c : table)
        if (args[0] == c.name)
            return c.run(Args(args.begin() + 1, args.end()));
    throw Error("skc cache: unknown command '" + args[0] + "' (expected stats, clean or verify)",
                ErrorKind::usage);
}

const std::vector<skforge::cli::Command>& commands() {
    static const std::vector<skforge::cli::Command> table = {
        {"check", "validate a graph and its kernel metadata", cmd_check},
        {"plan", "show which operators fuse into which SuperKernel, and why not", cmd_plan},
        {"compile", "compile a graph into an installable .run", cmd_compile},
        {"pack", "pack a directory into a signed, reproducible .run package", cmd_pack},
        {"import", "re-pack CANN's makeself static-kernel .run as a skforge package", cmd_import},
        {"inspect", "show and verify a .run package without running it", cmd_inspect},
        {"keygen", "make an Ed25519 key pair for signing packages", cmd_keygen},
        {"cache", "show, clean and verify the shared compile cache (stats|clean|verify)",
         cmd_cache},
    };
    return table;
}

} // namespace

int main(int argc, char** argv) {
    // First, before any thread exists: SIGINT/SIGTERM remove pack's and compile's temporaries.
    skforge::support::InterruptHandler interrupts;
    // skc is a short-lived batch process whose large graphs are millions of small objects, built
    // on several threads and never freed (load_checked). glibc's defaults hand memory back to the
    // kernel and take it again in small steps, and each fresh page costs a page fault: keep what
    // was freed, grow the heap in 64 MiB steps, and keep blocks below 32 MiB in the heap.
    // Measured in share/doc/benchmarks.md (about a fifth of the system time of `skc plan`).
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
    return skforge::cli::run_main(
        "skc", argc, argv, commands(),
        "Every command takes -h/--help and --version (skc's version).\n"
        "Exit status: 0 success, 1 failure, 2 usage error. See cli.md in /usr/share/doc/skforge/.");
}
