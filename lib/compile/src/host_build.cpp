// SPDX-License-Identifier: Apache-2.0
// The host target: each kernel's C++ source becomes an object (linked into every SuperKernel that
// calls it) and a shared object (for operators launched alone); each segment's generated entry is
// compiled and linked with its sub-kernels' objects into one shared object.
#include "host_build.hpp"

#include "build_runner.hpp"
#include "static_kernels.hpp"
#include "superkernel_stage.hpp"

#include "skforge/codegen/host.hpp"
#include "skforge/kernel/package_index.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/json.hpp"
#include "skforge/support/process.hpp"
#include "skforge/support/safe_path.hpp"
#include "skforge/support/sha256.hpp"

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace skforge::compile {

extern const std::string_view k_host_kernel_header;

namespace fs = std::filesystem;
using nlohmann::json;
using support::Error;

namespace {

// Where one kernel comes from: a host object given as bin_path, or C++ source.
struct KernelInput {
    const graph::Op* first_op = nullptr;
    std::string object; ///< a prebuilt host object
    std::string source; ///< C++ source to build
};

// The file a kernel's host object comes from: its prebuilt object, else its source (empty when
// it has neither, e.g. a prefetch).
const std::string& built_from(const KernelInput& in) {
    return in.object.empty() ? in.source : in.object;
}

// The C++ source of operator `op`'s kernel: its source_path, else the .cpp beside its metadata.
// Throws when it has neither.
std::string kernel_source(const graph::Graph& g, const graph::Op& op, std::string source) {
    const auto& loaded = g.kernels[static_cast<std::size_t>(op.kernel_index)];
    if (source.empty()) {
        std::string beside = loaded.path;
        if (beside.size() > 5 && beside.ends_with(".json"))
            beside.resize(beside.size() - 5);
        beside += ".cpp";
        if (fs::is_regular_file(beside))
            source = beside;
    }
    if (source.empty())
        throw Error("operator '" + op.name + "': kernel " + loaded.path +
                    " has no host implementation: give its C++ source as source_path (or put it "
                    "beside the metadata as " +
                    fs::path(loaded.path).stem().string() + ".cpp), or a host object " + "(magic " +
                    std::string(kernel::k_host_magic_name) + ") as bin_path");
    if (!fs::is_regular_file(source))
        throw Error("operator '" + op.name + "': kernel source " + source + " does not exist");
    return source;
}

// Sub-kernels are linked together: their symbols must differ, and none may wait for all blocks.
void check_linkable(const graph::Graph& g, const std::vector<KernelInput>& in) {
    std::map<std::string, std::size_t> by_name;
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (in[i].first_op == nullptr)
            continue;
        const auto& meta = g.kernels[i].meta;
        if (meta.sync_all)
            throw Error("kernel " + g.kernels[i].path +
                        ": sub_op_with_sync_all kernels cannot run on the host target (its "
                        "workers run a kernel's blocks in turn, so a block cannot wait for all)");
        auto [it, fresh] = by_name.emplace(meta.kernel_name, i);
        if (!fresh)
            throw Error("kernels " + g.kernels[it->second].path + " and " + g.kernels[i].path +
                        " have the same kernelName '" + meta.kernel_name +
                        "': the host target links sub-kernels by name");
    }
}

// Where each kernel of `g` comes from, one per kernel (none for a kernel no operator runs).
std::vector<KernelInput> kernel_inputs(const graph::Graph& g) {
    std::vector<KernelInput> in(g.kernels.size());
    for (const auto& op : g.ops) {
        if (op.kernel_index < 0)
            continue; // a prefetch runs no kernel
        auto& k = in[static_cast<std::size_t>(op.kernel_index)];
        const auto& loaded = g.kernels[static_cast<std::size_t>(op.kernel_index)];
        std::string source = op.kernel.source_path.empty()
                                 ? std::string()
                                 : graph::resolve_path(g, op.kernel.source_path);
        if (k.first_op != nullptr) {
            if (!source.empty() && source != k.source)
                throw Error("operator '" + op.name + "' gives source " + source + " for kernel " +
                            loaded.path + ", but operator '" + k.first_op->name + "' gave " +
                            (k.source.empty() ? std::string("none") : k.source) +
                            ": one kernel, one source");
            continue;
        }
        k.first_op = &op;
        if (!op.kernel.bin_path.empty() && loaded.meta.magic == kernel::k_host_magic) {
            k.object = graph::resolve_path(g, op.kernel.bin_path);
            continue;
        }
        k.source = kernel_source(g, op, std::move(source));
    }
    check_linkable(g, in);
    return in;
}

// Build commands and what each builds (for a failure's message).
struct Commands {
    std::vector<std::vector<std::string>> lines;
    std::vector<std::string> what;
    void add(std::vector<std::string> line, std::string about) {
        lines.push_back(std::move(line));
        what.push_back(std::move(about));
    }
};

// One host build: the graph, its plan, and where it builds and stages.
struct HostBuild {
    const graph::Graph& g;
    const fusion::Plan& plan;
    const std::string& package;
    std::string build_dir;
    fs::path build, stage;
    std::vector<KernelInput> inputs;
    std::string& log;
    std::string cxx = compiler();
    std::vector<std::string> cflags = {"-std=c++20", "-O3", "-fPIC", "-fvisibility=hidden",
                                       "-Iinclude"};

    const std::string& name_of(std::size_t k) const { return g.kernels[k].meta.kernel_name; }
    // A kernel's directory in the package: host/<OpType of its first operator>/.
    std::string dir_of(std::size_t k) const { return "host/" + inputs[k].first_op->type + "/"; }
};

// Step 1: the kernel objects. Sources are copied in, so the command lines and the objects do not
// depend on where the graph or the build directory is; a host object is copied as it is.
Commands kernel_object_commands(HostBuild& b) {
    Commands c;
    for (std::size_t k = 0; k < b.inputs.size(); ++k) {
        const auto& in = b.inputs[k];
        if (in.first_op == nullptr)
            continue;
        const std::string& name = b.name_of(k);
        if (!in.object.empty()) {
            fs::copy_file(in.object, support::path_beneath(b.build, "obj/" + name + ".o"),
                          fs::copy_options::overwrite_existing);
            b.log += "kernel " + name + ": host object " + in.object + "\n";
            continue;
        }
        fs::create_directories(b.build / "src");
        fs::copy_file(in.source, support::path_beneath(b.build, "src/" + name + ".cpp"),
                      fs::copy_options::overwrite_existing);
        b.log += "kernel " + name + ": source " + in.source + "\n";
        auto cmd = std::vector<std::string>{b.cxx};
        cmd.insert(cmd.end(), b.cflags.begin(), b.cflags.end());
        cmd.insert(cmd.end(), {"-DSKFORGE_KERNEL_NAME=" + name, "-c", "src/" + name + ".cpp", "-o",
                               support::checked_beneath(b.build_dir, "obj/" + name + ".o")});
        c.add(std::move(cmd),
              "kernel " + name + " (" + in.source + ", used by '" + in.first_op->name + "')");
    }
    return c;
}

// Step 2: one shared object per kernel (operators launched alone), one per SuperKernel (its
// generated entry and version script written here, linked with its sub-kernels' objects).
Commands library_commands(const HostBuild& b) {
    Commands c;
    for (std::size_t k = 0; k < b.inputs.size(); ++k)
        if (b.inputs[k].first_op != nullptr)
            c.add({b.cxx, "-shared", "-o",
                   support::checked_beneath(b.build_dir, "lib/" + b.name_of(k) + ".so"),
                   "obj/" + b.name_of(k) + ".o"},
                  "kernel library " + b.name_of(k));
    for (const auto& s : b.plan.segments) {
        write_text(support::path_beneath(b.build, "gen/" + s.name + ".cpp"),
                   codegen::host_entry_source(b.g, s));
        write_text(support::path_beneath(b.build, "gen/" + s.name + ".map"),
                   codegen::host_version_script(s));
        auto cmd = std::vector<std::string>{b.cxx};
        cmd.insert(cmd.end(), b.cflags.begin(), b.cflags.end());
        for (const auto& w : split_words(s.options.compile_options))
            cmd.push_back(w);
        cmd.insert(cmd.end(), {"-shared", "-Wl,--version-script=gen/" + s.name + ".map", "-o",
                               support::checked_beneath(b.build_dir, "lib/" + s.name + ".so"),
                               "gen/" + s.name + ".cpp"});
        std::set<std::string> linked;
        for (int op : s.ops) {
            const auto k =
                static_cast<std::size_t>(b.g.ops[static_cast<std::size_t>(op)].kernel_index);
            if (linked.insert(b.name_of(k)).second)
                cmd.push_back("obj/" + b.name_of(k) + ".o");
        }
        c.add(std::move(cmd), "SuperKernel " + s.name);
    }
    return c;
}

// Step 3a: each kernel into host/<OpType>/: its object, its shared object and its metadata (the
// op compiler's, naming the host magic, the object and its digest).
void stage_kernels(const HostBuild& b, codegen::HostFiles& files) {
    files.kernel_library.resize(b.g.kernels.size());
    files.kernel_symbol.resize(b.g.kernels.size());
    for (std::size_t k = 0; k < b.inputs.size(); ++k) {
        if (b.inputs[k].first_op == nullptr)
            continue;
        const auto& loaded = b.g.kernels[k];
        const std::string& name = b.name_of(k);
        const std::string dir = b.dir_of(k);
        std::string object = support::read_file((b.build / "obj" / (name + ".o")).string());
        json meta =
            support::parse_json(support::read_file(loaded.path, {support::k_max_json_bytes}));
        if (!meta.is_object()) // it was one when the graph was loaded
            throw Error("kernel metadata '" + loaded.path + "' changed during the compile");
        meta["magic"] = kernel::k_host_magic_name;
        meta["binFileName"] = name;
        meta["binFileSuffix"] = ".o";
        meta["sha256"] = support::sha256_hex(object);
        write_text(support::path_beneath(b.stage, dir + name + ".json"),
                   support::dump_json(meta, 2) + "\n");
        write_text(support::path_beneath(b.stage, dir + name + ".o"), object);
        const fs::path library = support::path_beneath(b.stage, dir + name + ".so");
        fs::copy_file(b.build / "lib" / (name + ".so"), library);
        fs::permissions(library, fs::perms(0644));
        files.kernel_library[k] = dir + name + ".so";
        files.kernel_symbol[k] = name;
    }
}

// Step 3b: every operator's call keys in the index, its kernel's object as binPath. Host kernels
// run on worker threads: AiCore when the metadata does not say.
void index_operators(const HostBuild& b, kernel::PackageIndex& index) {
    const auto deps = graph::dependencies(b.g);
    for (std::size_t i = 0; i < b.g.ops.size(); ++i) {
        if (b.g.ops[i].kernel_index < 0)
            continue;
        const auto k = static_cast<std::size_t>(b.g.ops[i].kernel_index);
        add_op_entries(
            index, b.g, deps, i,
            kernel::index_bin_path(b.package, b.dir_of(k) + b.name_of(k) + ".o"),
            kernel::kernel_core_type(b.g.kernels[k].meta).value_or(kernel::CoreType::ai_core));
    }
}

// Step 3c: each SuperKernel into host/SuperKernel/.
void stage_superkernels(HostBuild& b, codegen::HostFiles& files, kernel::PackageIndex& index) {
    for (const auto& s : b.plan.segments) {
        stage_superkernel(b.g, s,
                          {"host/SuperKernel/", ".so", codegen::host_entry_symbol(s),
                           codegen::host_layout(s).workspace_bytes, "host", b.package},
                          b.build, b.stage, index, b.log);
        files.segment_library.push_back("host/SuperKernel/" + s.name + ".so");
    }
}

} // namespace

