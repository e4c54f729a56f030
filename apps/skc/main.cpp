// skc: the offline pipeline's command line. It parses options into plain structs and calls the
// library; every error is caught once here and mapped to an exit code (0 ok, 1 failure, 2 usage).
#include "../common/cli_main.hpp"
#include "skforge/compile/compile.hpp"
#include "skforge/fusion/report.hpp"
#include "skforge/graph/graph.hpp"
#include "skforge/package/reader.hpp"
#include "skforge/package/signature.hpp"
#include "skforge/package/writer.hpp"
#include "skforge/support/atomic_file.hpp"
#include "skforge/support/error.hpp"

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

// Parses `args` against `desc` (+ positionals); prints help and returns false on --help.
bool parse(const Args& args, const po::options_description& desc,
           const po::positional_options_description& pos, po::variables_map& vm,
           const char* usage) {
    po::options_description all(desc);
    all.add_options()("help,h", "print this help");
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    if (vm.count("help")) {
        std::cout << "Usage: " << usage << "\n\n" << all << "\n";
        return false;
    }
    po::notify(vm);
    return true;
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

int cmd_pack(const Args& args) {
    pkg::PackOptions o;
    std::string compress = "gzip";
    std::string key;
    bool quiet = false;
    po::options_description desc("skc pack options");
    desc.add_options()("dir", po::value(&o.source_dir)->required(), "directory to pack")(
        "output,o", po::value(&o.output)->required(), "the .run file to write")(
        "name", po::value(&o.name),
        "package name, the directory it installs into (default: the output's stem)")(
        "version", po::value(&o.version)->required(),
        "package version")("npu-arch", po::value(&o.npu_arch), "NPU architecture, e.g. dav-2201")(
        "soc", po::value(&o.soc_version), "SoC version, e.g. Ascend910B1")(
        "compress", po::value(&compress)->default_value("gzip"), "gzip or zstd")(
        "level", po::value(&o.level)->default_value(0), "compression level (0: default)")(
        "sign-key", po::value(&key), "Ed25519 private key (PEM) to sign with")(
        "quiet,q", po::bool_switch(&quiet), "print nothing on success");
    po::positional_options_description pos;
    pos.add("dir", 1);
    po::variables_map vm;
    if (!parse(args, desc, pos, vm, "skc pack DIR -o OUT.run --version V [options]"))
        return 0;
    if (compress != "gzip" && compress != "zstd")
        throw Error("--compress must be gzip or zstd, not '" + compress + "'", ErrorKind::usage);
    o.compression = compress == "gzip" ? pkg::Compression::gzip : pkg::Compression::zstd;
    if (!key.empty())
        o.sign_key = key;
    o.mtime = source_date_epoch();
    skforge::support::TerminalProgress bar(64u << 20);
    if (!quiet && ::isatty(2))
        o.progress = &bar;
    auto r = pkg::pack(o);
    if (!quiet) {
        std::cout << "packed " << r.header.name << " " << r.header.version << " into " << o.output
                  << ": " << r.header.file_count << " entries, " << r.header.unpacked_size
                  << " bytes unpacked, " << r.header.payload_size << " bytes " << compress
                  << " payload\npayload sha256 " << r.header.payload_sha256 << "\n";
        if (r.key_id)
            std::cout << "signed by key " << *r.key_id << "\n";
    }
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
        std::printf("%-16s %s\n", label,
                    value.is_string() ? value.get<std::string>().c_str() : value.dump().c_str());
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
            std::printf("%s %s %12s %s %s\n", f["type"].get<std::string>() == "file" ? "f" : "d",
                        f["mode"].get<std::string>().c_str(),
                        f.contains("size") ? std::to_string(f["size"].get<std::uint64_t>()).c_str()
                                           : "-",
                        f.contains("sha256") ? f["sha256"].get<std::string>().c_str()
                                             : std::string(64, '-').c_str(),
                        f["path"].get<std::string>().c_str());
}

int cmd_inspect(const Args& args) {
    std::string path;
    std::vector<std::string> keys;
    bool list = false, json = false, verify = false;
    po::options_description desc("skc inspect options");
    desc.add_options()("package", po::value(&path)->required(), "the .run file")(
        "list", po::bool_switch(&list), "list every file of the manifest")(
        "json", po::bool_switch(&json), "print JSON (share/doc/inspect-json.md)")(
        "verify", po::bool_switch(&verify), "verify size, digests, every entry and the signature")(
        "trusted-key", po::value(&keys)->composing(), "trusted public key (PEM); repeatable");
    po::positional_options_description pos;
    pos.add("package", 1);
    po::variables_map vm;
    if (!parse(args, desc, pos, vm,
               "skc inspect X.run [--list] [--json] [--verify] [--trusted-key PUB.pem]..."))
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
        std::cout << r.doc.dump(2) << "\n";
    else
        print_text(r.doc);
    return r.ok ? 0 : 1;
}

int cmd_keygen(const Args& args) {
    std::string name;
    po::options_description desc("skc keygen options");
    desc.add_options()("output,o", po::value(&name)->required(),
                       "writes NAME.pem (private, 0600) and NAME.pub.pem");
    po::positional_options_description pos;
    po::variables_map vm;
    if (!parse(args, desc, pos, vm, "skc keygen -o NAME"))
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
    po::options_description desc("skc check options");
    desc.add_options()("graph", po::value(&path)->required(), "the graph YAML");
    po::positional_options_description pos;
    pos.add("graph", 1);
    po::variables_map vm;
    if (!parse(args, desc, pos, vm, "skc check GRAPH"))
        return 0;
    auto& plan = kept_plan();
    const auto* graph = load_checked(path, plan, skforge::fusion::PlanDepth::checks);
    if (graph == nullptr)
        return 1;
    const auto& g = *graph;
    std::printf("%s: valid: %zu operators, %zu scopes, %zu kernel metadata files\n", path.c_str(),
                g.ops.size(), g.scopes.size(), g.kernels.size());
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
    po::options_description desc("skc plan options");
    desc.add_options()("graph", po::value(&path)->required(), "the graph YAML")(
        "format", po::value(&format)->default_value("text"), "text, json, dot, svg or html")(
        "layout", po::value(&layout)->default_value("auto"),
        "how svg and html lay out the picture: auto (Graphviz when installed), dot or builtin")(
        "output,o", po::value(&output), "write the plan to FILE (whole or not at all)");
    po::positional_options_description pos;
    pos.add("graph", 1);
    po::variables_map vm;
    if (!parse(args, desc, pos, vm,
               "skc plan GRAPH [--format text|json|dot|svg|html] [--layout auto|dot|builtin] "
               "[-o FILE]"))
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

int cmd_compile(const Args& args) {
    skforge::compile::CompileOptions o;
    std::string key;
    unsigned jobs = 0;
    bool no_cache = false;
    bool sources_only = false;
    std::string sk_backend = "auto";
    po::options_description desc("skc compile options");
    desc.add_options()("graph", po::value(&o.graph_path)->required(), "the graph YAML")(
        "npu-arch", po::value(&o.npu_arch), "host, dav-2201 or dav-3510 (default: the graph's)")(
        "output,o", po::value(&o.outdir)->default_value("static_kernel_compile_outputs"),
        "output directory")("name", po::value(&o.name), "package name (default: <graph>_<arch>)")(
        "version", po::value(&o.version)->default_value("1.0.0"), "package version")(
        "sign-key", po::value(&key), "Ed25519 private key (PEM) to sign the package")(
        "jobs", po::value(&jobs)->default_value(0), "parallel build jobs (0: all cores)")(
        "no-cache", po::bool_switch(&no_cache), "rebuild even when the cache has the result")(
        "sources-only", po::bool_switch(&sources_only),
        "NPU targets: write every SuperKernel's source and JSON to OUTDIR/<name>_sources, build "
        "nothing, need no CANN tool")(
        "sk-backend", po::value(&sk_backend)->default_value("auto"),
        "NPU SuperKernel generator: cann (the vendor's super_kernel.compile), skforge, or auto "
        "(cann when python3 can import superkernel)");
    po::positional_options_description pos;
    pos.add("graph", 1);
    po::variables_map vm;
    if (!parse(args, desc, pos, vm,
               "skc compile GRAPH [--npu-arch A] [-o OUTDIR] [--name NAME] [--sign-key K] "
               "[--jobs N] [--no-cache] [--sources-only] [--sk-backend auto|cann|skforge]"))
        return 0;
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
    o.jobs = jobs;
    skforge::cli::ConsoleLog log;
    auto r = skforge::compile::compile(o, log);
    std::printf("%s\n", (sources_only ? r.sources_dir : r.run_path).c_str());
    return 0;
}

const std::vector<skforge::cli::Command>& commands() {
    static const std::vector<skforge::cli::Command> table = {
        {"check", "validate a graph and its kernel metadata", cmd_check},
        {"plan", "show which operators fuse into which SuperKernel, and why not", cmd_plan},
        {"compile", "compile a graph into an installable .run (host SuperKernels, static kernels)",
         cmd_compile},
        {"pack", "pack a directory into a signed, reproducible .run package", cmd_pack},
        {"inspect", "show and verify a .run package without running it", cmd_inspect},
        {"keygen", "make an Ed25519 key pair for signing packages", cmd_keygen},
    };
    return table;
}

} // namespace

int main(int argc, char** argv) {
    // skc is a short-lived batch process whose large graphs are millions of small objects, built
    // on several threads and never freed (load_checked). glibc's defaults hand memory back to the
    // kernel and take it again in small steps, and each fresh page costs a page fault: keep what
    // was freed, grow the heap in 64 MiB steps, and keep blocks below 32 MiB in the heap.
    // Measured in share/doc/benchmarks.md (about a fifth of the system time of `skc plan`).
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
    return skforge::cli::run_main("skc", argc, argv, commands());
}
