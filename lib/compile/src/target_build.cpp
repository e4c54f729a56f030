// Building a target's package tree.
// Host: each kernel's C++ source becomes an object (linked into every SuperKernel that calls it)
// and a shared object (for operators launched alone); each segment's generated entry is
// compiled and linked with its sub-kernels' objects into one shared object.
// NPU: each segment's AscendC entry is compiled with bisheng and linked with the precompiled
// sub-kernels into one device object; operators left out are packaged as static kernels.
#include "target_build.hpp"

#include "skforge/codegen/ascendc.hpp"
#include "skforge/codegen/host.hpp"
#include "skforge/support/atomic_file.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/process.hpp"
#include "skforge/support/sha256.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

namespace skforge::compile {

extern const std::string_view k_host_kernel_header;

namespace fs = std::filesystem;
using nlohmann::json;
using support::Error;

namespace {

std::string compiler() {
    const char* cxx = std::getenv("CXX");
    return cxx != nullptr && *cxx != '\0' ? cxx : "c++";
}

// Where one kernel comes from: a host object given as bin_path, or C++ source.
struct KernelInput {
    const graph::Op* first_op = nullptr;
    std::string object; ///< a prebuilt host object
    std::string source; ///< C++ source to build
};

std::vector<KernelInput> kernel_inputs(const graph::Graph& g) {
    std::vector<KernelInput> in(g.kernels.size());
    for (const auto& op : g.ops) {
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
                        " has no host implementation: give its C++ source as source_path (or "
                        "put it beside the metadata as " +
                        fs::path(loaded.path).stem().string() + ".cpp), or a host object " +
                        "(magic " + std::string(kernel::k_host_magic_name) + ") as bin_path");
        if (!fs::is_regular_file(source))
            throw Error("operator '" + op.name + "': kernel source " + source + " does not exist");
        k.source = source;
    }
    // Sub-kernels are linked together: their symbols must differ.
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
    return in;
}

void write_text(const fs::path& path, std::string_view text, mode_t mode = 0644) {
    fs::create_directories(path.parent_path());
    support::AtomicFile f(path.string(), mode);
    f.write(text);
    f.commit();
}

// Runs build commands on up to `jobs` threads; the first failure is thrown after all stopped.
class Builder {
  public:
    Builder(std::string dir, std::string& log) : m_dir(std::move(dir)), m_log(log) {}

    void run_all(const std::vector<std::vector<std::string>>& commands,
                 const std::vector<std::string>& what, unsigned jobs) {
        std::atomic<std::size_t> next{0};
        std::vector<support::ProcessResult> results(commands.size());
        auto worker = [&] {
            for (std::size_t i = next++; i < commands.size(); i = next++)
                results[i] = support::run_process(commands[i], m_dir);
        };
        std::vector<std::thread> threads;
        unsigned n = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(commands.size())));
        std::exception_ptr failure;
        std::mutex m;
        for (unsigned t = 0; t < n; ++t)
            threads.emplace_back([&] {
                try {
                    worker();
                } catch (...) {
                    std::lock_guard lock(m);
                    failure = std::current_exception();
                }
            });
        for (auto& t : threads)
            t.join();
        if (failure)
            std::rethrow_exception(failure);
        for (std::size_t i = 0; i < commands.size(); ++i) {
            m_log += "$ " + support::command_line(commands[i]) + "\n" + results[i].output;
            if (results[i].exit_code != 0)
                throw Error("building " + what[i] + " failed (exit " +
                            std::to_string(results[i].exit_code) + "):\n$ " +
                            support::command_line(commands[i]) + "\n" + results[i].output);
        }
    }

  private:
    std::string m_dir;
    std::string& m_log;
};

std::vector<std::string> split_words(const std::string& text) {
    std::vector<std::string> out;
    std::string word;
    for (char c : text + " ") {
        if (c == ' ' || c == '\t') {
            if (!word.empty())
                out.push_back(word);
            word.clear();
        } else {
            word += c;
        }
    }
    return out;
}

// One SuperKernel into the package: its metadata (the plan's, with what the build decided), its
// binary, its generated source, and its line in the package index.
struct SuperKernelFiles {
    std::string dir;         ///< e.g. host/SuperKernel/
    std::string suffix;      ///< of the binary: .so on the host, .o on the NPU
    std::string kernel_name; ///< the entry's symbol
    std::uint64_t workspace; ///< bytes of its workspace block
    std::string arch;        ///< host, dav-2201 or dav-3510: which metadata shape
};

