// SPDX-License-Identifier: Apache-2.0
// npu/program.json: the tensors, the operators with their own kernels, the SuperKernels with
// their parameter tables slot by slot, and the fused launch order (share/doc/npu-program.md).
#include "npu_program.hpp"

#include "skforge/codegen/cann_backend.hpp"
#include "skforge/codegen/host.hpp"
#include "skforge/kernel/static_index.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/json.hpp"
#include "skforge/support/safe_path.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

namespace skforge::compile {

namespace fs = std::filesystem;
using nlohmann::json;
using support::Error;

namespace {

void write_text(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f.flush())
        throw Error("cannot write " + path.string());
    fs::permissions(path, fs::perms(0644));
}

// Every tensor of the graph once: graph inputs, then each operator's outputs.
struct TensorTable {
    json list = json::array();
    std::unordered_map<std::string, std::size_t> index;

    std::size_t at(const std::string& name, const graph::Op& op) const {
        auto it = index.find(name);
        if (it == index.end())
            throw Error("operator '" + op.name + "': tensor '" + name +
                        "' has no declaration with a shape and dtype");
        return it->second;
    }
};

TensorTable tensor_table(const graph::Graph& g) {
    TensorTable t;
    std::set<std::string> read;
    for (const auto& op : g.ops)
        for (const auto& in : op.inputs)
            read.insert(in.name);
    auto add = [&](const graph::Tensor& x, bool input) {
        if (t.index.contains(x.name))
            return;
        std::uint64_t n = fusion::dtype_size(x.dtype);
        if (n == 0)
            throw Error("tensor '" + x.name + "' has dtype '" + x.dtype +
                        "', whose element size the NPU program does not know");
        for (auto d : x.shape)
            n *= static_cast<std::uint64_t>(std::max<std::int64_t>(d, 0));
        t.index.emplace(x.name, t.list.size());
        t.list.push_back({{"name", x.name},
                          {"dtype", x.dtype},
                          {"shape", x.shape},
                          {"bytes", n},
                          {"graph_input", input},
                          {"graph_output", !read.contains(x.name)}});
    };
    for (const auto& x : g.inputs)
        add(x, true);
    for (const auto& op : g.ops)
        for (const auto& x : op.outputs)
            add(x, false);
    return t;
}

// The kernel an operator launches alone: its JSON and binary in the package, what the launch
// reads from the JSON, and its tiling data from runInfo (null when the op compiler wrote none).
// The schedule mode and local memory size are runInfo's when it has them, else the JSON's
// schedule_mode and localMemorySize, as opbase reads a static kernel's (indv_collector.cpp,
// UpdateRunInfoForStaticJson).
json op_kernel(const graph::Graph& g, const graph::Op& op, const std::string& dir,
               const std::string& arch) {
    const auto& k = g.kernels[static_cast<std::size_t>(op.kernel_index)];
    const std::string stem = dir + op.type + "/" + fs::path(k.path).stem().string();
    auto core = kernel::kernel_core_type(k.meta);
    json tiling = nullptr;
    std::uint32_t block_dim = k.meta.block_dim;
    std::uint32_t schedule_mode = k.meta.schedule_mode.value_or(0);
    std::uint32_t local_memory = k.meta.local_memory_size.value_or(0);
    if (!k.meta.run_info_json.empty()) {
        json run = json::parse(k.meta.run_info_json);
        tiling = {{"key", run.value("tiling_key", std::uint64_t{0})},
                  {"data", run.value("tiling_data", std::string())}};
        block_dim = run.value("block_dim", block_dim);
        schedule_mode = run.value("schedule_mode", schedule_mode);
        local_memory = run.value("local_memory_size", local_memory);
    }
    return {{"json", stem + ".json"},
            {"binary", stem + ".o"},
            {"kernel_name", k.meta.kernel_name},
            {"magic", k.meta.magic_name},
            {"block_dim", block_dim},
            // opbase puts the FFTS address first for a MIX kernel (indv_executor.cpp)
            {"ffts", arch != "dav-3510" && core == kernel::CoreType::mix && !k.meta.aicpu},
            {"schedule_mode", schedule_mode},
            {"local_memory_size", local_memory},
            {"workspace", k.meta.workspace.size},
            {"tiling", tiling}};
}

// Copies the kernel of fused operator `op` to npu/kernels/ (once per file).
void stage_fused_kernel(const graph::Graph& g, const graph::Op& op, const fs::path& stage,
                        std::set<std::string>& done, std::string& log) {
    const auto& k = g.kernels[static_cast<std::size_t>(op.kernel_index)];
    const std::string stem = "npu/kernels/" + op.type + "/" + fs::path(k.path).stem().string();
    if (!done.insert(stem).second)
        return;
    write_text(support::path_beneath(stage.string(), stem + ".json"),
               kernel::with_runtime_fields(support::read_file(k.path)));
    const fs::path bin_at = support::path_beneath(stage.string(), stem + ".o");
    fs::copy_file(graph::resolve_path(g, op.kernel.bin_path), bin_at);
    fs::permissions(bin_at, fs::perms(0644));
    log += "  " + stem + ".{json,o} (operator " + op.name + " alone)\n";
}

// Where segment `s`'s buffers are: tensor name -> arena offset in the workspace block, for the
// tensors that live in its arena.
std::map<std::string, std::uint64_t> arena_of(const fusion::Segment& s) {
    std::map<std::string, std::uint64_t> out;
    const auto base = codegen::host_layout(s).arena_base;
    for (const auto& b : s.buffers)
        if (b.arena)
            out.emplace(b.tensor, base + b.offset);
    return out;
}

// Events of one kind, as the parameter table needs them.
struct EventSets {
    std::set<std::int64_t> inner;  ///< sent and received inside the segment
    std::set<std::int64_t> beside; ///< with an operator beside the cores (Plan::notify_waits)
};

// One slot per event of a sub-kernel: nothing (null) for an event inside the SuperKernel, which
// the entry orders itself; else a lock, whose `peer` is `beside` (an AICPU tiling or prefetch
// operator sets or waits for it) or `launch` (another launch, which the streams and events
// order: the runtime sets such a wait lock itself before the run).
void event_slots(json& args, std::uint32_t first, const std::vector<std::int64_t>& events,
                 const EventSets& sets, const char* role) {
    for (std::size_t i = 0; i < events.size(); ++i) {
        json a = {{"slot", first + i}};
        if (sets.inner.contains(events[i]))
            a["inner_event"] = events[i];
        else
            a.update({{"lock", events[i]},
                      {"role", role},
                      {"peer", sets.beside.contains(events[i]) ? "beside" : "launch"}});
        args.push_back(std::move(a));
    }
}

// Why sub-kernel `op`'s parameter names (its JSON's sub_operator_params) cannot be laid out as
// its tensors, or "" when they can (or there are none): the op compiler names a kernel's GM
// parameters in call order, its inputs (`<name>_in__`), its outputs (`<name>_out_`), then
// `workspace` (asc-devkit add_sub_super_kernel_info; graph-autofusion's fixtures), which is the
// layout without names. Names without those suffixes are taken in that order when the count fits.
std::string params_mismatch(const graph::Op& op, const std::vector<std::string>& params) {
    if (params.empty())
        return "";
    const std::size_t ins = op.inputs.size(), outs = op.outputs.size();
    auto list = [&] {
        std::string t;
        for (const auto& n : params)
            t += (t.empty() ? "" : ", ") + n;
        return "its JSON names " + std::to_string(params.size()) + " parameters (" + t + ")";
    };
    if (params.size() != ins + outs + 1 || params.back() != "workspace")
        return list() + ", not its " + std::to_string(ins) + " inputs, " + std::to_string(outs) +
               " outputs and a workspace";
    for (std::size_t i = 0; i + 1 < params.size(); ++i) {
        bool in = params[i].ends_with("_in__"), out = params[i].ends_with("_out_");
        if ((in && i >= ins) || (out && i < ins))
            return list() + ": '" + params[i] + "' is not its " + (i < ins ? "input " : "output ") +
                   std::to_string(i < ins ? i : i - ins) + " (" +
                   (i < ins ? op.inputs[i].name : op.outputs[i - ins].name) + ")";
    }
    return "";
}

// The parameter table of segment `s`, slot by slot (codegen::npu_param_layout).
json segment_args(const graph::Graph& g, const fusion::Segment& s, const codegen::NpuTarget& t,
                  const TensorTable& tensors, const std::set<std::int64_t>& beside) {
    json args = json::array();
    if (t.arch != "dav-3510")
        args.push_back({{"slot", 0}, {"ffts", true}});
    auto layout = codegen::npu_param_layout(g, s, t);
    auto vendor = fusion::vendor_param_slots(g, s, t.arch);
    auto arena = arena_of(s);
    // Events sent and received inside the segment: its entry orders them without a lock.
    std::set<std::int64_t> sent;
    EventSets sets{{}, beside};
    for (int i : s.ops)
        sent.insert(g.ops[static_cast<std::size_t>(i)].send_events.begin(),
                    g.ops[static_cast<std::size_t>(i)].send_events.end());
    for (int i : s.ops)
        for (auto e : g.ops[static_cast<std::size_t>(i)].recv_events)
            if (sent.contains(e))
                sets.inner.insert(e);
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        const auto& op = g.ops[static_cast<std::size_t>(s.ops[p])];
        const auto& meta = fusion::sub_kernel_meta(g, s, p);
        auto slot = static_cast<std::uint32_t>(vendor[p].param);
        std::string mismatch = params_mismatch(op, meta.sub_operator_params);
        if (!mismatch.empty()) {
            args.push_back({{"slot", slot},
                            {"count", vendor[p].count},
                            {"sub_operator_params", meta.sub_operator_params},
                            {"op", op.name},
                            {"reason", mismatch}});
        } else {
            std::vector<const graph::Tensor*> all;
            for (const auto& x : op.inputs)
                all.push_back(&x);
            for (const auto& x : op.outputs)
                all.push_back(&x);
            for (const auto* x : all) {
                if (auto it = arena.find(x->name); it != arena.end())
                    args.push_back({{"slot", slot++}, {"arena", it->second}, {"name", x->name}});
                else
                    args.push_back({{"slot", slot++}, {"tensor", tensors.at(x->name, op)}});
            }
            args.push_back({{"slot", slot},
                            {"workspace", s.subs[p].workspace_offset},
                            {"bytes", s.subs[p].workspace},
                            {"op", op.name}});
        }
        event_slots(args, layout.notify_offset[p], op.send_events, sets, "notify");
        event_slots(args, layout.wait_offset[p], op.recv_events, sets, "wait");
    }
    // The entry's own area (feed-sync-all's flags) follows the sub-kernels' scratch and the
    // arena; without one the slot is null.
    json own = nullptr;
    if (codegen::npu_sync_bytes(g, s, t) != 0)
        own = codegen::host_layout(s).workspace_bytes;
    args.push_back({{"slot", layout.workspace_offset}, {"superkernel_workspace", own}});
    return args;
}

