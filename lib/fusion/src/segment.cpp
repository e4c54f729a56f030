// SPDX-License-Identifier: Apache-2.0
#include "skforge/fusion/plan.hpp"

#include "skforge/kernel/soc.hpp"
#include "skforge/support/memory.hpp"
#include "skforge/support/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <unordered_map>

namespace skforge::fusion {

using graph::Engine;
using graph::Op;

std::string_view reason_code(Reason r) {
    switch (r) {
    case Reason::op_unsupport:
        return "OP_UNSUPPORT";
    case Reason::dynamic_task_unsupport:
        return "DYNAMIC_TASK_UNSUPPORT";
    case Reason::not_in_scope:
        return "NOT_IN_SCOPE";
    case Reason::exceed_core_max:
        return "EXCEED_CORE_MAX";
    case Reason::isolated_event:
        return "ISOLATED_EVENT";
    case Reason::exist_deadlock:
        return "EXIST_DEADLOCK";
    case Reason::external_depend:
        return "EXTERNAL_DEPEND";
    case Reason::unsupport_event_type:
        return "UNSUPPORT_EVENT_TYPE";
    case Reason::simt_op_unsupport:
        return "SIMT_OP_UNSUPPORT";
    case Reason::exceed_scope_max:
        return "EXCEED_SCOPE_MAX";
    case Reason::no_fusion_mark:
        return "NO_FUSION_MARK";
    case Reason::fusion_disabled:
        return "FUSION_DISABLED";
    case Reason::exceed_task_max:
        return "EXCEED_TASK_MAX";
    case Reason::cut_by_unfusible:
        return "CUT_BY_UNFUSIBLE";
    }
    return "UNKNOWN";
}

namespace {

constexpr std::size_t k_max_tasks = 1024;

bool supported_collective(std::string_view type) {
    if (type.substr(0, 4) == "Hcom")
        type.remove_prefix(4);
    return type == "AllReduce" || type == "ReduceScatter" || type == "AllGather" ||
           type == "AlltoAll";
}

} // namespace

bool ignored_by_segmentation(std::string_view type) {
    // Graph inputs, constants and variables run nothing; sends and receives are the event tasks
    // GE's own pass turns into synchronisation. GE drops their scope mark before it cuts scopes.
    static constexpr std::string_view k_ignored[] = {
        "Send", "SendNotify", "SendMem", "Recv",     "RecvNotify",      "RecvMem",
        "Data", "Variable",   "Const",   "Constant", "ConstPlaceHolder"};
    return std::find(std::begin(k_ignored), std::end(k_ignored), type) != std::end(k_ignored);
}

namespace {

// unfusible, with the SoC's cores looked up once for the whole graph.
std::optional<std::pair<Reason, std::string>>
unfusible_on(const graph::Graph& g, const Op& op, int scope_index, kernel::SocCores cores) {
    using R = std::pair<Reason, std::string>;
    // The graph-wide switch comes before anything said of one operator.
    if (!g.super_kernel_optimize)
        return R{Reason::fusion_disabled, "super_kernel_optimize is false"};
    if (op.kind == graph::OpKind::aicpu_tiling)
        return R{Reason::op_unsupport,
                 "AICPU tiling of '" + op.tiling_for + "': runs on the AICPU (notify/wait)"};
    if (op.kind == graph::OpKind::prefetch)
        return R{Reason::op_unsupport, "prefetch: runs on an SDMA stream (notify/wait)"};
    if (ignored_by_segmentation(op.type))
        return R{Reason::not_in_scope, "'" + op.type + "' operators are ignored by segmentation"};
    if (op.no_fusion)
        return R{Reason::no_fusion_mark, "marked no_fusion"};
    if (op.scope.empty())
        return R{Reason::not_in_scope, "not in any SuperKernel scope"};
    if (scope_index >= static_cast<int>(graph::k_max_scopes))
        return R{Reason::exceed_scope_max,
                 "its scope is past the " + std::to_string(graph::k_max_scopes) + "th"};
    if (op.task_type == graph::TaskType::dynamic)
        return R{Reason::dynamic_task_unsupport,
                 "dynamic task (task_type dynamic: skforge does not build CANN's dynamic "
                 "sub-kernels)"};
    if (op.engine == Engine::simt)
        return R{Reason::simt_op_unsupport, "SIMT operator"};
    if (op.engine == Engine::tbe)
        return R{Reason::op_unsupport, "TBE kernel (only AscendC kernels can be fused)"};
    if (op.engine == Engine::hccl && !supported_collective(op.type))
        return R{Reason::op_unsupport,
                 "collective " + op.type + " (only AllReduce, ReduceScatter, AllGather, AlltoAll)"};
    if (op.kernel_index < 0)
        return R{Reason::op_unsupport, "no kernel metadata"};
    const auto& meta = g.kernels[static_cast<std::size_t>(op.kernel_index)].meta;
    if (op.engine == Engine::aicpu || meta.aicpu)
        return R{Reason::op_unsupport, "AICPU kernel"};
    if (!meta.kernel_type)
        return R{Reason::op_unsupport,
                 "kernel type '" + meta.kernel_type_text + "' cannot be fused"};
    if (!meta.support_super_kernel)
        return R{Reason::op_unsupport, "supportSuperKernel is 0"};
    int max = kernel::is_vector_only(*meta.kernel_type) ? cores.aiv : cores.aic;
    if (static_cast<int>(meta.block_dim) > max)
        return R{Reason::exceed_core_max, "blockDim " + std::to_string(meta.block_dim) + " > " +
                                              std::to_string(max) + " cores"};
    return std::nullopt;
}

} // namespace

std::optional<std::pair<Reason, std::string>> unfusible(const graph::Graph& g, const Op& op,
                                                        int scope_index) {
    return unfusible_on(g, op, scope_index, kernel::soc_cores(g.soc_version, g.npu_arch));
}

namespace {

struct Open {
    int segment;
    int start; ///< op index where the segment starts
};

// Operators marked by the walks below, by round, so a walk never clears the marks of the last.
class Marks {
  public:
    explicit Marks(std::size_t n) : m_round(n, 0) {}
    /// Starts a walk with no operator marked.
    void next_round() { ++m_current; }
    /// Marks `i`; false when it already was marked in this round.
    bool mark(int i) {
        auto& r = m_round[static_cast<std::size_t>(i)];
        return r != m_current && (r = m_current, true);
    }