// The SuperKernel's metadata as packaged: the plan's, with what the build decided. `sha256` is
// the binary's, or empty when nothing was built (--sources-only).
json superkernel_meta(const graph::Graph& g, const fusion::Segment& s, const SuperKernelFiles& f,
                      const std::string& sha256) {
    json meta = json::parse(fusion::kernel_meta_json(g, s, f.arch));
    meta["binFileName"] = s.name;
    meta["binFileSuffix"] = f.suffix;
    meta["kernelName"] = f.kernel_name;
    meta["sha256"] = sha256;
    if (f.arch == "host") {
        meta["workspace"]["size"] = {f.workspace};
        return meta;
    }
    // The vendor writes a workspace only when the SuperKernel needs one.
    if (f.workspace == 0)
        meta.erase("workspace");
    else
        meta["workspace"] = {{"num", 1}, {"size", {f.workspace}}, {"type", {0}}};
    return meta;
}

SuperKernelFiles npu_files(const graph::Graph& g, const fusion::Segment& s,
                           const codegen::NpuTarget& target, const std::string& soc_dir) {
    return {soc_dir + "/SuperKernel/", ".o", codegen::npu_entry_symbol(g, s),
            codegen::host_layout(s).workspace_bytes + codegen::npu_sync_bytes(g, s, target),
            target.arch};
}

// The inputs of the vendor's own SuperKernel compiler for segment `s`, written into `dir`
// beside the segment's source and JSON (by build_npu_package and by --sources-only).
void write_vendor_compiler_inputs(const graph::Graph& /*g*/, const fusion::Segment& /*s*/,
                                  const codegen::NpuTarget& /*target*/, const fs::path& /*dir*/,
                                  std::string& /*log*/) {
    // The CANN backend writes the vendor's kernel_info JSON here.
}

void stage_superkernel(const graph::Graph& g, const fusion::Segment& s, const SuperKernelFiles& f,
                       const fs::path& build, const fs::path& stage, json& index,
                       std::string& log) {
    const fs::path binary_path = build / "lib" / (s.name + f.suffix);
    if (!fs::is_regular_file(binary_path))
        throw Error("the build did not write " + binary_path.filename().string() +
                    " for SuperKernel " + s.name);
    std::string binary = support::read_file(binary_path.string());
    json meta = superkernel_meta(g, s, f, support::sha256_hex(binary));
    write_text(stage / (f.dir + s.name + ".json"), meta.dump(2) + "\n");
    write_text(stage / (f.dir + s.name + f.suffix), binary);
    fs::copy_file(build / "gen" / (s.name + ".cpp"), stage / (f.dir + s.name + ".cpp"));
    fs::permissions(stage / (f.dir + s.name + ".cpp"), fs::perms(0644));
    index["SuperKernel"]["binaryList"].push_back(
        {{"simplifiedKey", {"SuperKernel/" + s.name}}, {"binPath", f.dir + s.name + ".json"}});
    log += "SuperKernel " + s.name + ": " + std::to_string(s.ops.size()) + " sub-kernels -> " +
           f.dir + s.name + f.suffix + "\n";
}

} // namespace

std::string host_fingerprint(const graph::Graph& g) {
    auto version = support::run_process({compiler(), "--version"});
    if (version.exit_code != 0)
        throw Error("the host target needs a C++ compiler: '" + compiler() +
                    " --version' failed (install g++, or set CXX)");
    support::Sha256 h;
    h.update("cxx=" + compiler() + "\n" + version.output);
    h.update(std::string(k_host_kernel_header));
    for (const auto& k : kernel_inputs(g)) {
        const std::string& file = k.object.empty() ? k.source : k.object;
        if (!file.empty())
            h.update(file + "\n" + support::sha256_hex(support::read_file(file)) + "\n");
    }
    return support::digest_hex(h.finish());
}

