// SPDX-License-Identifier: Apache-2.0
// Building a target's package tree.
// Host: each kernel's C++ source becomes an object (linked into every SuperKernel that calls it)
// and a shared object (for operators launched alone); each segment's generated entry is
// compiled and linked with its sub-kernels' objects into one shared object.
// NPU: each segment's AscendC entry is compiled with bisheng and linked with the precompiled
// sub-kernels into one device object; operators left out are packaged as static kernels.
// NPU with the vendor's backend: each segment's kernel_info goes to CANN's
// super_kernel.compile, and what it writes is packaged.
#include "target_build.hpp"

#include "skforge/codegen/ascendc.hpp"
#include "skforge/codegen/cann_backend.hpp"
#include "skforge/codegen/host.hpp"
#include "skforge/kernel/static_index.hpp"
#include "skforge/support/atomic_file.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/json.hpp"
#include "skforge/support/process.hpp"
#include "skforge/support/safe_path.hpp"
#include "skforge/support/sha256.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
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

// The file a kernel's host object comes from: its prebuilt object, else its source (empty when
// it has neither, e.g. a prefetch).
const std::string& built_from(const KernelInput& in) {
    return in.object.empty() ? in.source : in.object;
}

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

// The index CANN's runtime reads (opbase, individual_op/executor/indv_collector.cpp): per OpType
// a staticList whose entries give binDesc, the integer coreType, binPath relative to
// static_kernel/ai_core/ and the simplifiedKey a call is matched by.
json static_entry(std::uint32_t block_dim, const std::string& kernel_name,
                  const std::vector<std::uint64_t>& workspace, kernel::CoreType core,
                  const std::string& bin_path, const std::string& key) {
    return {{"binDesc",
             {{"blockDim", block_dim}, {"kernelName", kernel_name}, {"workspace", workspace}}},
            {"coreType", static_cast<int>(core)},
            {"binPath", bin_path},
            {"simplifiedKey", key}};
}

void add_static_entry(json& index, const std::string& op_type, const json& entry) {
    json& op = index[op_type];
    if (!op.contains("staticList"))
        op = {
            {"dynamicRankSupport", true}, {"simplifiedKeyMode", 0}, {"staticList", json::array()}};
    json& list = op["staticList"];
    if (std::find(list.begin(), list.end(), entry) == list.end())
        list.push_back(entry);
}

// `rel` (a file in the package) as the index's binPath. The runtime finds a kernel's JSON by
// cutting binPath at its first ".o", so a ".o" anywhere before the suffix would lose it.
std::string index_bin_path(const std::string& package, const std::string& rel) {
    std::string path = package + "/" + rel;
    if (path.ends_with(".o") && path.find(".o") != path.size() - 2)
        throw Error("binPath '" + path + "' has '.o' before its end: CANN's runtime cuts binPath " +
                    "at the first '.o' to find the kernel's JSON, so it would read the wrong " +
                    "file; rename the package (--name), the OpType or the kernel");
    return path;
}

// A dimension the static key can carry: static, below 2^60 (the key parser's limit).
void check_static_dims(const graph::Op& op, const graph::Tensor& t,
                       const std::vector<std::int64_t>& dims) {
    for (auto d : dims)
        if (d < 0 || d >= (std::int64_t{1} << 60))
            throw Error("operator '" + op.name + "': tensor '" + t.name + "' has dimension " +
                        std::to_string(d) + ": a static kernel needs a static shape");
}

