// SPDX-License-Identifier: Apache-2.0
// What the vendor's SuperKernel compiler refuses of a SuperKernel, refused at plan time on the
// NPU targets so that skc check, plan and compile say so before anything is built
// (share/doc/cann-conformance.md, "Refusals of the vendor's generator"). The rules are the
// same in graph-autofusion 423ae264 (8.5) and e1cbeb9b (9.0).
#include "skforge/fusion/plan.hpp"

#include <algorithm>

namespace skforge::fusion {

namespace {

std::string superkernel_of(const Segment& s) {
    return "SuperKernel '" + s.name + "'" +
           (s.name == s.scope ? std::string() : " (scope '" + s.scope + "')");
}

// super_kernel_sub_op_infos.py init_of_sub_operator_info: the flags the op compiler wrote for
// early start, and its split copies, must be the SuperKernel's.
void check_sub_kernel(const graph::Graph& g, const Segment& s, std::size_t p,
                      graph::Diagnostics& diags) {
    const auto& op = g.ops[static_cast<std::size_t>(s.ops[p])];
    const auto& meta = sub_kernel_meta(g, s, p);
    const std::string kernel = "'" + op.name + "' (kernel " + meta.kernel_name + ")";
    if (s.options.early_start == 0 && (meta.early_start_set_flag || meta.early_start_wait_flag))
        diags.error(op.where,
                    kernel + " was compiled for early start (sub_operator_early_start_set_flag " +
                        (meta.early_start_set_flag ? "true" : "false") + ", _wait_flag " +
                        (meta.early_start_wait_flag ? "true" : "false") + ") but " +
                        superkernel_of(s) +
                        " has early-start=0: CANN's SuperKernel compiler refuses a sub-kernel "
                        "whose early-start mode does not match the SuperKernel's",
                    "compile the sub-kernel with the scope's options, or give scope '" + s.scope +
                        "' early-start=1");
    if (meta.split_mode != 0 && meta.split_mode != s.options.split_mode)
        diags.error(op.where,
                    kernel + " has split_mode " + std::to_string(meta.split_mode) + " but " +
                        superkernel_of(s) +
                        " has split-mode=" + std::to_string(s.options.split_mode) +
                        ": CANN's SuperKernel compiler refuses a sub-kernel whose split_mode does "
                        "not match the SuperKernel's",
                    "compile the sub-kernel with the scope's options, or give scope '" + s.scope +
                        "' split-mode=" + std::to_string(meta.split_mode));
}

bool connected(const graph::Op& from, const graph::Op& to) {
    for (auto e : from.send_events)
        for (auto r : to.recv_events)
            if (e == r)
                return true;
    return false;
}

// super_kernel_op_infos.py check_sp_has_two_real_stream: two consecutive sub-kernels on
// different streams with no event from the first to the second make a second real stream,
// which only stream fusion runs (as two programs, one per kind of core).
void check_streams(const graph::Graph& g, const Segment& s, graph::Diagnostics& diags) {
    for (std::size_t p = 1; p < s.ops.size(); ++p) {
        const auto& a = g.ops[static_cast<std::size_t>(s.ops[p - 1])];
        const auto& b = g.ops[static_cast<std::size_t>(s.ops[p])];
        if (a.stream_id == b.stream_id || connected(a, b))
            continue;
        if (s.options.stream_fusion)
            return; // two-stream mode: the vendor checks no further
        diags.error(b.where,
                    "'" + b.name + "' (stream " + std::to_string(b.stream_id) + ") follows '" +
                        a.name + "' (stream " + std::to_string(a.stream_id) + ") in " +
                        superkernel_of(s) +
                        " with no event between them and stream-fusion=0: CANN's SuperKernel "
                        "compiler refuses more than one real stream without stream fusion "
                        "(\"super kernel do not support more than 2 real stream\")",
                    "give scope '" + s.scope + "' stream-fusion=1, or order '" + b.name +
                        "' after '" + a.name + "' with an event");
        return;
    }
}

// super_kernel_op_infos.py find_all_inner_event_id_set (every later sub-kernel) and
// check_sp_has_two_real_stream (the next one): the stream already orders the two, and the
// vendor's compiler raises an error rather than build a lock for the event.
void check_same_stream_events(const graph::Graph& g, const Segment& s, graph::Diagnostics& diags) {
    for (const auto& e : same_stream_events(g, s)) {
        const auto& from = g.ops[static_cast<std::size_t>(e.sender)];
        const auto& to = g.ops[static_cast<std::size_t>(e.receiver)];
        diags.error(to.where, same_stream_event_text(g, s, e),
                    "remove event " + std::to_string(e.event) + " from '" + from.name +
                        "' send_event_list and '" + to.name +
                        "' recv_event_list (the stream orders them), or put one of them on "
                        "another stream");
    }
}

} // namespace

std::vector<SameStreamEvent> same_stream_events(const graph::Graph& g, const Segment& s) {
    std::vector<SameStreamEvent> out;
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        const auto& a = g.ops[static_cast<std::size_t>(s.ops[p])];
        for (std::size_t q = p + 1; q < s.ops.size(); ++q) {
            const auto& b = g.ops[static_cast<std::size_t>(s.ops[q])];
            if (a.stream_id != b.stream_id)
                continue;
            for (auto e : a.send_events)
                if (std::find(b.recv_events.begin(), b.recv_events.end(), e) != b.recv_events.end())
                    out.push_back({e, s.ops[p], s.ops[q]});
        }
    }
    return out;
}

std::string same_stream_event_text(const graph::Graph& g, const Segment& s,
                                   const SameStreamEvent& e) {
    const auto& from = g.ops[static_cast<std::size_t>(e.sender)];
    const auto& to = g.ops[static_cast<std::size_t>(e.receiver)];
    return "'" + to.name + "' receives event " + std::to_string(e.event) + " from '" + from.name +
           "' on the same stream (" + std::to_string(to.stream_id) + ") in " + superkernel_of(s) +
           ": CANN's SuperKernel compiler refuses an event between two sub-kernels of one stream "
           "(\"super kernel do not support self send/receive pair within 1 real stream\")";
}

void npu_generator_rules_pass(const graph::Graph& g, const Plan& plan, std::string_view arch,
                              graph::Diagnostics& diags) {
    if (arch != "dav-2201" && arch != "dav-3510")
        return; // skforge's own host entries have none of these limits
    for (const auto& s : plan.segments) {
        for (std::size_t p = 0; p < s.ops.size(); ++p)
            check_sub_kernel(g, s, p, diags);
        check_streams(g, s, diags);
        check_same_stream_events(g, s, diags);
    }
}

} // namespace skforge::fusion
