// SPDX-License-Identifier: Apache-2.0
// Notify/wait between SuperKernels and the operators that run beside the AI cores (AICPU tiling,
// prefetch): which events they are, which sub-kernel sets or waits on which flag, and the
// flag-address slots of the parameter block (share/doc/plan-format.md, "Notify/wait"), and what
// the vendor's flow refuses of them on the NPU targets.
#include "skforge/fusion/plan.hpp"

#include <algorithm>
#include <unordered_map>

namespace skforge::fusion {

namespace {

bool beside(const graph::Graph& g, int op) {
    return graph::runs_beside_cores(g.ops[static_cast<std::size_t>(op)].kind);
}

struct ByEvent {
    bool operator()(const NotifyWait& a, std::int64_t e) const { return a.event < e; }
    bool operator()(std::int64_t e, const NotifyWait& a) const { return e < a.event; }
};

// The pairs of event `e` (notify_waits is sorted by event).
auto pairs_of(const std::vector<NotifyWait>& pairs, std::int64_t e) {
    return std::equal_range(pairs.begin(), pairs.end(), e, ByEvent{});
}

// Calls `f` with each pair of one of `events` (an operator's receives when `waits`, else its
// sends) at which operator `op` is that end.
template <class F>
void for_pairs_at(const std::vector<NotifyWait>& pairs, const std::vector<std::int64_t>& events,
                  int op, bool waits, F&& f) {
    for (auto e : events) {
        auto [from, to] = pairs_of(pairs, e);
        for (auto it = from; it != to; ++it)
            if ((waits ? it->waiter : it->notifier) == op)
                f(*it);
    }
}

bool names(const std::vector<graph::Tensor>& list, const std::string& tensor) {
    return std::any_of(list.begin(), list.end(),
                       [&](const graph::Tensor& t) { return t.name == tensor; });
}

// The arguments of sub-kernel `p` a flag with `peer` guards: its outputs the peer reads (a
// notify), or its inputs the peer writes (a tiling buffer) or prefetches (a wait).
std::vector<int> guarded(const PlanContext& ctx, const Segment& s, std::size_t p, int peer,
                         bool notify) {
    std::vector<int> out;
    const auto& other = ctx.graph.ops[static_cast<std::size_t>(peer)];
    const auto& shared =
        notify || other.kind == graph::OpKind::prefetch ? other.inputs : other.outputs;
    for (const auto& a : s.subs[p].args)
        if (a.output == notify &&
            names(shared, s.buffers[static_cast<std::size_t>(a.buffer)].tensor))
            out.push_back(a.buffer);
    return out;
}

} // namespace

void notify_wait_pass(PlanContext& ctx) {
    const auto& g = ctx.graph;
    auto& pairs = ctx.plan.notify_waits;
    pairs.clear();
    std::unordered_map<std::int64_t, int> sender; // the first sender, as validation pairs them
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const auto& op = g.ops[i];
        for (auto e : op.recv_events) {
            auto it = sender.find(e);
            if (it == sender.end() || !(beside(g, it->second) || beside(g, static_cast<int>(i))))
                continue;
            auto seg = [&](int op_index) {
                return ctx.plan.ops[static_cast<std::size_t>(op_index)].segment;
            };
            pairs.push_back(
                {e, it->second, static_cast<int>(i), seg(it->second), seg(static_cast<int>(i))});
        }
        for (auto e : op.send_events)
            sender.emplace(e, static_cast<int>(i));
    }
    std::sort(pairs.begin(), pairs.end(), [](const NotifyWait& a, const NotifyWait& b) {
        return a.event != b.event ? a.event < b.event : a.waiter < b.waiter;
    });
}

void side_sync_pass(const PlanContext& ctx, Segment& s) {
    const auto& pairs = ctx.plan.notify_waits;
    if (pairs.empty())
        return;
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        const int i = s.ops[p];
        const auto& op = ctx.graph.ops[static_cast<std::size_t>(i)];
        auto& sub = s.subs[p];
        sub.notifies.clear();
        sub.waits.clear();
        for_pairs_at(pairs, op.send_events, i, false, [&](const NotifyWait& nw) {
            sub.notifies.push_back({nw.event, nw.waiter, -1, guarded(ctx, s, p, nw.waiter, true)});
        });
        for_pairs_at(pairs, op.recv_events, i, true, [&](const NotifyWait& nw) {
            sub.waits.push_back(
                {nw.event, nw.notifier, -1, guarded(ctx, s, p, nw.notifier, false)});
        });
    }
}