// One input or output as a call's aclTensor describes it: dtype, storage format, storage shape
// and view shape, from which each of the runtime's lookup paths builds its key.
kernel::CallTensor call_tensor(const graph::Op& op, const graph::Tensor& t) {
    auto dtype = kernel::ge_data_type(t.dtype);
    if (!dtype)
        throw Error("operator '" + op.name + "': tensor '" + t.name + "' has dtype '" + t.dtype +
                    "', which has no ge::DataType code for the static-kernel key");
    check_static_dims(op, t, t.shape);
    check_static_dims(op, t, t.view_shape);
    // The contiguous strides of the view shape are keyed too: their products must fit.
    std::int64_t elements = 1;
    for (auto d : t.view_shape.empty() ? t.shape : t.view_shape)
        if (d != 0 && elements > ((std::int64_t{1} << 60) - 1) / d)
            throw Error("operator '" + op.name + "': tensor '" + t.name +
                        "' has more elements than a static-kernel key can carry");
        else
            elements *= d;
    return {*dtype, *kernel::ge_format(t.format.empty() ? "ND" : t.format), t.shape, t.view_shape};
}

// What operator `i` reads and writes, in order; an input given by name is the tensor it reads.
std::vector<kernel::CallTensor> call_tensors(const graph::Graph& g, const graph::Dependencies& deps,
                                             std::size_t i) {
    const graph::Op& op = g.ops[i];
    std::vector<kernel::CallTensor> out;
    for (std::size_t j = 0; j < op.inputs.size(); ++j) {
        const graph::Tensor* t = &op.inputs[j];
        int src = deps.sources(i)[j];
        if (t->dtype.empty() && src >= 0) {
            auto [producer, index] = deps.output(src);
            t = &g.ops[static_cast<std::size_t>(producer)].outputs[static_cast<std::size_t>(index)];
        } else if (t->dtype.empty() && src != graph::Dependencies::k_unknown) {
            t = &g.inputs[static_cast<std::size_t>(-1 - src)];
        }
        out.push_back(call_tensor(op, *t));
    }
    for (const auto& t : op.outputs)
        out.push_back(call_tensor(op, t));
    return out;
}

// The determinism modes a kernel serves: "true" only 1, "false" only 0, "ignore" or unsaid both.
std::vector<int> deterministic_modes(const kernel::KernelMeta& meta) {
    if (meta.deterministic == "true")
        return {1};
    if (meta.deterministic == "false")
        return {0};
    return {0, 1};
}

// One index entry per key operator `i`'s call is looked up by (both of the runtime's paths,
// with and without strides, each determinism mode), whose kernel is at `bin_path`. One string
// per entry: the op-kernel engine reads simplifiedKey as a string (op_kernel.cpp AppendStaticBin).
void add_op_entries(json& index, const graph::Graph& g, const graph::Dependencies& deps,
                    std::size_t i, const std::string& bin_path, kernel::CoreType core) {
    const auto& op = g.ops[i];
    const auto& meta = g.kernels[static_cast<std::size_t>(op.kernel_index)].meta;
    if (meta.workspace.size.size() > kernel::k_max_index_workspaces)
        throw Error("kernel " + g.kernels[static_cast<std::size_t>(op.kernel_index)].path +
                    " has " + std::to_string(meta.workspace.size.size()) +
                    " workspaces; CANN's runtime skips a static kernel with more than " +
                    std::to_string(kernel::k_max_index_workspaces));
    const auto tensors = call_tensors(g, deps, i);
    const auto modes = deterministic_modes(meta);
    const auto impl = kernel::hostapi_impl_modes(meta.impl_mode);
    for (const auto& key : kernel::static_call_keys(op.type, modes, impl, tensors))
        add_static_entry(index, op.type,
                         static_entry(meta.block_dim, meta.kernel_name, meta.workspace.size, core,
                                      bin_path, key));
}

// Runs build commands on up to `jobs` threads; the first failure is thrown after all stopped.
// Each finished command advances `progress` (one task per run_all).
class Builder {
  public:
    Builder(std::string dir, std::string& log, support::Progress* progress)
        : m_dir(std::move(dir)), m_log(log), m_progress(progress) {}

