// The SuperKernel's metadata, in the vendor's compiled-SuperKernel shape
// (share/doc/plan-format.md).
#include "skforge/fusion/plan.hpp"

#include "skforge/kernel/kernel_meta.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace skforge::fusion {

using nlohmann::json;

namespace {

std::string symbol(const std::string& text) {
    std::string out;
    for (char c : text)
        out += (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_') ? c : '_';
    return out;
}

// The parameter block: one pointer per external buffer, the workspace pointer (the arena lives
// at its end), then one 8-byte flag slot per event pair inside the SuperKernel.
struct ParamBlock {
    std::map<int, std::int64_t> buffer_offset;
    std::int64_t workspace_offset = 0;
    std::map<std::int64_t, std::int64_t> event_slot;
    std::int64_t size = 0;
};

ParamBlock param_block(const Segment& s) {
    ParamBlock pb;
    for (std::size_t b = 0; b < s.buffers.size(); ++b)
        if (!s.buffers[b].arena) {
            pb.buffer_offset[static_cast<int>(b)] = pb.size;
            pb.size += 8;
        }
    pb.workspace_offset = pb.size;
    pb.size += 8;
    for (const auto& sub : s.subs)
        for (auto e : sub.send_events)
            if (pb.event_slot.emplace(e, pb.size).second)
                pb.size += 8;
    return pb;
}

void fill_arg_offsets(Segment& s, const ParamBlock& pb) {
    for (std::size_t p = 0; p < s.subs.size(); ++p) {
        auto& sub = s.subs[p];
        for (auto& a : sub.args) {
            const auto& buf = s.buffers[static_cast<std::size_t>(a.buffer)];
            a.param_offset = buf.arena ? pb.workspace_offset : pb.buffer_offset.at(a.buffer);
            a.notify_param_offset = -1;
            a.wait_param_offset = -1;
            if (a.output && !sub.send_events.empty())
                a.notify_param_offset = pb.event_slot.at(sub.send_events.front());
            if (!a.output && buf.first >= 0)
                for (const auto& [from, to] : s.event_pairs)
                    if (to == static_cast<int>(p) && from >= buf.first)
                        for (auto e : s.subs[static_cast<std::size_t>(from)].send_events)
                            if (std::find(sub.recv_events.begin(), sub.recv_events.end(), e) !=
                                sub.recv_events.end())
                                a.wait_param_offset = pb.event_slot.at(e);
        }
    }
}

json sub_kernel_json(const PlanContext& ctx, const Segment& s, std::size_t p) {
    const auto& op = ctx.graph.ops[static_cast<std::size_t>(s.ops[p])];
    const auto& meta = ctx.graph.kernels[static_cast<std::size_t>(op.kernel_index)].meta;
    const auto& sub = s.subs[p];
    json args = json::array();
    for (const auto& a : sub.args) {
        const auto& buf = s.buffers[static_cast<std::size_t>(a.buffer)];
        args.push_back({{"name", buf.tensor},
                        {"param_offset", a.param_offset},
                        {"arena_offset", buf.arena ? json(buf.offset) : json(-1)},
                        {"notify_param_offset", a.notify_param_offset},
                        {"wait_param_offset", a.wait_param_offset}});
    }
    return {{"func_name", meta.kernel_name},
            {"op_name", op.name},
            {"op_type", op.type},
            {"split_mode", sub.split_mode},
            {"blockDim", sub.block_dim},
            {"sub_operator_kernel_type", kernel::kernel_type_name(*meta.kernel_type)},
            {"sub_operator_early_start_set_flag", sub.early_start_set ? 1 : 0},
            {"sub_operator_early_start_wait_flag", sub.early_start_wait ? 1 : 0},
            {"dcci_before_kernel_start", sub.dcci_before ? 1 : 0},
            {"dcci_after_kernel_end", sub.dcci_after ? 1 : 0},
            {"dcci_disable_on_kernel", sub.dcci_disabled ? 1 : 0},
            {"streamid", op.stream_id},
            {"send_event_list", sub.send_events},
            {"recv_event_list", sub.recv_events},
            {"workspace", sub.workspace},
            {"feed_sync_all_cores", sub.feed_sync_all_cores},
            {"preload_bytes", s.preload_bytes.empty() ? 0 : s.preload_bytes[p]},
            {"arg_list", std::move(args)}};
}

} // namespace

void metadata_pass(PlanContext& ctx) {
    bool host = ctx.graph.npu_arch == "host";
    for (auto& s : ctx.plan.segments) {
        ParamBlock pb = param_block(s);
        fill_arg_offsets(s, pb);
        json params = json::array();
        for (const auto& [b, off] : pb.buffer_offset) {
            const auto& buf = s.buffers[static_cast<std::size_t>(b)];
            params.push_back({{"name", buf.tensor},
                              {"param_offset", off},
                              {"size", buf.bytes},
                              {"role", buf.first >= 0 ? "output" : "input"}});
        }
        params.push_back({{"name", "workspace"},
                          {"param_offset", pb.workspace_offset},
                          {"size", s.workspace_total + s.arena_peak},
                          {"role", "workspace"}});
        json kernels = json::array();
        for (std::size_t p = 0; p < s.ops.size(); ++p)
            kernels.push_back(sub_kernel_json(ctx, s, p));
        json barriers = json::array();
        for (const auto& b : s.barriers)
            barriers.push_back(
                {{"before", s.subs.empty() ? 0 : b.before}, {"kind", barrier_kind_name(b.kind)}});
        json arena = json::array();
        for (const auto& b : s.buffers)
            if (b.arena)
                arena.push_back({{"name", b.tensor}, {"offset", b.offset}, {"size", b.bytes}});
        json copies = json::array();
        for (const auto& c : s.layout)
            copies.push_back(
                {{"sub", c.sub}, {"copy", c.copy}, {"offset", c.offset}, {"size", c.size}});
        std::string name = symbol(ctx.graph.name + "_" + s.name);
        s.kernel_meta = {
            {"binFileName", name},
            {"binFileSuffix", host ? ".so" : ".o"},
            {"blockDim", s.block_dim},
            {"coreType", s.core_type},
            {"intercoreSync", s.ops.size() > 1 ? 1 : 0},
            {"kernelName", name},
            {"magic", host ? std::string(kernel::k_host_magic_name)
                           : std::string("RT_DEV_BINARY_MAGIC_ELF")},
            {"opParaSize", pb.size},
            {"parameters", std::move(params)},
            {"sha256", ""},
            {"taskRation", s.task_ration},
            {"supportSuperKernel", 0},
            {"workspace",
             {{"num", 1}, {"size", {s.workspace_total + s.arena_peak}}, {"type", {0}}}},
            {"SuperkernelInfo",
             {{"kernelList", std::move(kernels)},
              {"barriers", std::move(barriers)},
              {"arena",
               {{"peak", s.arena_peak},
                {"lower_bound", s.arena_lower_bound},
                {"tensors", std::move(arena)}}},
              {"layout",
               {{"func_align", s.options.func_align},
                {"code_size_estimated", s.code_size_estimated},
                {"copies", std::move(copies)}}}}}};
    }
}

} // namespace skforge::fusion