std::string host_fingerprint(const graph::Graph& g) {
    const std::string next = " (install g++, which skforge's package recommends: 'apt-get install "
                             "g++'; or set CXX to a C++20 compiler)";
    support::ProcessResult version;
    try {
        version = support::run_process({compiler(), "--version"});
    } catch (const Error& e) {
        throw Error("the host target needs a C++ compiler: " + std::string(e.what()) + next);
    }
    if (version.exit_code != 0)
        throw Error("the host target needs a C++ compiler: '" + compiler() + " --version' failed" +
                    next);
    support::Sha256 h;
    h.update("cxx=" + compiler() + "\n" + version.output);
    h.update(std::string(k_host_kernel_header));
    // Each kernel by its place and content, not its path: the graph (hashed with the key) says
    // where it comes from, and a cache shared by CI runners must not depend on their checkouts.
    auto inputs = kernel_inputs(g);
    for (std::size_t k = 0; k < inputs.size(); ++k)
        if (const std::string& file = built_from(inputs[k]); !file.empty())
            h.update("kernel " + std::to_string(k) +
                     (inputs[k].object.empty() ? " source " : " object ") +
                     support::sha256_file(file, support::k_max_read_bytes).sha256 + "\n");
    return support::digest_hex(h.finish());
}

std::vector<std::string> host_kernel_files(const graph::Graph& g) {
    std::vector<std::string> files;
    for (const auto& k : kernel_inputs(g))
        if (const std::string& file = built_from(k); !file.empty())
            files.push_back(file);
    return files;
}

void build_host_package(const graph::Graph& g, const fusion::Plan& plan, const std::string& package,
                        const std::string& build_dir, const std::string& stage_dir, unsigned jobs,
                        std::string& log, support::Progress* progress) {
    HostBuild b{g, plan, package, build_dir, build_dir, stage_dir, kernel_inputs(g), log};
    write_text(b.build / "include" / "skforge_host_kernel.h", k_host_kernel_header);
    fs::create_directories(b.build / "obj");
    fs::create_directories(b.build / "lib");
    Builder builder(build_dir, log, progress);
    const Commands objects = kernel_object_commands(b);
    builder.run_all(objects.lines, objects.what, jobs);
    const Commands libraries = library_commands(b);
    builder.run_all(libraries.lines, libraries.what, jobs);

    codegen::HostFiles files;
    kernel::PackageIndex index;
    stage_kernels(b, files);
    index_operators(b, index);
    stage_superkernels(b, files, index);
    write_text(b.stage / "config" / "host" / "binary_info_config.json", index.text());
    write_text(b.stage / "host" / "program.json", codegen::host_program_json(g, plan, files));
}

} // namespace skforge::compile