    void run_all(const std::vector<std::vector<std::string>>& commands,
                 const std::vector<std::string>& what, unsigned jobs) {
        std::atomic<std::size_t> next{0};
        std::vector<support::ProcessResult> results(commands.size());
        std::mutex progress_mutex;
        std::size_t done = 0;
        support::NullProgress none;
        support::Progress& progress = m_progress != nullptr ? *m_progress : none;
        progress.begin("building " + std::to_string(commands.size()) + " target(s)",
                       commands.size());
        auto worker = [&] {
            for (std::size_t i = next++; i < commands.size(); i = next++) {
                results[i] = support::run_process(commands[i], m_dir);
                std::lock_guard lock(progress_mutex);
                progress.update(++done);
            }
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
        progress.end();
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
    support::Progress* m_progress;
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
    std::string dir;                         ///< e.g. host/SuperKernel/
    std::string suffix;                      ///< of the binary: .so on the host, .o on the NPU
    std::string kernel_name;                 ///< the entry's symbol
    std::uint64_t workspace;                 ///< bytes of its workspace block
    std::string arch;                        ///< host, dav-2201 or dav-3510: which metadata shape
    std::string package;                     ///< the package's name: the first component of binPath
    std::optional<fusion::NpuLaunch> launch; ///< NPU: the launch on the compile's SoC
    std::string soc;                         ///< NPU: the compile's SoC
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
    // The entry is launched as codegen::npu_launch says on the compile's SoC (which the
    // environment may choose, unlike the plan's); the JSON the runtime launches from must say
    // the same.
    if (f.launch) {
        meta["blockDim"] = f.launch->block_dim;
        meta["taskRation"] = fusion::task_ration_of(f.launch->type);
    }
    // The vendor writes a workspace only when the SuperKernel needs one.
    if (f.workspace == 0)
        meta.erase("workspace");
    else
        meta["workspace"] = {{"num", 1}, {"size", {f.workspace}}, {"type", {0}}};
    return meta;
}

SuperKernelFiles npu_files(const graph::Graph& g, const fusion::Segment& s,
                           const codegen::NpuTarget& target, const std::string& soc_dir,
                           const std::string& package = "") {
    return {soc_dir + "/SuperKernel/",
            ".o",
            codegen::npu_entry_symbol(g, s),
            codegen::host_layout(s).workspace_bytes + codegen::npu_sync_bytes(g, s, target),
            target.arch,
            package,
            codegen::npu_launch(g, s, target),
            target.soc};
}

// The packaged NPU SuperKernel's JSON with what CANN's runtime reads beside every kernel of the
// index (opbase UpdateStaticJsonExtraInfo): localMemorySize and schedule_mode, the largest of its
// sub-kernels' (0 when none says), a workspace even when it has none, and platformInfo when the
// SoC's core counts are known (the launch was sized for them). --sources-only keeps the
// vendor's shape.
json runtime_superkernel_meta(const graph::Graph& g, const fusion::Segment& s,
                              const SuperKernelFiles& f, json meta) {
    std::uint32_t local_memory = 0, schedule_mode = 0;
    for (int i : s.ops) {
        const auto& k =
            g.kernels[static_cast<std::size_t>(g.ops[static_cast<std::size_t>(i)].kernel_index)]
                .meta;
        local_memory = std::max(local_memory, k.local_memory_size.value_or(0));
        schedule_mode = std::max(schedule_mode, k.schedule_mode.value_or(0));
    }
    meta["localMemorySize"] = local_memory;
    meta["schedule_mode"] = schedule_mode;
    return json::parse(
        kernel::with_runtime_fields(support::dump_json(meta), kernel::platform_core_counts(f.soc)));
}

// Where the vendor backend's input and output of segment `s` are, under the directory the
// driver runs in.
std::string cann_work_dir(const fusion::Segment& s) {
    return "cann/" + s.name;
}

// The vendor compiler's inputs for segment `s` in `dir`: cann/<segment>/kernel_info.json and the
// driver skforge_cann_driver.py. Throws when the segment cannot be given to the vendor.
void write_cann_inputs(const graph::Graph& g, const fusion::Plan& plan, const fusion::Segment& s,
                       const fs::path& dir) {
    // Graph paths are relative to the working directory; the vendor runs in another one.
    const std::string info = codegen::cann_kernel_info(g, plan, s, fs::current_path().string());
    write_text(support::path_beneath(dir.string(), cann_work_dir(s) + "/kernel_info.json"), info);
    write_text(support::path_beneath(dir.string(), "skforge_cann_driver.py"),
               codegen::cann_driver_program());
}

// The inputs of the vendor's own SuperKernel compiler for segment `s`, written into `dir`
// beside the segment's source and JSON (by build_npu_package and by --sources-only). A segment
// the vendor cannot be given (no bin_path, compile-options it cannot carry) is only logged: the
// skforge backend does not need these inputs.
void write_vendor_compiler_inputs(const graph::Graph& g, const fusion::Plan& plan,
                                  const fusion::Segment& s, const fs::path& dir, std::string& log) {
    try {
        write_cann_inputs(g, plan, s, dir);
    } catch (const Error& e) {
        log += "no kernel_info for the vendor's compiler (SuperKernel " + s.name +
               "): " + e.what() + "\n";
    }
}

// The index's coreType of a SuperKernel. On the NPU every entry is built as a MIX kernel (even
// an all-vector one is KERNEL_TYPE_MIX_AIV_1_0) and its JSON says "MIX", which is how the
// runtime picks the binary's magic and reads taskRation (opbase indv_bininfo.cpp); the vendor's
// compiler indexes the same way. The host target keeps the plan's.
kernel::CoreType superkernel_core_type(const fusion::Segment& s, const SuperKernelFiles& f) {
    if (f.arch != "host")
        return kernel::CoreType::mix;
    return kernel::parse_core_type(s.core_type).value_or(kernel::CoreType::mix);
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
    if (f.arch != "host")
        meta = runtime_superkernel_meta(g, s, f, std::move(meta));
    write_text(support::path_beneath(stage, f.dir + s.name + ".json"),
               support::dump_json(meta, 2) + "\n");
    write_text(support::path_beneath(stage, f.dir + s.name + f.suffix), binary);
    const fs::path source = support::path_beneath(stage, f.dir + s.name + ".cpp");
    fs::copy_file(build / "gen" / (s.name + ".cpp"), source);
    fs::permissions(source, fs::perms(0644));
    // No call ever looks a SuperKernel up by this key; it names the package so that installing
    // another package with a segment of the same name does not replace this one.
    add_static_entry(index, "SuperKernel",
                     static_entry(meta.value("blockDim", s.largest_block_dim), f.kernel_name,
                                  {f.workspace}, superkernel_core_type(s, f),
                                  index_bin_path(f.package, f.dir + s.name + f.suffix),
                                  "SuperKernel/" + f.package + "/" + s.name));
    log += "SuperKernel " + s.name + ": " + std::to_string(s.ops.size()) + " sub-kernels -> " +
           f.dir + s.name + f.suffix + "\n";
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
            fs::copy_file(in.object, support::path_beneath(build, "obj/" + name + ".o"),
                          fs::copy_options::overwrite_existing);
            log += "kernel " + name + ": host object " + in.object + "\n";
            continue;
        }
        fs::create_directories(build / "src");
        fs::copy_file(in.source, support::path_beneath(build, "src/" + name + ".cpp"),
                      fs::copy_options::overwrite_existing);
        log += "kernel " + name + ": source " + in.source + "\n";
        auto cmd = std::vector<std::string>{cxx};
        cmd.insert(cmd.end(), cflags.begin(), cflags.end());
        cmd.insert(cmd.end(), {"-DSKFORGE_KERNEL_NAME=" + name, "-c", "src/" + name + ".cpp", "-o",
                               support::checked_beneath(build_dir, "obj/" + name + ".o")});
        commands.push_back(cmd);
        what.push_back("kernel " + name + " (" + in.source + ", used by '" + in.first_op->name +
                       "')");
    }
    Builder builder(build_dir, log, progress);
    builder.run_all(commands, what, jobs);

