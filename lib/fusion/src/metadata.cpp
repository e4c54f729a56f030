// SPDX-License-Identifier: Apache-2.0
// The SuperKernel's metadata: on the NPU targets in the shape the vendor's SuperKernel compiler
// writes, with skforge's plan under one `skforge` key; on the host target skforge's own shape
// (share/doc/plan-format.md).
#include "skforge/fusion/plan.hpp"

#include "metadata_text.hpp"
#include "skforge/kernel/kernel_meta.hpp"
#include "skforge/support/identifier.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace skforge::fusion {

namespace {

// A SuperKernel has no tiling data; the vendor writes the tiling size + 8.
constexpr std::int64_t k_vendor_op_para_size = 8;

// The parameter block: one pointer per external buffer, the workspace pointer (the arena lives
// at its end), one 8-byte flag slot per event pair inside the SuperKernel, then one flag-address
// slot per notify and per wait with an operator beside the cores (sub-kernel by sub-kernel).
struct ParamBlock {
    std::map<int, std::int64_t> buffer_offset;
    std::int64_t workspace_offset = 0;
    std::map<std::int64_t, std::int64_t> event_slot;
    std::int64_t side_offset = 0;
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
    pb.side_offset = pb.size;
    return pb;
}

// Places the notify/wait flag-address slots after the flags, and points each guarded argument
// at its slot (an event flag inside the SuperKernel, set by fill_arg_offsets, stays).
void place_side_slots(Segment& s, ParamBlock& pb) {
    for (auto& sub : s.subs) {
        for (auto* list : {&sub.notifies, &sub.waits})
            for (auto& ss : *list) {
                ss.slot = pb.size;
                pb.size += 8;
            }
        for (auto& a : sub.args) {
            auto& offset = a.output ? a.notify_param_offset : a.wait_param_offset;
            for (const auto& ss : a.output ? sub.notifies : sub.waits)
                if (offset < 0 &&
                    std::find(ss.buffers.begin(), ss.buffers.end(), a.buffer) != ss.buffers.end())
                    offset = ss.slot;
        }
    }
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

// A sub-kernel's notifies or waits with operators beside the cores: event, peer, slot.
template <std::size_t N>
void side_syncs_text(json_text::Out& out, const graph::Graph& g, const char (&key)[N],
                     const std::vector<SideSync>& list) {
    namespace jt = json_text;
    jt::key(out, key);
    out += '[';
    for (std::size_t i = 0; i < list.size(); ++i) {
        out += i ? ",{" : "{";
        jt::number(out, "event", list[i].event);
        jt::text(out, "peer", g.ops[static_cast<std::size_t>(list[i].peer)].name);
        jt::number(out, "slot", list[i].slot);
        out += '}';
    }
    out += ']';
}

void sub_kernel_text(json_text::Out& out, const graph::Graph& g, const Segment& s, std::size_t p) {
    namespace jt = json_text;
    const auto& op = g.ops[static_cast<std::size_t>(s.ops[p])];
    const auto& meta = g.kernels[static_cast<std::size_t>(op.kernel_index)].meta;
    const auto& sub = s.subs[p];
    out += '{';
    jt::key(out, "arg_list");
    out += '[';
    for (std::size_t i = 0; i < sub.args.size(); ++i) {
        const auto& a = sub.args[i];
        const auto& buf = s.buffers[static_cast<std::size_t>(a.buffer)];
        out += i ? ",{" : "{";
        jt::number(out, "arena_offset",
                   buf.arena ? static_cast<std::int64_t>(buf.offset) : std::int64_t{-1});
        jt::text(out, "name", buf.tensor);
        jt::number(out, "notify_param_offset", a.notify_param_offset);
        jt::number(out, "param_offset", a.param_offset);
        jt::number(out, "wait_param_offset", a.wait_param_offset);
        out += '}';
    }
    out += ']';
    jt::number(out, "blockDim", sub.block_dim);
    jt::number(out, "dcci_after_kernel_end", sub.dcci_after ? 1 : 0);
    jt::number(out, "dcci_before_kernel_start", sub.dcci_before ? 1 : 0);
    jt::number(out, "dcci_disable_on_kernel", sub.dcci_disabled ? 1 : 0);
    jt::number(out, "feed_sync_all_cores", sub.feed_sync_all_cores);
    jt::text(out, "func_name", meta.kernel_name);
    side_syncs_text(out, g, "notifies", sub.notifies);
    jt::text(out, "op_name", op.name);
    jt::text(out, "op_type", op.type);
    jt::number(out, "preload_bytes",
               s.preload_bytes.empty() ? std::uint64_t{0} : s.preload_bytes[p]);
    jt::numbers(out, "recv_event_list", sub.recv_events);
    jt::numbers(out, "send_event_list", sub.send_events);
    jt::number(out, "split_mode", sub.split_mode);
    jt::number(out, "streamid", op.stream_id);
    jt::number(out, "sub_operator_early_start_set_flag", sub.early_start_set ? 1 : 0);
    jt::number(out, "sub_operator_early_start_wait_flag", sub.early_start_wait ? 1 : 0);
    jt::text(out, "sub_operator_kernel_type", kernel::kernel_type_name(*meta.kernel_type));
    side_syncs_text(out, g, "waits", sub.waits);
    jt::number(out, "workspace", sub.workspace);
    jt::number(out, "workspace_offset", sub.workspace_offset);
    out += '}';
}

// The members skforge adds about its plan (arena, barriers, per-sub-kernel plan data, code
// layout): the host target's SuperkernelInfo, the NPU target's `skforge` key.
void plan_members(json_text::Out& out, const graph::Graph& g, const Segment& s) {
    namespace jt = json_text;
    jt::key(out, "arena");
    out += '{';
    jt::number(out, "lower_bound", s.arena_lower_bound);
    jt::number(out, "peak", s.arena_peak);
    jt::key(out, "tensors");
    out += '[';
    bool first = true;
    for (const auto& b : s.buffers) {
        if (!b.arena)
            continue;
        out += first ? "{" : ",{";
        first = false;
        jt::text(out, "name", b.tensor);
        jt::number(out, "offset", b.offset);
        jt::number(out, "size", b.bytes);
        out += '}';
    }
    out += "]}";
    jt::key(out, "barriers");
    out += '[';
    for (std::size_t i = 0; i < s.barriers.size(); ++i) {
        out += i ? ",{" : "{";
        jt::number(out, "before", s.barriers[i].before);
        jt::text(out, "kind", barrier_kind_name(s.barriers[i].kind));
        out += '}';
    }
    out += ']';
    jt::key(out, "kernelList");
    out += '[';
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        if (p)
            out += ',';
        sub_kernel_text(out, g, s, p);
    }
    out += ']';
    jt::key(out, "layout");
    out += '{';
    jt::key(out, "code_size_estimated");
    out += s.code_size_estimated ? "true" : "false";
    jt::key(out, "copies");
    out += '[';
    for (std::size_t i = 0; i < s.layout.size(); ++i) {
        const auto& c = s.layout[i];
        out += i ? ",{" : "{";
        jt::number(out, "copy", c.copy);
        jt::number(out, "offset", c.offset);
        jt::number(out, "size", c.size);
        jt::number(out, "sub", c.sub);
        out += '}';
    }
    out += ']';
    jt::number(out, "func_align", s.options.func_align);
    out += '}';
}

// skforge's parameter block: argument buffers, then the workspace pointer.
void skforge_parameters(json_text::Out& out, const Segment& s, std::uint64_t workspace) {
    namespace jt = json_text;
    jt::key(out, "parameters");
    out += '[';
    for (const auto& [b, off] : s.argument_offsets) {
        const auto& buf = s.buffers[static_cast<std::size_t>(b)];
        out += "{";
        jt::text(out, "name", buf.tensor);
        jt::number(out, "param_offset", off);
        jt::text(out, "role", buf.first >= 0 ? "output" : "input");
        jt::number(out, "size", buf.bytes);
        out += "},";
    }
    out += '{';
    jt::text(out, "name", "workspace");
    jt::number(out, "param_offset", s.workspace_param_offset);
    jt::text(out, "role", "workspace");
    jt::number(out, "size", workspace);
    out += '}';
    // The notify/wait flag-address slots, in the order of the block.
    for (const auto& sub : s.subs)
        for (const auto* list : {&sub.notifies, &sub.waits})
            for (const auto& ss : *list) {
                out += ",{";
                jt::text(out, "name",
                         (list == &sub.notifies ? "notify:" : "wait:") + std::to_string(ss.event));
                jt::number(out, "param_offset", ss.slot);
                jt::text(out, "role", list == &sub.notifies ? "notify" : "wait");
                jt::number(out, "size", 8);
                out += '}';
            }
    out += ']';
}

void workspace_member(json_text::Out& out, std::uint64_t bytes) {
    namespace jt = json_text;
    jt::key(out, "workspace");
    out += '{';
    jt::number(out, "num", 1);
    jt::key(out, "size");
    out += '[';
    jt::integer(out, bytes);
    out += "],\"type\":[0]}";
}

std::string superkernel_name(const graph::Graph& g, const Segment& s) {
    return support::c_identifier(g.name + "_" + s.name);
}

// The host target's metadata: the vendor's top-level keys with skforge's plan in SuperkernelInfo.
void write_host_meta(json_text::Out& out, const graph::Graph& g, const Segment& s) {
    namespace jt = json_text;
    std::string name = superkernel_name(g, s);
    std::uint64_t workspace = s.workspace_total + s.arena_peak;
    out += '{';
    jt::key(out, "SuperkernelInfo");
    out += '{';
    plan_members(out, g, s);
    out += '}';
    jt::text(out, "binFileName", name);
    jt::text(out, "binFileSuffix", ".so");
    jt::number(out, "blockDim", s.largest_block_dim);
    jt::text(out, "coreType", s.core_type);
    jt::number(out, "intercoreSync", s.ops.size() > 1 ? 1 : 0);
    jt::text(out, "kernelName", name);
    jt::text(out, "magic", kernel::k_host_magic_name);
    jt::number(out, "opParaSize", s.param_block_size);
    skforge_parameters(out, s, workspace);
    jt::text(out, "sha256", "");
    jt::number(out, "supportSuperKernel", 0);
    jt::text(out, "taskRation", s.task_ration);
    workspace_member(out, workspace);
    out += '}';
}

// The vendor names a core's kernel list after the chip: dav-c220 on dav-2201; dav-3510 (whose
// chip the vendor calls c310) is our reading.
std::string core_prefix(std::string_view arch) {
    return arch == "dav-3510" ? "dav-c310" : "dav-c220";
}

void optional_number(json_text::Out& out, std::int64_t v) {
    if (v < 0)
        out += "null";
    else
        json_text::integer(out, v);
}

template <std::size_t N> void flag(json_text::Out& out, const char (&k)[N], bool v) {
    json_text::key(out, k);
    out += v ? "true" : "false";
}

// One entry of SuperkernelInfo.kernelList in the vendor's shape: the sub-kernel's own metadata
// (not the plan's decisions, which are under `skforge`) and where its arguments are.
void vendor_sub_kernel(json_text::Out& out, const graph::Graph& g, const Segment& s, std::size_t p,
                       const VendorParamSlots& slots, const KernelListKeys& keys) {
    namespace jt = json_text;
    const auto& op = g.ops[static_cast<std::size_t>(s.ops[p])];
    const auto& meta = g.kernels[static_cast<std::size_t>(op.kernel_index)].meta;
    out += '{';
    jt::key(out, "arg_list");
    out += '{';
    jt::key(out, "notify_param_offset");
    optional_number(out, slots.notify);
    jt::number(out, "param_offset", slots.param);
    jt::key(out, "wait_param_offset");
    optional_number(out, slots.wait);
    out += '}';
    out += ','; // after arg_list
    json_text::string(out, keys.block_key);
    out += ':';
    json_text::integer(out, meta.block_dim);
    jt::text(out, "func_name", meta.kernel_name);
    jt::numbers(out, "recv_event_list", op.recv_events);
    jt::numbers(out, "send_event_list", op.send_events);
    jt::key(out, "split_mode");
    optional_number(out, meta.split_mode == 0 ? -1 : std::int64_t{meta.split_mode});
    jt::number(out, "streamid", op.stream_id);
    // Both asc-devkit lines (8.5.0-beta.1 eeb99217, 9.0.0 1ea13f3b) copy these two from the
    // sub-kernel's JSON, false when absent (compile_op.py _update_super_dfx_info).
    flag(out, "sub_operator_call_dcci_after_kernel_end", meta.call_dcci_after_kernel_end);
    flag(out, "sub_operator_call_dcci_before_kernel_start", meta.call_dcci_before_kernel_start);
    // asc-devkit 9.0.0 on, copied from the sub-kernel's JSON, which the op compiler sets for the
    // OpTypes the scope's dcci-disable-on-kernel names (so does the copy --sk-backend cann
    // hands the vendor, codegen::cann_json_copies).
    if (keys.dcci_disable)
        flag(out, "sub_operator_call_dcci_disable_on_kernel",
             meta.call_dcci_disable_on_kernel || (p < s.subs.size() && s.subs[p].dcci_disabled));
    flag(out, "sub_operator_early_start_set_flag", meta.early_start_set_flag);
    flag(out, "sub_operator_early_start_wait_flag", meta.early_start_wait_flag);
    jt::text(out, "sub_operator_kernel_type", kernel::kernel_type_name(*meta.kernel_type));
    if (keys.op_type)
        jt::text(out, "sub_operator_op_type", meta.op_type);
    out += '}';
}

// SuperkernelInfo.kernelList: one list under "aicore", or, with stream fusion, one per core
// kind that runs a sub-kernel, a MIX sub-kernel appearing in both.
void vendor_kernel_list(json_text::Out& out, const graph::Graph& g, const Segment& s,
                        std::string_view arch, const KernelListKeys& keys) {
    auto slots = vendor_param_slots(g, s, arch);
    auto type_at = [&](std::size_t p) {
        const auto& op = g.ops[static_cast<std::size_t>(s.ops[p])];
        return *g.kernels[static_cast<std::size_t>(op.kernel_index)].meta.kernel_type;
    };
    // One list of the sub-kernels `excluded` does not reject, or nothing when it is empty.
    auto list = [&](std::string_view core, bool (*excluded)(kernel::KernelType)) {
        bool first = true;
        for (std::size_t p = 0; p < s.ops.size(); ++p) {
            if (excluded != nullptr && excluded(type_at(p)))
                continue;
            if (first) {
                if (out.back() != '{')
                    out += ',';
                json_text::string(out, core);
                out += ":[";
            } else {
                out += ',';
            }
            first = false;
            vendor_sub_kernel(out, g, s, p, slots[p], keys);
        }
        if (!first)
            out += ']';
    };
    out += '{';
    if (!s.options.stream_fusion) {
        list("aicore", nullptr);
    } else {
        std::string prefix = core_prefix(arch);
        list(prefix + "-cube", kernel::is_vector_only); // sorted keys: cube before vec
        list(prefix + "-vec", kernel::is_cube_only);
    }
    out += '}';
}

// The NPU targets' metadata, in the shape the vendor's SuperKernel compiler writes
// (expect_compiled_json.json); skforge's plan goes under the one key `skforge`.
void write_npu_meta(json_text::Out& out, const graph::Graph& g, const Segment& s,
                    std::string_view arch, const KernelListKeys& keys) {
    namespace jt = json_text;
    std::string name = superkernel_name(g, s);
    std::uint64_t workspace = s.workspace_total + s.arena_peak;
    // The launch on `arch`, which may not be the target the plan was made for.
    NpuLaunch launch = npu_launch(g, s, g.soc_version, arch);
    out += '{';
    jt::key(out, "SuperkernelInfo");
    out += '{';
    jt::key(out, "kernelList");
    vendor_kernel_list(out, g, s, arch, keys);
    out += '}';
    jt::text(out, "binFileName", name);
    jt::text(out, "binFileSuffix", ".o");
    jt::number(out, "blockDim", launch.block_dim);
    jt::text(out, "coreType", "MIX");
    jt::number(out, "intercoreSync", 1);
    jt::text(out, "kernelName", name);
    jt::text(out, "magic", "RT_DEV_BINARY_MAGIC_ELF");
    jt::key(out, "memoryStamping");
    out += "[]";
    jt::number(out, "opParaSize", k_vendor_op_para_size);
    jt::text(out, "optionalInputMode", "gen_placeholder");
    jt::text(out, "optionalOutputMode", "gen_placeholder");
    jt::key(out, "parameters");
    out += "[]";
    jt::text(out, "sha256", "");
    jt::key(out, "skforge");
    out += '{';
    plan_members(out, g, s);
    jt::number(out, "opParaSize", s.param_block_size);
    skforge_parameters(out, s, workspace);
    out += '}';
    jt::number(out, "supportSuperKernel", 1);
    jt::text(out, "taskRation", task_ration_of(launch.type));
    if (workspace > 0)
        workspace_member(out, workspace);
    out += '}';
}

} // namespace

