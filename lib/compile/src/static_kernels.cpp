// SPDX-License-Identifier: Apache-2.0
// Operators as static kernels: call keys from the graph's tensors, entries in the package's
// index, and the op compiler's kernels copied in beside their JSON.
#include "static_kernels.hpp"

#include "build_runner.hpp"

#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/safe_path.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace skforge::compile {

namespace fs = std::filesystem;
using support::Error;

namespace {

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

// platformInfo.deterministicLevel of a kernel's JSON; nullopt when it gives none (or -1).
std::optional<int> deterministic_level(const kernel::KernelMeta& meta) {
    if (meta.platform_info_json.empty())
        return std::nullopt;
    const auto info = nlohmann::json::parse(meta.platform_info_json);
    auto it = info.find("deterministicLevel");
    if (it == info.end() || it->get<int>() == -1)
        return std::nullopt;
    return it->get<int>();
}

// The determinism modes a kernel serves: "true" only 1, "false" only 0, "ignore" or unsaid both;
// with a platformInfo.deterministicLevel only the mode of that level (0: 0, any other: 1), the
// only one under which master's runtime can select it (the key's head holds level != 0,
// MatchBinWithPlatformInfo the level), and the one that keeps 9.0.x and 9.1.x, which do not
// compare the level, from selecting it for calls of the other mode.
std::vector<int> deterministic_modes(const kernel::KernelMeta& meta, const std::string& path) {
    std::vector<int> modes = {0, 1};
    if (meta.deterministic == "true")
        modes = {1};
    else if (meta.deterministic == "false")
        modes = {0};
    auto level = deterministic_level(meta);
    if (!level)
        return modes;
    const int mode = *level == 0 ? 0 : 1;
    if (std::find(modes.begin(), modes.end(), mode) == modes.end())
        throw Error("kernel " + path + " says deterministic '" + meta.deterministic +
                    "' but platformInfo.deterministicLevel " + std::to_string(*level) +
                    ": CANN's runtime would select it for no call; fix its JSON");
    return {mode};
}

// The keys operator `i`'s call is looked up by.
std::vector<std::string> op_keys(const graph::Graph& g, const graph::Dependencies& deps,
                                 std::size_t i) {
    const auto& op = g.ops[i];
    const auto& k = g.kernels[static_cast<std::size_t>(op.kernel_index)];
    return kernel::static_call_keys(op.type, deterministic_modes(k.meta, k.path),
                                    kernel::hostapi_impl_modes(k.meta.impl_mode),
                                    call_tensors(g, deps, i));
}

// The platformInfo of a kernel's JSON without its deterministicLevel (null when none), and the
// level (-1 when none).
std::pair<nlohmann::json, int> platform_and_level(const kernel::KernelMeta& meta) {
    if (meta.platform_info_json.empty())
        return {nullptr, -1};
    auto info = nlohmann::json::parse(meta.platform_info_json);
    const int level = info.value("deterministicLevel", -1);
    info.erase("deterministicLevel");
    return {info, level};
}

// The warning for operators `first` and `later`, whose calls share `key`, when their kernels
// differ only in platformInfo.deterministicLevel; empty otherwise.
std::string level_tie(const graph::Graph& g, const graph::Op& first, const graph::Op& later,
                      const std::string& key) {
    const auto& a = g.kernels[static_cast<std::size_t>(first.kernel_index)].meta;
    const auto& b = g.kernels[static_cast<std::size_t>(later.kernel_index)].meta;
    auto [pa, la] = platform_and_level(a);
    auto [pb, lb] = platform_and_level(b);
    if (la == lb || pa != pb)
        return "";
    // skinstall keeps one entry per key, the later one (installer.md, "later install wins").
    const bool cores = pa.is_object() && pa.contains("cubeCoreCnt");
    return "operators '" + first.name + "' and '" + later.name + "' share the static key " + key +
           " and their kernels differ only in platformInfo.deterministicLevel (" +
           std::to_string(la) + ", " + std::to_string(lb) +
           "): an installed tree keeps one kernel per key, '" + later.name + "''s, which " +
           (cores ? "CANN 9.0.x and 9.1.x select at every level (they do not compare it) and "
                    "master at level " +
                        std::to_string(lb) + " only"
                  : std::string("CANN's runtime selects at every level on every line (it drops a "
                                "platformInfo without core counts)"));
}

} // namespace