    // 2. One shared object per kernel (operators launched alone), one per SuperKernel.
    commands.clear();
    what.clear();
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        if (inputs[k].first_op == nullptr)
            continue;
        const std::string& name = g.kernels[k].meta.kernel_name;
        commands.push_back({cxx, "-shared", "-o",
                            support::checked_beneath(build_dir, "lib/" + name + ".so"),
                            "obj/" + name + ".o"});
        what.push_back("kernel library " + name);
    }
    for (const auto& s : plan.segments) {
        std::string entry = codegen::host_entry_symbol(s);
        write_text(support::path_beneath(build, "gen/" + s.name + ".cpp"),
                   codegen::host_entry_source(g, s));
        write_text(support::path_beneath(build, "gen/" + s.name + ".map"),
                   codegen::host_version_script(s));
        auto cmd = std::vector<std::string>{cxx};
        cmd.insert(cmd.end(), cflags.begin(), cflags.end());
        for (const auto& w : split_words(s.options.compile_options))
            cmd.push_back(w);
        cmd.insert(cmd.end(), {"-shared", "-Wl,--version-script=gen/" + s.name + ".map", "-o",
                               support::checked_beneath(build_dir, "lib/" + s.name + ".so"),
                               "gen/" + s.name + ".cpp"});
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
        json meta =
            support::parse_json(support::read_file(loaded.path, {support::k_max_json_bytes}));
        if (!meta.is_object()) // it was one when the graph was loaded
            throw Error("kernel metadata '" + loaded.path + "' changed during the compile");
        meta["magic"] = kernel::k_host_magic_name;
        meta["binFileName"] = name;
        meta["binFileSuffix"] = ".o";
        meta["sha256"] = support::sha256_hex(object);
        write_text(support::path_beneath(stage, dir + name + ".json"),
                   support::dump_json(meta, 2) + "\n");
        write_text(support::path_beneath(stage, dir + name + ".o"), object);
        const fs::path library = support::path_beneath(stage, dir + name + ".so");
        fs::copy_file(build / "lib" / (name + ".so"), library);
        fs::permissions(library, fs::perms(0644));
        files.kernel_library[k] = dir + name + ".so";
        files.kernel_symbol[k] = name;
    }
    const auto deps = graph::dependencies(g);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        if (g.ops[i].kernel_index < 0)
            continue;
        const auto k = static_cast<std::size_t>(g.ops[i].kernel_index);
        // Host kernels run on worker threads: AiCore when the metadata does not say.
        add_op_entries(
            index, g, deps, i,
            index_bin_path(package, "host/" + inputs[k].first_op->type + "/" +
                                        g.kernels[k].meta.kernel_name + ".o"),
            kernel::kernel_core_type(g.kernels[k].meta).value_or(kernel::CoreType::ai_core));
    }
    for (const auto& s : plan.segments) {
        stage_superkernel(g, s,
                          {"host/SuperKernel/", ".so", codegen::host_entry_symbol(s),
                           codegen::host_layout(s).workspace_bytes, "host", package},
                          build, stage, index, log);
        files.segment_library.push_back("host/SuperKernel/" + s.name + ".so");
    }
    write_text(stage / "config" / "host" / "binary_info_config.json",
               support::dump_json(index, 2) + "\n");
    write_text(stage / "host" / "program.json", codegen::host_program_json(g, plan, files));
}