void notify_wait_slots(Plan& plan) {
    for (auto& nw : plan.notify_waits) {
        auto slot = [&](int segment, int op, bool notify) -> std::int64_t {
            if (segment < 0)
                return -1;
            const auto& seg = plan.segments[static_cast<std::size_t>(segment)];
            auto at = std::lower_bound(seg.ops.begin(), seg.ops.end(), op);
            if (at == seg.ops.end() || *at != op || seg.subs.empty())
                return -1;
            const auto& sub = seg.subs[static_cast<std::size_t>(at - seg.ops.begin())];
            const auto& list = notify ? sub.notifies : sub.waits;
            for (const auto& ss : list)
                if (ss.event == nw.event && ss.peer == (notify ? nw.waiter : nw.notifier))
                    return ss.slot;
            return -1;
        };
        nw.notify_slot = slot(nw.notify_segment, nw.notifier, true);
        nw.wait_slot = slot(nw.wait_segment, nw.waiter, false);
    }
}

std::vector<NotifyWait> edge_notify_waits(const graph::Graph& g, const Plan& plan,
                                          const Segment& s) {
    std::vector<NotifyWait> out;
    if (s.ops.empty())
        return out;
    // Events of `op` (the first's receives, the last's sends) paired with an operator beside
    // the cores, with `op` at the named end.
    auto add = [&](int op, bool waits) {
        const auto& o = g.ops[static_cast<std::size_t>(op)];
        for_pairs_at(plan.notify_waits, waits ? o.recv_events : o.send_events, op, waits,
                     [&](const NotifyWait& nw) { out.push_back(nw); });
    };
    add(s.ops.front(), true);
    add(s.ops.back(), false);
    return out;
}

namespace {

std::string superkernel_name(const Segment& s) {
    return "SuperKernel '" + s.name + "'" +
           (s.name == s.scope ? std::string() : " (scope '" + s.scope + "')");
}

// The vendor's compiler raises an error for either; the graph engine instead makes the event
// one of the SuperKernel's launch (a stream-level Send/Recv around it), which skforge's package
// cannot carry, so nobody would fill the flag slot.
void refuse_edge(const graph::Graph& g, const Segment& s, const NotifyWait& nw,
                 std::string_view arch, graph::Diagnostics& diags) {
    const bool waits = nw.waiter == s.ops.front(); // the other end is never fused
    const auto& op = g.ops[static_cast<std::size_t>(waits ? nw.waiter : nw.notifier)];
    const auto& peer = g.ops[static_cast<std::size_t>(waits ? nw.notifier : nw.waiter)];
    const std::string e = std::to_string(nw.event);
    diags.error(op.where,
                "'" + op.name + "' is the " + (waits ? "first" : "last") + " sub-kernel of " +
                    superkernel_name(s) + " and " + (waits ? "waits for '" : "notifies '") +
                    peer.name + "' (" + std::string(graph::op_kind_name(peer.kind)) + ", event " +
                    e + "): on " + std::string(arch) +
                    " the vendor's SuperKernel compiler refuses a " +
                    (waits ? "first sub-kernel that receives" : "last sub-kernel that sends") +
                    " an event (the graph engine makes it an event of the launch, which skforge "
                    "does not generate)",
                "put another operator of scope '" + s.scope + "' " + (waits ? "before" : "after") +
                    " '" + op.name + "', or take '" + op.name + "' out of the scope");
}

void refuse_tiling_sink(const graph::Op& op, std::string_view arch, graph::Diagnostics& diags) {
    diags.error(op.where,
                "aicpu_tiling operator '" + op.name + "' (the tiling of '" + op.tiling_for +
                    "') cannot run on " + std::string(arch) +
                    ": CANN supports tiling sink on Atlas A2/A3 (dav-2201) only, not yet on "
                    "Ascend 950PR/950DT (the product list of the tiling-sink guide in CANN's "
                    "asc-devkit)",
                "compute the tiling of '" + op.tiling_for + "' on the host (drop '" + op.name +
                    "'), or target dav-2201");
}

} // namespace

void npu_side_rules_pass(const graph::Graph& g, const Plan& plan, std::string_view arch,
                         graph::Diagnostics& diags) {
    if (arch != "dav-2201" && arch != "dav-3510")
        return; // the host runtime fills every flag itself
    for (const auto& s : plan.segments)
        for (const auto& nw : edge_notify_waits(g, plan, s))
            refuse_edge(g, s, nw, arch, diags);
    if (arch == "dav-3510")
        for (const auto& op : g.ops)
            if (op.kind == graph::OpKind::aicpu_tiling)
                refuse_tiling_sink(op, arch, diags);
}

} // namespace skforge::fusion