void build_host_package(const graph::Graph& g, const fusion::Plan& plan,
                        const std::string& build_dir, const std::string& stage_dir, unsigned jobs,
                        std::string& log) {
    const fs::path build(build_dir), stage(stage_dir);
    auto inputs = kernel_inputs(g);
    write_text(build / "include" / "skforge_host_kernel.h", k_host_kernel_header);
    fs::create_directories(build / "obj");
    fs::create_directories(build / "lib");
    const std::string cxx = compiler();
    const std::vector<std::string> cflags = {"-std=c++20", "-O3", "-fPIC", "-fvisibility=hidden",
                                             "-Iinclude"};

    // 1. Kernel objects from source (sources are copied in, so the command lines and the objects
    //    do not depend on where the graph or the build directory is).
    std::vector<std::vector<std::string>> commands;
    std::vector<std::string> what;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        const auto& in = inputs[k];
        if (in.first_op == nullptr)
            continue;
        const std::string& name = g.kernels[k].meta.kernel_name;
        if (!in.object.empty()) {
            fs::copy_file(in.object, build / "obj" / (name + ".o"),
                          fs::copy_options::overwrite_existing);
            log += "kernel " + name + ": host object " + in.object + "\n";
            continue;
        }
        fs::create_directories(build / "src");
        fs::copy_file(in.source, build / "src" / (name + ".cpp"),
                      fs::copy_options::overwrite_existing);
        log += "kernel " + name + ": source " + in.source + "\n";
        auto cmd = std::vector<std::string>{cxx};
        cmd.insert(cmd.end(), cflags.begin(), cflags.end());
        cmd.insert(cmd.end(), {"-DSKFORGE_KERNEL_NAME=" + name, "-c", "src/" + name + ".cpp", "-o",
                               "obj/" + name + ".o"});
        commands.push_back(cmd);
        what.push_back("kernel " + name + " (" + in.source + ", used by '" + in.first_op->name +
                       "')");
    }
    Builder builder(build_dir, log);
    builder.run_all(commands, what, jobs);

    // 2. One shared object per kernel (operators launched alone), one per SuperKernel.
    commands.clear();
    what.clear();
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        if (inputs[k].first_op == nullptr)
            continue;
        const std::string& name = g.kernels[k].meta.kernel_name;
        commands.push_back({cxx, "-shared", "-o", "lib/" + name + ".so", "obj/" + name + ".o"});
        what.push_back("kernel library " + name);
    }
    for (const auto& s : plan.segments) {
        std::string entry = codegen::host_entry_symbol(s);
        write_text(build / "gen" / (s.name + ".cpp"), codegen::host_entry_source(g, s));
        write_text(build / "gen" / (s.name + ".map"), codegen::host_version_script(s));
        auto cmd = std::vector<std::string>{cxx};
        cmd.insert(cmd.end(), cflags.begin(), cflags.end());
        for (const auto& w : split_words(s.options.compile_options))
            cmd.push_back(w);
        cmd.insert(cmd.end(), {"-shared", "-Wl,--version-script=gen/" + s.name + ".map", "-o",
                               "lib/" + s.name + ".so", "gen/" + s.name + ".cpp"});
        std::set<std::string> linked;
        for (int op : s.ops) {
            const auto& name = g.kernels[static_cast<std::size_t>(
                                             g.ops[static_cast<std::size_t>(op)].kernel_index)]
                                   .meta.kernel_name;
            if (linked.insert(name).second)
                cmd.push_back("obj/" + name + ".o");
        }
        commands.push_back(cmd);
        what.push_back("SuperKernel " + s.name);
    }
    builder.run_all(commands, what, jobs);

    // 3. The package tree.
    codegen::HostFiles files;
    files.kernel_library.resize(g.kernels.size());
    files.kernel_symbol.resize(g.kernels.size());
    json index = json::object();
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        if (inputs[k].first_op == nullptr)
            continue;
        const auto& loaded = g.kernels[k];
        const std::string& name = loaded.meta.kernel_name;
        const std::string& type = inputs[k].first_op->type;
        std::string dir = "host/" + type + "/";
        std::string object = support::read_file((build / "obj" / (name + ".o")).string());
        json meta = json::parse(support::read_file(loaded.path));
        meta["magic"] = kernel::k_host_magic_name;
        meta["binFileName"] = name;
        meta["binFileSuffix"] = ".o";
        meta["sha256"] = support::sha256_hex(object);
        write_text(stage / (dir + name + ".json"), meta.dump(2) + "\n");
        write_text(stage / (dir + name + ".o"), object);
        fs::copy_file(build / "lib" / (name + ".so"), stage / (dir + name + ".so"));
        fs::permissions(stage / (dir + name + ".so"), fs::perms(0644));
        files.kernel_library[k] = dir + name + ".so";
        files.kernel_symbol[k] = name;
    }
    for (const auto& op : g.ops) {
        const auto& name = g.kernels[static_cast<std::size_t>(op.kernel_index)].meta.kernel_name;
        auto& list = index[op.type]["binaryList"];
        json entry = {
            {"simplifiedKey", {op.type + "/" + name}},
            {"binPath", "host/" + inputs[static_cast<std::size_t>(op.kernel_index)].first_op->type +
                            "/" + name + ".json"}};
        if (std::find(list.begin(), list.end(), entry) == list.end())
            list.push_back(entry);
    }
    for (const auto& s : plan.segments) {
        stage_superkernel(g, s,
                          {"host/SuperKernel/", ".so", codegen::host_entry_symbol(s),
                           codegen::host_layout(s).workspace_bytes, "host"},
                          build, stage, index, log);
        files.segment_library.push_back("host/SuperKernel/" + s.name + ".so");
    }
    write_text(stage / "config" / "host" / "binary_info_config.json", index.dump(2) + "\n");
    write_text(stage / "host" / "program.json", codegen::host_program_json(g, plan, files));
}