std::string stage_static_kernels(const graph::Graph& g, const fusion::Plan* plan,
                                 const std::string& package, const std::string& soc_dir,
                                 const std::string& stage_dir, std::string& log,
                                 const std::string& extra_index) {
    const fs::path stage(stage_dir);
    json index = json::parse(extra_index);
    const auto deps = graph::dependencies(g);
    std::map<std::string, int> staged; // path in the package -> the kernel staged there
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        if ((plan != nullptr && plan->ops[i].segment >= 0) || g.ops[i].kernel_index < 0)
            continue;
        const auto& op = g.ops[i];
        const auto& k = g.kernels[static_cast<std::size_t>(op.kernel_index)];
        // The binary and its JSON share a stem: the runtime finds one from the other.
        const std::string dir = soc_dir + "/" + op.type + "/";
        const std::string stem = fs::path(k.path).stem().string();
        support::checked_beneath(stage_dir, dir + stem + ".json");
        auto [at, fresh] = staged.emplace(dir + stem, op.kernel_index);
        if (fresh) {
            // The op compiler's JSON, with what the runtime reads beside the kernel filled in
            // where the op compiler left it out (kernel::with_runtime_fields).
            write_text(stage / (dir + stem + ".json"),
                       kernel::with_runtime_fields(support::read_file(k.path)));
            fs::copy_file(graph::resolve_path(g, op.kernel.bin_path), stage / (dir + stem + ".o"));
            fs::permissions(stage / (dir + stem + ".o"), fs::perms(0644));
            log += "  " + dir + stem + ".{json,o}\n";
        } else if (at->second != op.kernel_index) {
            throw Error("operator '" + op.name + "': kernel " + k.path + " would be staged as " +
                        dir + stem + ".o, where another kernel of OpType " + op.type +
                        " already is: give the kernels' files different names");
        }
        auto core = kernel::kernel_core_type(k.meta);
        if (!core)
            throw Error("kernel " + k.path + " (operator '" + op.name + "') says neither its " +
                        "coreType nor its sub_operator_kernel_type (nor has an _AIVEC or _AICUBE " +
                        "magic): the runtime's index needs its core type");
        add_op_entries(index, g, deps, i, index_bin_path(package, dir + stem + ".o"), *core);
    }
    std::string text = support::dump_json(index, 2) + "\n";
    write_text(support::path_beneath(stage_dir, "config/" + soc_dir + "/binary_info_config.json"),
               text);
    return text;
}