  private:
    std::vector<std::uint32_t> m_round;
    std::uint32_t m_current = 0;
};

bool in_segment(const PlanContext& ctx, const Open& open, int op) {
    return ctx.plan.ops[static_cast<std::size_t>(op)].segment == open.segment;
}

// What a walk does with an operator it reaches.
enum class Step { skip, through, stop };

// Walks back from `from` through what it depends on: `step(d)` says, for each operator reached,
// whether to go on through it, pass it by, or end the walk.
template <class StepFn>
void walk_back(const PlanContext& ctx, int from, Marks& marks, StepFn step) {
    marks.next_round();
    std::vector<int> todo{from};
    while (!todo.empty()) {
        int at = todo.back();
        todo.pop_back();
        for (int d : ctx.deps[static_cast<std::size_t>(at)]) {
            Step next = step(d);
            if (next == Step::stop)
                return;
            if (next == Step::through && marks.mark(d))
                todo.push_back(d);
        }
    }
}

// True when `outside` depends on the open segment, directly or through other operators. Only
// operators after the segment's start can lead back to it (the graph is in execution order).
bool reaches_segment(const PlanContext& ctx, const Open& open, int outside, Marks& marks) {
    bool found = false;
    walk_back(ctx, outside, marks, [&](int d) {
        found = in_segment(ctx, open, d);
        return found ? Step::stop : d > open.start ? Step::through : Step::skip;
    });
    return found;
}

// True for an operator that takes no place in its scope and cuts nothing: ignored OpTypes (GE
// drops their scope mark first) and operators beside the cores (AICPU tiling, prefetch).
bool seen_through(const Op& op) {
    return ignored_by_segmentation(op.type) || graph::runs_beside_cores(op.kind);
}

// The operators outside the segment, run after it starts, that `i` depends on, in order. Only
// an operator beside the cores is walked through (what it depends on counts instead): the
// SuperKernel waits for it inside its launch (notify/wait). An operator of an ignored type is a
// dependency like any other: in GE such a node runs nothing (Data, Const, Variable) or is the
// event itself (Send, Recv), but here it runs a kernel, after the launch, so a member that reads
// what it writes must not be in a SuperKernel launched before it.
std::vector<int> late_dependencies(const PlanContext& ctx, const Open& open, int i, Marks& marks) {
    std::vector<int> late;
    walk_back(ctx, i, marks, [&](int d) {
        if (d <= open.start || in_segment(ctx, open, d))
            return Step::skip;
        if (graph::runs_beside_cores(ctx.graph.ops[static_cast<std::size_t>(d)].kind))
            return Step::through;
        late.push_back(d);
        return Step::skip;
    });
    std::sort(late.begin(), late.end());
    late.erase(std::unique(late.begin(), late.end()), late.end());
    return late;
}

// How a split names the operator it waits for: an ignored OpType says so, since the user may
// expect segmentation to see through it.
std::string late_name(const PlanContext& ctx, int op) {
    const Op& o = ctx.graph.ops[static_cast<std::size_t>(op)];
    std::string out = "'" + o.name + "'";
    if (ignored_by_segmentation(o.type))
        out += " (a " + o.type +
               " operator: segmentation ignores its type, but here it runs a kernel)";
    return out;
}

// Why `i` cannot join the open segment, or nullopt. The fused kernel launches where its first
// operator was, so every operator it depends on must have run by then. Every late dependency is
// looked at: one that itself depends on the segment would wait for the launch that waits for it
// (EXIST_DEADLOCK, which wins); otherwise the first is named (EXTERNAL_DEPEND).
std::optional<std::pair<Reason, std::string>> must_split(const PlanContext& ctx, const Open& open,
                                                         int i, Marks& marks) {
    const auto& seg = ctx.plan.segments[static_cast<std::size_t>(open.segment)];
    if (seg.ops.size() >= k_max_tasks)
        return std::pair{Reason::exceed_task_max, "a SuperKernel holds at most 1024 tasks"};
    auto direct = ctx.deps[static_cast<std::size_t>(i)];
    if (std::none_of(direct.begin(), direct.end(),
                     [&](int d) { return d > open.start && !in_segment(ctx, open, d); }))
        return std::nullopt;
    auto late = late_dependencies(ctx, open, i, marks);
    if (late.empty())
        return std::nullopt;
    auto name = [&](int op) { return late_name(ctx, op); };
    for (int d : late)
        if (reaches_segment(ctx, open, d, marks))
            return std::pair{
                Reason::exist_deadlock,
                "depends on " + name(d) +
                    ", which runs after the segment starts and depends on the segment itself"};
    return std::pair{Reason::external_depend,
                     "depends on " + name(late.front()) + ", which runs after the segment starts"};
}

void name_segments(PlanContext& ctx, const std::vector<int>& scope_sizes,
                   const std::vector<int>& scope_of_segment) {
    std::vector<int> count(scope_sizes.size(), 0);
    for (int s : scope_of_segment)
        ++count[static_cast<std::size_t>(s)];
    for (std::size_t i = 0; i < ctx.plan.segments.size(); ++i) {
        auto& seg = ctx.plan.segments[i];
        auto sid = static_cast<std::size_t>(scope_of_segment[i]);
        bool whole = count[sid] == 1 && static_cast<int>(seg.ops.size()) == scope_sizes[sid];
        seg.name = whole ? seg.scope
                         : seg.scope + "_split_" + std::to_string(seg.scope_begin) + "_" +
                               std::to_string(seg.scope_end);
    }
}

// strict-scope-check=abort: a scope that is split, or loses an operator, fails the compile, as in
// GE's SuperKernel pass. The scope's first lost operator, else its first cut, is the reason given.
void check_strict_scopes(PlanContext& ctx, const std::vector<graph::ScopeOptions>& options,
                         const std::vector<int>& first_lost,
                         const std::vector<int>& scope_of_segment) {
    const auto& g = ctx.graph;
    auto strict = [&](std::size_t s) {
        return options[s].strict_scope_check == graph::StrictScopeCheck::abort;
    };
    bool any = false;
    for (std::size_t s = 0; s < options.size(); ++s)
        any = any || strict(s);
    if (!any || !g.super_kernel_optimize)
        return;
    std::vector<std::string> why(options.size());
    for (std::size_t s = 0; s < options.size(); ++s) {
        if (!strict(s) || first_lost[s] < 0)
            continue;
        auto i = static_cast<std::size_t>(first_lost[s]);
        const auto& r = ctx.plan.ops[i];
        why[s] = "'" + g.ops[i].name + "' is left out (" + std::string(reason_code(*r.reason)) +
                 ": " + r.detail + ")";
    }
    for (std::size_t k = 0; k < scope_of_segment.size(); ++k) {
        auto s = static_cast<std::size_t>(scope_of_segment[k]);
        const auto& seg = ctx.plan.segments[k];
        if (strict(s) && why[s].empty() && seg.split_reason)
            why[s] = "it is cut before '" + g.ops[static_cast<std::size_t>(seg.ops.front())].name +
                     "' (" + std::string(reason_code(*seg.split_reason)) + ": " + seg.split_detail +
                     ")";
    }
    for (std::size_t s = 0; s < why.size(); ++s)
        if (!why[s].empty())
            ctx.diags.error(
                g.scopes[s].where,
                "scope '" + g.scopes[s].name +
                    "' has strict-scope-check=abort and cannot be fused whole: " + why[s],
                "fix the cause, or set strict-scope-check=bypass to let the scope be "
                "split");
}

} // namespace

void segment_pass(PlanContext& ctx) {
    const auto& g = ctx.graph;
    auto& plan = ctx.plan;
    plan.ops.assign(g.ops.size(), {});
    // Scopes by index, so the walk below does no string lookups.
    std::unordered_map<std::string_view, int> scope_index;
    std::vector<graph::ScopeOptions> options;
    auto defaults = graph::scope_defaults(g.options, ctx.option_defaults ? *ctx.option_defaults
                                                                         : graph::ScopeOptions{});
    for (std::size_t s = 0; s < g.scopes.size(); ++s) {
        scope_index.emplace(g.scopes[s].name, static_cast<int>(s));
        options.push_back(graph::parse_scope_options(g.scopes[s].options, defaults,
                                                     g.scopes[s].where, ctx.diags));
    }
    std::size_t n = g.scopes.size();
    std::vector<std::optional<Open>> open(n);
    std::vector<int> position(n, 0);
    std::vector<std::optional<std::pair<Reason, std::string>>> pending_cut(n);
    std::vector<int> scope_of_segment;
    std::vector<int> first_lost(n, -1); // per scope, its first operator left out
    const auto cores = kernel::soc_cores(g.soc_version, g.npu_arch);
    Marks marks(g.ops.size());
    int run_sid = -1;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        support::prefetch_ahead(g.ops, i);
        // Operators of a scope come in runs: the scope is looked up where a run starts.
        if (i == 0 || op.scope != g.ops[i - 1].scope)
            run_sid = op.scope.empty() ? -1 : scope_index.at(op.scope);
        // An operator seen through is no member of its scope: it takes no position and cuts
        // nothing.
        int sid = seen_through(op) ? -1 : run_sid;
        auto su = static_cast<std::size_t>(sid);
        int pos = sid < 0 ? 0 : position[su]++;
        if (auto why = unfusible_on(g, op, sid, cores)) {
            plan.ops[i].reason = why->first;
            if (sid >= 0 && first_lost[su] < 0)
                first_lost[su] = static_cast<int>(i);
            if (sid >= 0 && open[su]) {
                open[su].reset();
                pending_cut[su] =
                    std::pair{Reason::cut_by_unfusible, "'" + op.name + "' (" +
                                                            std::string(reason_code(why->first)) +
                                                            ") came between"};
            }
            plan.ops[i].detail = std::move(why->second);
            continue;
        }
        std::optional<std::pair<Reason, std::string>> split;
        if (open[su] && (split = must_split(ctx, *open[su], static_cast<int>(i), marks)))
            open[su].reset();
        if (!open[su]) {
            Segment seg;
            seg.scope = op.scope;
            seg.options = options[su];
            seg.scope_begin = pos;
            auto why = split ? split : pending_cut[su];
            if (why)
                seg.split_reason = why->first, seg.split_detail = why->second;
            pending_cut[su].reset();
            plan.segments.push_back(std::move(seg));
            scope_of_segment.push_back(sid);
            open[su] = Open{static_cast<int>(plan.segments.size() - 1), static_cast<int>(i)};
        }
        auto& seg = plan.segments[static_cast<std::size_t>(open[su]->segment)];
        seg.ops.push_back(static_cast<int>(i));
        seg.scope_end = pos;
        plan.ops[i].segment = open[su]->segment;
    }
    name_segments(ctx, position, scope_of_segment);
    check_strict_scopes(ctx, options, first_lost, scope_of_segment);
}