std::string stage_static_kernels(const graph::Graph& g, const fusion::Plan* plan,
                                 const std::string& soc_dir, const std::string& stage_dir,
                                 std::string& log, const std::string& extra_index) {
    const fs::path stage(stage_dir);
    json index = json::parse(extra_index);
    std::set<std::string> done;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        if (plan != nullptr && plan->ops[i].segment >= 0)
            continue;
        const auto& op = g.ops[i];
        const auto& k = g.kernels[static_cast<std::size_t>(op.kernel_index)];
        std::string rel = soc_dir + "/" + op.type + "/" + fs::path(k.path).filename().string();
        if (done.insert(rel).second) {
            fs::create_directories(stage / soc_dir / op.type);
            fs::copy_file(k.path, stage / rel);
            auto bin = fs::path(graph::resolve_path(g, op.kernel.bin_path));
            fs::copy_file(bin, stage / soc_dir / op.type / bin.filename());
            fs::permissions(stage / rel, fs::perms(0644));
            fs::permissions(stage / soc_dir / op.type / bin.filename(), fs::perms(0644));
            log += "  " + rel + " + " + bin.filename().string() + "\n";
        }
        auto& list = index[op.type]["binaryList"];
        json entry = {{"simplifiedKey", {op.type + "/" + k.meta.kernel_name}}, {"binPath", rel}};
        if (std::find(list.begin(), list.end(), entry) == list.end())
            list.push_back(entry);
    }
    std::string text = index.dump(2) + "\n";
    write_text(stage / "config" / soc_dir / "binary_info_config.json", text);
    return text;
}

std::string npu_fingerprint() {
    auto version = support::run_process({"bisheng", "--version"});
    return "bisheng\n" + version.output;
}

void build_npu_package(const graph::Graph& g, const fusion::Plan& plan,
                       const codegen::NpuTarget& target, const std::string& soc_dir,
                       const std::string& build_dir, const std::string& stage_dir, unsigned jobs,
                       std::string& log) {
    const fs::path build(build_dir), stage(stage_dir);
    fs::create_directories(build / "obj");
    fs::create_directories(build / "lib");
    // The precompiled sub-kernels, under their kernel names (what the build commands link).
    std::set<std::string> copied;
    for (const auto& s : plan.segments)
        for (int i : s.ops) {
            const auto& op = g.ops[static_cast<std::size_t>(i)];
            const auto& name =
                g.kernels[static_cast<std::size_t>(op.kernel_index)].meta.kernel_name;
            if (copied.insert(name).second)
                fs::copy_file(graph::resolve_path(g, op.kernel.bin_path),
                              build / "obj" / (name + ".o"));
        }
    // Each segment's commands come in stages; a stage's commands of all segments run in
    // parallel, the stages one after another.
    std::vector<std::vector<std::vector<std::string>>> stages;
    std::vector<std::vector<std::string>> what;
    for (const auto& s : plan.segments) {
        write_text(build / "gen" / (s.name + ".cpp"), codegen::npu_entry_source(g, s, target));
        write_vendor_compiler_inputs(g, s, target, build / "gen", log);
        auto cmds = codegen::bisheng_commands(g, s, target);
        if (stages.size() < cmds.size()) {
            stages.resize(cmds.size());
            what.resize(cmds.size());
        }
        for (std::size_t k = 0; k < cmds.size(); ++k)
            for (auto& c : cmds[k]) {
                stages[k].push_back(std::move(c));
                what[k].push_back("SuperKernel " + s.name);
            }
    }
    Builder builder(build_dir, log);
    for (std::size_t k = 0; k < stages.size(); ++k)
        builder.run_all(stages[k], what[k], jobs);
    json index = json::object();
    for (const auto& s : plan.segments)
        stage_superkernel(g, s, npu_files(g, s, target, soc_dir), build, stage, index, log);
    log += "static kernels (operators left out):\n";
    stage_static_kernels(g, &plan, soc_dir, stage_dir, log, index.dump());
}

void write_npu_sources(const graph::Graph& g, const fusion::Plan& plan,
                       const codegen::NpuTarget& target, const std::string& soc_dir,
                       const std::string& out_dir, std::string& log) {
    const fs::path dir = fs::path(out_dir) / soc_dir / "SuperKernel";
    for (const auto& s : plan.segments) {
        write_text(dir / (s.name + ".cpp"), codegen::npu_entry_source(g, s, target));
        json meta = superkernel_meta(g, s, npu_files(g, s, target, soc_dir), "");
        write_text(dir / (s.name + ".json"), meta.dump(2) + "\n");
        write_vendor_compiler_inputs(g, s, target, dir, log);
        log += "SuperKernel " + s.name + ": " + std::to_string(s.ops.size()) + " sub-kernels -> " +
               soc_dir + "/SuperKernel/" + s.name + ".{cpp,json}\n";
    }
}

} // namespace skforge::compile