std::string npu_fingerprint() {
    auto version = support::run_process({"bisheng", "--version"});
    return "bisheng\n" + version.output;
}

void build_npu_package(const graph::Graph& g, const fusion::Plan& plan,
                       const codegen::NpuTarget& target, const std::string& package,
                       const std::string& soc_dir, const std::string& build_dir,
                       const std::string& stage_dir, unsigned jobs, std::string& log,
                       support::Progress* progress) {
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
                              support::path_beneath(build, "obj/" + name + ".o"));
        }
    // Each segment's commands come in stages; a stage's commands of all segments run in
    // parallel, the stages one after another.
    std::vector<std::vector<std::vector<std::string>>> stages;
    std::vector<std::vector<std::string>> what;
    for (const auto& s : plan.segments) {
        // Checked here, so the bisheng commands' gen/, obj/ and lib/ paths of this name are too.
        write_text(support::path_beneath(build, "gen/" + s.name + ".cpp"),
                   codegen::npu_entry_source(g, s, target));
        write_vendor_compiler_inputs(g, plan, s, build / "gen", log);
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
    Builder builder(build_dir, log, progress);
    for (std::size_t k = 0; k < stages.size(); ++k)
        builder.run_all(stages[k], what[k], jobs);
    json index = json::object();
    for (const auto& s : plan.segments)
        stage_superkernel(g, s, npu_files(g, s, target, soc_dir, package), build, stage, index,
                          log);
    log += "static kernels (operators left out):\n";
    stage_static_kernels(g, &plan, package, soc_dir, stage_dir, log, support::dump_json(index));
}