std::vector<std::string> deterministic_level_ties(const graph::Graph& g, const fusion::Plan* plan) {
    const auto deps = graph::dependencies(g);
    std::map<std::string, std::size_t> first; // key -> the first operator keyed by it
    std::set<std::pair<std::size_t, std::size_t>> warned;
    std::vector<std::string> out;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        if ((plan != nullptr && plan->ops[i].segment >= 0) || g.ops[i].kernel_index < 0)
            continue;
        for (const auto& key : op_keys(g, deps, i)) {
            auto [at, fresh] = first.emplace(key, i);
            const auto& f = g.ops[at->second];
            if (fresh || f.kernel_index == g.ops[i].kernel_index ||
                !warned.emplace(at->second, i).second)
                continue;
            if (auto w = level_tie(g, f, g.ops[i], key); !w.empty())
                out.push_back(std::move(w));
        }
    }
    return out;
}

namespace {

// Copies operator `op`'s kernel and its JSON to <dir><stem>.{o,json} in `stage`, once per file:
// a second operator of the same kernel shares them; one of another kernel with the same file
// names is refused.
void stage_kernel_files(const graph::Graph& g, const graph::Op& op, const std::string& dir,
                        const std::string& stage_dir, std::map<std::string, int>& staged,
                        std::string& log) {
    const auto& k = g.kernels[static_cast<std::size_t>(op.kernel_index)];
    const fs::path stage(stage_dir);
    // The binary and its JSON share a stem: the runtime finds one from the other.
    const std::string stem = fs::path(k.path).stem().string();
    support::checked_beneath(stage_dir, dir + stem + ".json");
    auto [at, fresh] = staged.emplace(dir + stem, op.kernel_index);
    if (fresh) {
        // The op compiler's JSON, with what the runtime reads beside the kernel filled in where
        // the op compiler left it out (kernel::with_runtime_fields).
        write_text(stage / (dir + stem + ".json"),
                   kernel::with_runtime_fields(support::read_file(k.path)));
        fs::copy_file(graph::resolve_path(g, op.kernel.bin_path), stage / (dir + stem + ".o"));
        fs::permissions(stage / (dir + stem + ".o"), fs::perms(0644));
        log += "  " + dir + stem + ".{json,o}\n";
    } else if (at->second != op.kernel_index) {
        throw Error("operator '" + op.name + "': kernel " + k.path + " would be staged as " + dir +
                    stem + ".o, where another kernel of OpType " + op.type +
                    " already is: give the kernels' files different names");
    }
}

} // namespace

void add_op_entries(kernel::PackageIndex& index, const graph::Graph& g,
                    const graph::Dependencies& deps, std::size_t i, const std::string& bin_path,
                    kernel::CoreType core) {
    const auto& op = g.ops[i];
    const auto& meta = g.kernels[static_cast<std::size_t>(op.kernel_index)].meta;
    if (meta.workspace.size.size() > kernel::k_max_index_workspaces)
        throw Error("kernel " + g.kernels[static_cast<std::size_t>(op.kernel_index)].path +
                    " has " + std::to_string(meta.workspace.size.size()) +
                    " workspaces; CANN's runtime skips a static kernel with more than " +
                    std::to_string(kernel::k_max_index_workspaces));
    // One string per entry: the op-kernel engine reads simplifiedKey as a string (op_kernel.cpp
    // AppendStaticBin).
    for (const auto& key : op_keys(g, deps, i))
        index.add(op.type,
                  {meta.block_dim, meta.kernel_name, meta.workspace.size, core, bin_path, key});
}

std::string stage_static_kernels(const graph::Graph& g, const fusion::Plan* plan,
                                 const std::string& package, const std::string& soc_dir,
                                 const std::string& stage_dir, std::string& log,
                                 kernel::PackageIndex index) {
    const auto deps = graph::dependencies(g);
    std::map<std::string, int> staged; // path in the package -> the kernel staged there
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        if ((plan != nullptr && plan->ops[i].segment >= 0) || g.ops[i].kernel_index < 0)
            continue;
        const auto& op = g.ops[i];
        const auto& k = g.kernels[static_cast<std::size_t>(op.kernel_index)];
        const std::string dir = soc_dir + "/" + op.type + "/";
        stage_kernel_files(g, op, dir, stage_dir, staged, log);
        auto core = kernel::kernel_core_type(k.meta);
        if (!core)
            throw Error("kernel " + k.path + " (operator '" + op.name + "') says neither its " +
                        "coreType nor its sub_operator_kernel_type (nor has an _AIVEC or _AICUBE " +
                        "magic): the runtime's index needs its core type");
        add_op_entries(
            index, g, deps, i,
            kernel::index_bin_path(package, dir + fs::path(k.path).stem().string() + ".o"), *core);
    }
    std::string text = index.text();
    write_text(support::path_beneath(stage_dir, "config/" + soc_dir + "/binary_info_config.json"),
               text);
    return text;
}

} // namespace skforge::compile
