// SPDX-License-Identifier: Apache-2.0
// skc: the offline pipeline's command line. Each command declares its options here; they become
// the plain values of commands.hpp, which the commands check and hand to the libraries
// (commands.cpp); every error is caught once in run_main and mapped to an exit code (0 ok,
// 1 failure, 2 usage).
#include "../common/cli_main.hpp"
#include "commands.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/interrupt.hpp"

#include <boost/program_options.hpp>
#include <malloc.h>
#include <string>
#include <vector>

namespace po = boost::program_options;
using skforge::support::Error;
using skforge::support::ErrorKind;
using namespace skforge::skc;

namespace {

using Args = std::vector<std::string>;
using skforge::cli::CommandLine;
using skforge::cli::integer_value;

constexpr const char* k_exit_codes =
    "Exit status: 0 success, 1 failure, 2 usage error. See cli.md in /usr/share/doc/skforge/.";

// --compress and --sign-key, as pack and import take them.
void add_packing(po::options_description_easy_init& add, Packing& p) {
    add("compress", po::value(&p.compress)->value_name("gzip|zstd"), "compression (default gzip)");
    add("sign-key", po::value(&p.key)->value_name("KEY.pem"),
        "Ed25519 private key (PEM, from skc keygen) to sign with");
    add("cann-version", po::value(&p.cann_version)->value_name("V"),
        "the CANN release the kernels were built with (9.1.0, or a line such as 9.1): "
        "stamped in the package; installers refuse it on another CANN line");
}

// --json and --quiet, as pack and import take them.
void add_output(po::options_description_easy_init& add, Output& out) {
    add("json", po::bool_switch(&out.json), "print the result as one JSON object");
    add("quiet,q", po::bool_switch(&out.quiet), "print nothing but the result and errors");
}

int pack_command(const Args& args) {
    PackArgs a;
    auto& o = a.pack;
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
    add_packing(add, a.packing);
    add("level", integer_value(o.level, "--level", 0, 19),
        "compression level: gzip 1..9, zstd 1..19; 0 or none: the default (gzip 6, zstd 3)");
    add_output(add, a.out);
    return cl.parse(args) ? cmd_pack(std::move(a)) : 0;
}

// skc import: CANN's makeself static-kernel package as a skforge one (package/makeself.hpp).
int import_command(const Args& args) {
    ImportArgs a;
    auto& o = a.import;
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
    add_packing(add, a.packing);
    add_output(add, a.out);
    return cl.parse(args) ? cmd_import(std::move(a)) : 0;
}

int inspect_command(const Args& args) {
    InspectArgs a;
    CommandLine cl(
        "skc", "skc inspect X.run [--list] [--json] [--verify] [--trusted-key PUB.pem]...",
        "Shows and verifies a .run package without running any of it.",
        "Exit status: 0 success (with --verify: every check passed), 1 failure (a check\n"
        "failed), 2 usage error. See cli.md and inspect-json.md in /usr/share/doc/skforge/.");
    cl.positional("X.run", a.path);
    auto add = cl.add();
    add("list", po::bool_switch(&a.list), "list every file of the manifest");
    add("json", po::bool_switch(&a.json),
        "print JSON (inspect-json.md in /usr/share/doc/skforge/)");
    add("verify", po::bool_switch(&a.verify),
        "verify size, digests, every entry, the stub and the signature");
    add("trusted-key", po::value(&a.trusted_keys)->composing()->value_name("PUB.pem"),
        "trusted Ed25519 public key (PEM); repeatable; implies --verify");
    return cl.parse(args) ? cmd_inspect(a) : 0;
}

int keygen_command(const Args& args) {
    std::string name;
    CommandLine cl("skc", "skc keygen -o NAME",
                   "Makes an Ed25519 key pair for signing packages: NAME.pem (private, 0600) and\n"
                   "NAME.pub.pem.",
                   k_exit_codes);
    cl.add()("output,o", po::value(&name)->required()->value_name("NAME"),
             "writes NAME.pem and NAME.pub.pem (never overwrites either)");
    return cl.parse(args) ? cmd_keygen(name) : 0;
}

int check_command(const Args& args) {
    std::string path;
    CommandLine cl("skc", "skc check GRAPH",
                   "Validates a graph and its kernel metadata; prints every problem as\n"
                   "file:line:col on stderr.",
                   "Exit status: 0 the graph is valid, 1 it is not, 2 usage error. See\n"
                   "graph-format.md in /usr/share/doc/skforge/.");
    cl.positional("GRAPH", path);
    return cl.parse(args) ? cmd_check(path) : 0;
}

int plan_command(const Args& args) {
    PlanArgs a;
    CommandLine cl("skc", "skc plan GRAPH [options]",
                   "Shows which operators fuse into which SuperKernel, and why the others do not;\n"
                   "svg and html draw the plan (streams, events, barriers, arena peaks).",
                   "Exit status: 0 success, 1 the graph is not valid, 2 usage error. See\n"
                   "plan-format.md in /usr/share/doc/skforge/.");
    cl.positional("GRAPH", a.graph);
    cl.add()("format", po::value(&a.format)->value_name("text|json|dot|svg|html"),
             "output format (default text)")(
        "layout", po::value(&a.layout)->value_name("auto|dot|builtin"),
        "how svg and html lay out the picture: auto (default: Graphviz when installed), "
        "dot or builtin")("output,o", po::value(&a.output)->value_name("FILE"),
                          "write the plan to FILE (whole or not at all)");
    return cl.parse(args) ? cmd_plan(a) : 0;
}

int compile_command(const Args& args) {
    CompileArgs a;
    auto& o = a.compile;
    CommandLine cl(
        "skc", "skc compile GRAPH [options]",
        "Compiles a graph into an installable .run: checks and plans it, builds its\n"
        "SuperKernels (host target) or packages its precompiled kernels (NPU targets).\n"
        "GRAPH is a graph file (YAML or JSON), or a KERNEL_INFO .json: the op_list and\n"
        "super_kernel_options CANN's SuperKernel compiler takes, compiled as one scope.",
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
    add("sign-key", po::value(&a.key)->value_name("KEY.pem"),
        "Ed25519 private key (PEM) to sign the package");
    add("jobs,j", integer_value(o.jobs, "--jobs", 0, 1024),
        "parallel build jobs, 0: one per core (default)");
    add("no-cache", po::bool_switch(&a.no_cache),
        "rebuild even when a cache has the result; use no shared cache");
    add("cache-dir", po::value(&a.cache_dir)->value_name("DIR"),
        "shared compile cache several runners may use at once (default: $SKFORGE_CACHE_DIR)");
    add("cache-max-size", po::value(&a.max_size)->value_name("SIZE"),
        "size limit of the shared cache, e.g. 10G (default: DIR/config.json's max_size)");
    add("sources-only", po::bool_switch(&a.sources_only),
        "NPU targets: write every SuperKernel's source and JSON to OUTDIR/NAME_sources, build "
        "nothing, need no CANN tool");
    add("sk-backend", po::value(&a.sk_backend)->value_name("auto|cann|skforge"),
        "NPU SuperKernel generator: cann (the vendor's super_kernel.compile), skforge, or auto "
        "(default: cann when python3 can import superkernel)");
    add("cann-version", po::value(&o.cann_version)->value_name("8.5|9.0|9.1"),
        "NPU targets: the CANN release whose conventions to follow (default: the toolkit's "
        "in $ASCEND_HOME_PATH, else 9.0)");
    add("depfile", po::value(&a.depfile)->value_name("FILE"),
        "write a Makefile rule '<run>: <every input>' to FILE, for make, ninja, CMake");
    add("json", po::bool_switch(&a.out.json), "print the result as one JSON object");
    add("quiet,q", po::bool_switch(&a.out.quiet),
        "print nothing but the result, warnings and errors");
    return cl.parse(args) ? cmd_compile(std::move(a)) : 0;
}

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

int cache_stats(const Args& args) {
    CacheArgs a;
    auto cl = cache_command_line("stats", "skc cache stats [options]",
                                 "Entries, size, hits and misses of the shared compile cache.", a);
    return cl.parse(args) ? cmd_cache_stats(a) : 0;
}

int cache_clean(const Args& args) {
    CacheArgs a;
    skforge::compile::CleanRequest request;
    auto cl = cache_command_line(
        "clean", "skc cache clean [options]",
        "Removes every entry; with --older-than or --to-max-size only those, and always\n"
        "what interrupted writers left behind, the op_compiler front end's op map lines and\n"
        "op files of the entries removed, and its key locks no process holds.",
        a);
    cl.add()("older-than", po::value<double>()->value_name("DAYS")->notifier([&](double days) {
        if (!(days >= 0))
            throw Error("--older-than must be a number of days, at least 0", ErrorKind::usage);
        request.older_than_ms = static_cast<std::int64_t>(days * 86400000.0);
    }),
             "remove entries not used for DAYS days")(
        "to-max-size", po::bool_switch(&request.to_max_size),
        "remove least recently used entries until the cache fits its max size");
    return cl.parse(args) ? cmd_cache_clean(a, request) : 0;
}

int cache_verify(const Args& args) {
    CacheArgs a;
    bool fix = false;
    auto cl = cache_command_line(
        "verify", "skc cache verify [options]",
        "Checks every entry as a hit would; exit 1 when one is bad. --fix removes them.", a);
    cl.add()("fix", po::bool_switch(&fix), "remove the bad entries and leftovers");
    return cl.parse(args) ? cmd_cache_verify(a, fix) : 0;
}

int cache_command(const Args& args) {
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
        {"check", "validate a graph and its kernel metadata", check_command},
        {"plan", "show which operators fuse into which SuperKernel, and why not", plan_command},
        {"compile", "compile a graph into an installable .run", compile_command},
        {"pack", "pack a directory into a signed, reproducible .run package", pack_command},
        {"import", "re-pack CANN's makeself static-kernel .run as a skforge package",
         import_command},
        {"inspect", "show and verify a .run package without running it", inspect_command},
        {"keygen", "make an Ed25519 key pair for signing packages", keygen_command},
        {"cache", "show, clean and verify the shared compile cache (stats|clean|verify)",
         cache_command},
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