namespace {

// The vendor's log files (kernel_meta/<kernel name>*.log) of every segment, into `log`: on
// failure as on success, they say what the vendor ran.
void append_cann_logs(const graph::Graph& g, const fusion::Plan& plan, const fs::path& build,
                      std::string& log) {
    for (const auto& s : plan.segments) {
        const fs::path dir = build / cann_work_dir(s) / codegen::k_cann_kernel_meta;
        const std::string name = codegen::cann_kernel_name(g, s);
        std::error_code ec;
        std::set<std::string> logs; // sorted: the log reads the same every time
        for (const auto& e : fs::directory_iterator(dir, ec))
            if (auto f = e.path().filename().string(); f.starts_with(name) && f.ends_with(".log"))
                logs.insert(e.path().string());
        for (const auto& path : logs)
            log += "vendor log " + fs::path(path).filename().string() + " (SuperKernel " + s.name +
                   "):\n" + support::read_file(path);
    }
}

// What is wrong with the vendor's metadata `meta` of `object`, or nullopt.
std::optional<std::string> cann_meta_problem(const json& j, const fs::path& object,
                                             const std::string& name) {
    if (!j.is_object())
        return "is not a JSON object";
    if (!j.contains("binFileName") || j["binFileName"] != name)
        return "does not name " + name + " as binFileName";
    if (j.contains("sha256") &&
        j["sha256"] != support::sha256_file(object.string(), UINT64_MAX).sha256)
        return "has a sha256 that does not match " + object.filename().string();
    return std::nullopt;
}

// What the vendor wrote for segment `s`, checked (present, metadata naming the object, sha256
// when given) and copied into the package under the vendor's names.
void stage_cann_superkernel(const graph::Graph& g, const fusion::Segment& s, const fs::path& build,
                            const std::string& soc, const std::string& soc_dir,
                            const std::string& package, const fs::path& stage, json& index,
                            std::string& log) {
    const std::string name = codegen::cann_kernel_name(g, s);
    const fs::path out = build / cann_work_dir(s) / codegen::k_cann_kernel_meta;
    const fs::path object = out / (name + ".o"), meta = out / (name + ".json");
    for (const auto& p : {object, meta})
        if (!fs::is_regular_file(p))
            throw Error("the vendor's super_kernel.compile did not write " + p.filename().string() +
                        " for SuperKernel " + s.name + " (in " + out.string() + ")");
    const json vendor =
        support::parse_json(support::read_file(meta.string(), {support::k_max_json_bytes}));
    if (auto why = cann_meta_problem(vendor, object, name))
        throw Error("the vendor's " + meta.string() + " for SuperKernel " + s.name + " " + *why);
    const std::string dir = soc_dir + "/SuperKernel/";
    fs::create_directories(stage / dir);
    auto place = [&](const fs::path& from, const std::string& to) {
        const fs::path at = support::path_beneath(stage.string(), dir + to);
        fs::copy_file(from, at);
        fs::permissions(at, fs::perms(0644));
    };
    place(object, name + ".o");
    // The vendor's JSON with what the runtime reads beside every indexed kernel filled in.
    write_text(support::path_beneath(stage.string(), dir + name + ".json"),
               kernel::with_runtime_fields(support::read_file(meta.string()),
                                           kernel::platform_core_counts(soc)));
    // Its generated source, <name>[_<pid>]_kernel.cpp, kept as the skforge backend keeps its own
    // (the first by name, should there be more).
    std::set<fs::path> sources;
    for (const auto& e : fs::directory_iterator(out))
        if (auto f = e.path().filename().string();
            f.starts_with(name) && f.ends_with("_kernel.cpp"))
            sources.insert(e.path());
    if (!sources.empty())
        place(*sources.begin(), name + ".cpp");
    // The index entry from the vendor's own metadata (checked to be an object above), keyed as
    // skforge's SuperKernels are.
    std::vector<std::uint64_t> workspace;
    if (auto ws = vendor.find("workspace");
        ws != vendor.end() && ws->is_object() && ws->contains("size") && (*ws)["size"].is_array())
        for (const auto& v : (*ws)["size"])
            if (v.is_number_unsigned())
                workspace.push_back(v.get<std::uint64_t>());
    add_static_entry(index, "SuperKernel",
                     static_entry(vendor.value("blockDim", fusion::launch_summary(s).block_dim),
                                  name, workspace,
                                  kernel::parse_core_type(vendor.value("coreType", "MIX"))
                                      .value_or(kernel::CoreType::mix),
                                  index_bin_path(package, dir + name + ".o"),
                                  "SuperKernel/" + package + "/" + s.name));
    log += "SuperKernel " + s.name + ": " + std::to_string(s.ops.size()) + " sub-kernels -> " +
           dir + name + ".o (the vendor's super_kernel.compile)\n";
}

} // namespace

