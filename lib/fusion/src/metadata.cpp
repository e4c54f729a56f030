// The SuperKernel's metadata, in the vendor's compiled-SuperKernel shape
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
    jt::number(out, "workspace", sub.workspace);
    jt::number(out, "workspace_offset", sub.workspace_offset);
    out += '}';
}

} // namespace

void metadata_pass(Segment& s) {
    ParamBlock pb = param_block(s);
    fill_arg_offsets(s, pb);
    s.param_block_size = pb.size;
    s.workspace_param_offset = pb.workspace_offset;
    s.argument_offsets.assign(pb.buffer_offset.begin(), pb.buffer_offset.end());
    s.event_slots.assign(pb.event_slot.begin(), pb.event_slot.end());
}

std::string kernel_meta_json(const graph::Graph& g, const Segment& s) {
    json_text::Out out;
    write_kernel_meta(out, g, s);
    return out.str();
}

void write_kernel_meta(json_text::Out& out, const graph::Graph& g, const Segment& s) {
    namespace jt = json_text;
    bool host = g.npu_arch == "host";
    std::string name = support::c_identifier(g.name + "_" + s.name);
    std::uint64_t workspace = s.workspace_total + s.arena_peak;
    out += '{';
    jt::key(out, "SuperkernelInfo");
    out += '{';
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
    out += "}}";
    jt::text(out, "binFileName", name);
    jt::text(out, "binFileSuffix", host ? ".so" : ".o");
    jt::number(out, "blockDim", s.block_dim);
    jt::text(out, "coreType", s.core_type);
    jt::number(out, "intercoreSync", s.ops.size() > 1 ? 1 : 0);
    jt::text(out, "kernelName", name);
    jt::text(out, "magic",
             host ? kernel::k_host_magic_name : std::string_view("RT_DEV_BINARY_MAGIC_ELF"));
    jt::number(out, "opParaSize", s.param_block_size);
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
    out += "}]";
    jt::text(out, "sha256", "");
    jt::number(out, "supportSuperKernel", 0);
    jt::text(out, "taskRation", s.task_ration);
    jt::key(out, "workspace");
    out += '{';
    jt::number(out, "num", 1);
    jt::key(out, "size");
    out += '[';
    jt::integer(out, workspace);
    out += ']';
    out += ",\"type\":[0]}}";
}

} // namespace skforge::fusion