// A segment's launch: the packaged JSON's kernelName, magic, blockDim and workspace, and the
// table.
json segment_launch(const graph::Graph& g, const fusion::Segment& s, std::size_t index,
                    const codegen::NpuTarget& t, const std::string& soc_dir, SuperKernelNames names,
                    const fs::path& stage, const TensorTable& tensors,
                    const std::set<std::int64_t>& beside) {
    const std::string base =
        soc_dir + "/SuperKernel/" +
        (names == SuperKernelNames::vendor ? codegen::cann_kernel_name(g, s) : s.name);
    const json meta = support::parse_json(
        support::read_file(support::path_beneath(stage.string(), base + ".json")));
    std::uint64_t workspace = 0;
    if (auto ws = meta.find("workspace"); ws != meta.end() && ws->contains("size"))
        for (const auto& v : (*ws)["size"])
            workspace += v.get<std::uint64_t>();
    auto launch = codegen::npu_launch(g, s, t);
    return {{"name", s.name},
            {"index", index},
            {"ops", s.ops},
            {"stream", g.ops[static_cast<std::size_t>(s.ops.front())].stream_id},
            {"json", base + ".json"},
            {"binary", base + ".o"},
            {"kernel_name", meta.at("kernelName")},
            {"magic", meta.value("magic", "RT_DEV_BINARY_MAGIC_ELF")},
            {"block_dim", meta.value("blockDim", launch.block_dim)},
            {"kernel_type", kernel::kernel_type_name(launch.type)},
            {"schedule_mode", meta.value("schedule_mode", 0)},
            {"local_memory_size", std::max(0, meta.value("localMemorySize", 0))},
            {"workspace_bytes", workspace},
            {"args", segment_args(g, s, t, tensors, beside)}};
}

} // namespace