CannProbe probe_cann() {
    CannProbe p;
    try {
        auto r = support::run_process(codegen::cann_probe_command());
        p.output = r.output;
        p.ok = r.exit_code == 0;
    } catch (const Error& e) {
        p.output = e.what();
        return p;
    }
    // The module's path is the last line printed (the vendor may log before it).
    std::string text = p.output;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
        text.pop_back();
    p.module = text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
    return p;
}

std::string cann_fingerprint(const CannProbe& probe) {
    std::error_code ec;
    std::string digest = fs::is_regular_file(probe.module, ec)
                             ? support::sha256_file(probe.module, UINT64_MAX).sha256
                             : "unreadable";
    return "cann superkernel " + probe.module + " " + digest + "\n";
}

void build_cann_package(const graph::Graph& g, const fusion::Plan& plan, const std::string& soc,
                        const std::string& soc_dir, const std::string& package,
                        const std::string& build_dir, const std::string& stage_dir, unsigned jobs,
                        std::string& log, support::Progress* progress) {
    const fs::path build(build_dir);
    std::vector<std::vector<std::string>> commands;
    std::vector<std::string> what;
    for (const auto& s : plan.segments) {
        const std::string work = cann_work_dir(s);
        write_cann_inputs(g, plan, s, build);
        commands.push_back(codegen::cann_command("skforge_cann_driver.py",
                                                 work + "/kernel_info.json",
                                                 codegen::cann_kernel_name(g, s), soc, work));
        what.push_back("SuperKernel " + s.name + " (the vendor's super_kernel.compile)");
    }
    try {
        Builder(build_dir, log, progress).run_all(commands, what, jobs);
    } catch (const Error&) {
        append_cann_logs(g, plan, build, log);
        throw;
    }
    append_cann_logs(g, plan, build, log);
    json index = json::object();
    for (const auto& s : plan.segments)
        stage_cann_superkernel(g, s, build, soc, soc_dir, package, stage_dir, index, log);
    log += "static kernels (operators left out):\n";
    stage_static_kernels(g, &plan, package, soc_dir, stage_dir, log, support::dump_json(index));
}

void write_npu_sources(const graph::Graph& g, const fusion::Plan& plan,
                       const codegen::NpuTarget& target, const std::string& soc_dir,
                       const std::string& out_dir, std::string& log) {
    const std::string dir = soc_dir + "/SuperKernel/";
    for (const auto& s : plan.segments) {
        write_text(support::path_beneath(out_dir, dir + s.name + ".cpp"),
                   codegen::npu_entry_source(g, s, target));
        json meta = superkernel_meta(g, s, npu_files(g, s, target, soc_dir), "");
        write_text(support::path_beneath(out_dir, dir + s.name + ".json"),
                   support::dump_json(meta, 2) + "\n");
        write_vendor_compiler_inputs(g, plan, s,
                                     support::path_beneath(out_dir, soc_dir + "/SuperKernel"), log);
        log += "SuperKernel " + s.name + ": " + std::to_string(s.ops.size()) + " sub-kernels -> " +
               dir + s.name + ".{cpp,json}\n";
    }
}

} // namespace skforge::compile