Plan make_plan(const graph::Graph& graph, graph::Diagnostics& diags, PlanDepth depth) {
    return make_plan(graph, graph::dependencies(graph), diags, depth);
}

Plan make_plan(const graph::Graph& graph, const graph::Dependencies& deps,
               graph::Diagnostics& diags, PlanDepth depth, std::string_view arch,
               const graph::ScopeOptions* option_defaults, ReleaseChecks checks) {
    PlanContext ctx{
        graph, diags,           deps,  arch.empty() ? std::string_view(graph.npu_arch) : arch,
        {},    option_defaults, checks};
    // 1. Cut scopes into segments.
    segment_pass(ctx);
    // Events between operators beside the cores and the others: notify/wait pairs, and what
    // the vendor's flow refuses of them on the target.
    notify_wait_pass(ctx);
    npu_side_rules_pass(graph, ctx.plan, ctx.arch, diags);
    // What the vendor's SuperKernel compiler refuses, said before anything is built.
    npu_generator_rules_pass(graph, ctx.plan, ctx.arch, diags);
    // Then each segment on its own, on every core. Problems are reported per pass, in segment
    // order, as if each pass ran over all segments in turn.
    auto& segments = ctx.plan.segments;
    std::vector<graph::Diagnostics> cores_diags(segments.size()), stream_diags(segments.size());
    auto plan_segment = [&](std::size_t i) {
        Segment& s = segments[i];
        // 2. Cores: block dim, core type, task ration, full-core synchronisation.
        cores_pass(ctx, s, cores_diags[i]);
        // 3. Streams: events inside a SuperKernel become set/wait pairs; no deadlock.
        stream_pass(ctx, s, stream_diags[i]);
        // The passes below report no problems: `skc check` stops here.
        if (depth == PlanDepth::checks)
            return;
        // 4. Barriers, as narrow as correct, and early-start flags.
        barrier_pass(ctx, s);
        // 5. Cache maintenance flags.
        cache_pass(ctx, s);
        // 6. Memory: arguments, workspace reuse, the arena.
        memory_pass(ctx, s);
        // Notify/wait of each sub-kernel with operators beside the cores.
        side_sync_pass(ctx, s);
        // 7. Code layout.
        layout_pass(ctx, s);
        // 8. The SuperKernel's parameter block (its metadata JSON is written on demand).
        metadata_pass(s);
    };
    constexpr std::size_t k_batch = 16; // segments taken at a time
    std::atomic<std::size_t> next{0};
    support::on_threads(
        std::min<unsigned>(support::cores(), static_cast<unsigned>((segments.size() + 63) / 64)),
        [&](unsigned) {
            for (std::size_t b = next.fetch_add(k_batch); b < segments.size();
                 b = next.fetch_add(k_batch))
                for (std::size_t i = b; i < std::min(segments.size(), b + k_batch); ++i)
                    plan_segment(i);
        });
    for (const auto* found : {&cores_diags, &stream_diags})
        for (const auto& d : *found)
            diags.append(d);
    if (depth == PlanDepth::full)
        notify_wait_slots(ctx.plan);
    return std::move(ctx.plan);
}

} // namespace skforge::fusion