std::vector<VendorParamSlots> vendor_param_slots(const graph::Graph& g, const Segment& s,
                                                 std::string_view arch) {
    std::vector<VendorParamSlots> out;
    // dav-2201 passes the FFTS address in slot 0; dav-3510 has no FFTS.
    std::int64_t next = arch == "dav-3510" ? 0 : 1;
    for (int i : s.ops) {
        const auto& op = g.ops[static_cast<std::size_t>(i)];
        const auto& meta = g.kernels[static_cast<std::size_t>(op.kernel_index)].meta;
        VendorParamSlots slots;
        slots.param = next;
        slots.count = !meta.sub_operator_params.empty()
                          ? static_cast<std::int64_t>(meta.sub_operator_params.size())
                          : static_cast<std::int64_t>(op.inputs.size() + op.outputs.size() + 1);
        next += slots.count;
        if (!op.send_events.empty())
            slots.notify = next;
        next += static_cast<std::int64_t>(op.send_events.size());
        if (!op.recv_events.empty())
            slots.wait = next;
        next += static_cast<std::int64_t>(op.recv_events.size());
        out.push_back(slots);
    }
    return out;
}

void metadata_pass(Segment& s) {
    ParamBlock pb = param_block(s);
    fill_arg_offsets(s, pb);
    place_side_slots(s, pb);
    s.side_slot_offset = pb.side_offset;
    s.param_block_size = pb.size;
    s.workspace_param_offset = pb.workspace_offset;
    s.argument_offsets.assign(pb.buffer_offset.begin(), pb.buffer_offset.end());
    s.event_slots.assign(pb.event_slot.begin(), pb.event_slot.end());
}

std::string kernel_meta_json(const graph::Graph& g, const Segment& s) {
    return kernel_meta_json(g, s, g.npu_arch);
}

std::string kernel_meta_json(const graph::Graph& g, const Segment& s, std::string_view arch) {
    json_text::Out out;
    write_kernel_meta(out, g, s, arch);
    return out.str();
}

void write_kernel_meta(json_text::Out& out, const graph::Graph& g, const Segment& s) {
    write_kernel_meta(out, g, s, g.npu_arch);
}

void write_kernel_meta(json_text::Out& out, const graph::Graph& g, const Segment& s,
                       std::string_view arch) {
    if (arch == "host")
        write_host_meta(out, g, s);
    else
        write_npu_meta(out, g, s, arch, KernelListKeys{});
}

std::string kernel_meta_json(const graph::Graph& g, const Segment& s, std::string_view arch,
                             const KernelListKeys& keys) {
    if (arch == "host")
        return kernel_meta_json(g, s, arch);
    json_text::Out out;
    write_npu_meta(out, g, s, arch, keys);
    return out.str();
}

} // namespace skforge::fusion