void write_npu_program(const graph::Graph& g, const fusion::Plan& plan,
                       const codegen::NpuTarget& target, const std::string& soc_dir,
                       SuperKernelNames names, const std::string& stage_dir, std::string& log) {
    const fs::path stage(stage_dir);
    TensorTable tensors = tensor_table(g);
    std::set<std::int64_t> locks;
    json ops = json::array();
    std::set<std::string> staged;
    log += "NPU program (npu/program.json):\n";
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const auto& op = g.ops[i];
        json in = json::array(), out = json::array();
        for (const auto& x : op.inputs)
            in.push_back(tensors.at(x.name, op));
        for (const auto& x : op.outputs)
            out.push_back(tensors.at(x.name, op));
        const int seg = plan.ops[i].segment;
        json o = {{"name", op.name},
                  {"type", op.type},
                  {"kind", graph::op_kind_name(op.kind)},
                  {"stream", op.stream_id},
                  {"inputs", in},
                  {"outputs", out},
                  {"segment", seg},
                  {"send_events", op.send_events},
                  {"recv_events", op.recv_events},
                  {"kernel", nullptr}};
        // An aicpu_tiling operator's kernel too: never fused, it is staged with the operators
        // left out.
        if (op.kernel_index >= 0 && op.kind != graph::OpKind::prefetch) {
            if (seg >= 0)
                stage_fused_kernel(g, op, stage, staged, log);
            o["kernel"] = op_kernel(g, op, seg >= 0 ? "npu/kernels/" : soc_dir + "/", target.arch);
        }
        ops.push_back(std::move(o));
    }
    std::set<std::int64_t> beside;
    for (const auto& nw : plan.notify_waits)
        beside.insert(nw.event);
    json segments = json::array(), steps = json::array();
    for (std::size_t si = 0; si < plan.segments.size(); ++si) {
        segments.push_back(segment_launch(g, plan.segments[si], si, target, soc_dir, names, stage,
                                          tensors, beside));
        for (const auto& a : segments.back()["args"])
            if (a.contains("lock"))
                locks.insert(a["lock"].get<std::int64_t>());
    }
    std::vector<bool> launched(plan.segments.size(), false);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        int seg = plan.ops[i].segment;
        if (seg < 0)
            steps.push_back({{"op", i}});
        else if (!launched[static_cast<std::size_t>(seg)]) {
            launched[static_cast<std::size_t>(seg)] = true;
            steps.push_back({{"segment", seg}});
        }
    }
    json program = {{"format", "skforge-npu-program"},
                    {"version", 1},
                    {"graph", g.name},
                    {"arch", target.arch},
                    {"soc", target.soc},
                    {"soc_dir", soc_dir},
                    {"tensors", tensors.list},
                    {"ops", ops},
                    {"segments", segments},
                    {"locks", locks},
                    {"steps", steps}};
    write_text(support::path_beneath(stage_dir, "npu/program.json"),
               support::dump_json(program, 1) + "\n");
    log += "  " + std::to_string(steps.size()) + " launches fused, " +
           std::to_string(g.ops.size()) + " operators\n";
}

} // namespace skforge::compile
