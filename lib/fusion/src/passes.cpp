// SPDX-License-Identifier: Apache-2.0
// The planning passes after segmentation: cores, streams, barriers and early-start, cache
// maintenance, code layout. Memory is in memory.cpp, the metadata in metadata.cpp.
#include "skforge/fusion/plan.hpp"

#include "skforge/kernel/kernel_meta.hpp"
#include "skforge/kernel/soc.hpp"
#include "sync_order.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <numeric>

namespace skforge::fusion {

using kernel::KernelType;

std::string_view barrier_kind_name(BarrierKind k) {
    return k == BarrierKind::vector ? "vector" : k == BarrierKind::cube ? "cube" : "full";
}

namespace {

const graph::Op& op_at(const PlanContext& ctx, const Segment& s, int pos) {
    return ctx.graph.ops[static_cast<std::size_t>(s.ops[static_cast<std::size_t>(pos)])];
}

const kernel::KernelMeta& meta_at(const PlanContext& ctx, const Segment& s, int pos) {
    return sub_kernel_meta(ctx.graph, s, static_cast<std::size_t>(pos));
}

KernelType type_at(const PlanContext& ctx, const Segment& s, int pos) {
    return *meta_at(ctx, s, pos).kernel_type;
}

std::string reduced_ratio(int aic, int aiv) {
    int g = std::gcd(aic, aiv);
    return g == 0 ? "0:0" : std::to_string(aic / g) + ":" + std::to_string(aiv / g);
}

// The position of operator `op` in the segment, or -1 (a segment's operators are in order).
int position_of(const Segment& s, int op) {
    auto it = std::lower_bound(s.ops.begin(), s.ops.end(), op);
    return it != s.ops.end() && *it == op ? static_cast<int>(it - s.ops.begin()) : -1;
}

// The stream a sub-kernel runs on inside the SuperKernel: its own with stream fusion, else one.
std::uint32_t queue_of(const PlanContext& ctx, const Segment& s, int pos) {
    return s.options.stream_fusion ? op_at(ctx, s, pos).stream_id : 0;
}

// debug-aic-num:debug-aiv-num replace the SuperKernel's cores; a count of 0 for a kind of core a
// sub-kernel runs on would leave that sub-kernel nowhere to run. Reports the first such one.
void check_debug_cores(const PlanContext& ctx, const Segment& s, graph::Diagnostics& diags) {
    const int aic = *s.options.debug_aic_num, aiv = *s.options.debug_aiv_num;
    for (int p = 0; p < static_cast<int>(s.ops.size()); ++p) {
        KernelType t = type_at(ctx, s, p);
        bool no_cube = aic == 0 && !kernel::is_vector_only(t);
        if (!no_cube && (aiv != 0 || kernel::is_cube_only(t)))
            continue;
        const std::string kind = no_cube ? "cube" : "vector";
        const std::string key = no_cube ? "debug-aic-num" : "debug-aiv-num";
        const auto* scope = ctx.graph.find_scope(s.scope);
        diags.error(scope ? scope->where : op_at(ctx, s, p).where,
                    "SuperKernel " + s.name + ": " + key + "=0 leaves no " + kind + " cores for '" +
                        op_at(ctx, s, p).name + "' (" + meta_at(ctx, s, p).kernel_type_text + ")",
                    "give " + key + " a positive count, or remove debug-aic-num and debug-aiv-num");
        return;
    }
}

// The vendor's SuperKernel compiler of the 9.0 line refuses debug-aic-num/debug-aiv-num above
// the SoC's cores (check_debug_aic_aiv_num_exceed_platform_num_blocks) and below the block count
// the sub-kernels give the launch, for each kind of core that launch uses
// (check_debug_aic_aiv_num_exceed_sub_op_aic_aiv_num: a 1:2 launch needs twice the vector
// cores). Reports the first, in the vendor's order.
void check_debug_cores_in_range(const PlanContext& ctx, const Segment& s,
                                graph::Diagnostics& diags) {
    const auto aic = static_cast<std::uint32_t>(*s.options.debug_aic_num);
    const auto aiv = static_cast<std::uint32_t>(*s.options.debug_aiv_num);
    const auto* scope = ctx.graph.find_scope(s.scope);
    const auto& where = scope ? scope->where : op_at(ctx, s, 0).where;
    const std::string vendor =
        "CANN's SuperKernel compiler (" + std::string(ctx.checks.release) + " line) refuses ";
    const auto cores = kernel::soc_cores(ctx.graph.soc_version, ctx.arch);
    const std::string soc =
        ctx.graph.soc_version.empty() ? std::string(ctx.arch) : ctx.graph.soc_version;
    auto above = [&](const char* key, std::uint32_t value, int limit, const char* kind) {
        diags.error(where,
                    "SuperKernel " + s.name + ": " + key + "=" + std::to_string(value) +
                        " exceeds the " + std::to_string(limit) + " " + kind + " cores of " + soc +
                        ": " + vendor + "a debug core count above the SoC's",
                    std::string("give ") + key + " at most " + std::to_string(limit));
    };
    if (aic > static_cast<std::uint32_t>(cores.aic))
        return above("debug-aic-num", aic, cores.aic, "cube");
    if (aiv > static_cast<std::uint32_t>(cores.aiv))
        return above("debug-aiv-num", aiv, cores.aiv, "vector");
    const NpuLaunch l = sub_kernel_launch(ctx.graph, s);
    const std::uint32_t need_aic = kernel::is_vector_only(l.type) ? 0 : l.block_dim;
    const std::uint32_t need_aiv = kernel::is_cube_only(l.type)
                                       ? 0
                                       : (l.type == KernelType::mix_aic_1_2 ? 2 : 1) * l.block_dim;
    auto below = [&](const char* key, std::uint32_t value, std::uint32_t need, const char* kind) {
        diags.error(where,
                    "SuperKernel " + s.name + ": " + key + "=" + std::to_string(value) +
                        " is below the " + std::to_string(need) + " " + kind +
                        " cores its sub-kernels need (a " +
                        std::string(kernel::kernel_type_name(l.type)) + " launch of " +
                        std::to_string(l.block_dim) + " blocks): " + vendor +
                        "a debug core count below the sub-kernels' largest block count",
                    std::string("give ") + key + " at least " + std::to_string(need) +
                        ", or remove debug-aic-num and debug-aiv-num");
    };
    if (aic < need_aic)
        return below("debug-aic-num", aic, need_aic, "cube");
    if (aiv < need_aiv)
        return below("debug-aiv-num", aiv, need_aiv, "vector");
}

// A sub-kernel that synchronises all cores would wait forever for cores of the launch it does
// not run on, unless those cores are fed the matching SyncAll. Compared with the launch, as the
// vendor's compiler decides whether to feed (graph-autofusion super_kernel.py,
// judge_need_feed_sync_all); on the host with the largest sub-kernel blockDim.
void check_sync_all(const PlanContext& ctx, Segment& s, graph::Diagnostics& diags) {
    const auto launch = launch_summary(s);
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        const auto& op = op_at(ctx, s, static_cast<int>(p));
        const auto& meta = meta_at(ctx, s, static_cast<int>(p));
        std::uint32_t idle =
            idle_cores(launch.type, launch.block_dim, *meta.kernel_type, meta.block_dim);
        if (!meta.sync_all || idle == 0)
            continue;
        if (s.options.feed_sync_all) {
            s.subs[p].feed_sync_all_cores = idle;
            continue;
        }
        const std::string all = std::to_string(meta.block_dim + idle);
        diags.error(op.where,
                    "'" + op.name + "' synchronises all cores (sub_op_with_sync_all) but runs on " +
                        std::to_string(meta.block_dim) + " of the " + all +
                        " cores of SuperKernel " + s.name + ": it would hang",
                    "set feed-sync-all=1 on the scope, or give it blockDim " + all);
    }
}

} // namespace

void cores_pass(const PlanContext& ctx, Segment& s, graph::Diagnostics& diags) {
    s.subs.assign(s.ops.size(), {});
    bool cube = false, vector = false, one_to_one = false, one_to_two = false;
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        const auto& meta = meta_at(ctx, s, static_cast<int>(p));
        s.subs[p].block_dim = meta.block_dim;
        s.largest_block_dim = std::max(s.largest_block_dim, meta.block_dim);
        KernelType t = *meta.kernel_type;
        cube = cube || !kernel::is_vector_only(t);
        vector = vector || !kernel::is_cube_only(t);
        one_to_one = one_to_one || t == KernelType::mix_aic_1_1;
        one_to_two =
            one_to_two || t == KernelType::mix_aic_1_2 || (t == KernelType::aiv_only && cube);
    }
    if (s.options.debug_aic_num) {
        s.task_ration = reduced_ratio(*s.options.debug_aic_num, *s.options.debug_aiv_num);
        graph::Diagnostics own;
        check_debug_cores(ctx, s, own);
        if (!own.has_errors() && ctx.checks.debug_cores_in_range && ctx.arch != "host")
            check_debug_cores_in_range(ctx, s, own);
        diags.append(own);
    } else if (cube && vector) {
        s.task_ration = one_to_one && !one_to_two ? "1:1" : "1:2";
    } else {
        s.task_ration = cube ? "1:0" : "0:1";
    }
    s.core_type = cube && vector ? "MIX" : cube ? "AiCore" : "VectorCore";
    if (ctx.arch != "host")
        s.launch = npu_launch(ctx.graph, s, ctx.graph.soc_version, ctx.arch);
    check_sync_all(ctx, s, diags);
}

void stream_pass(const PlanContext& ctx, Segment& s, graph::Diagnostics& diags) {
    // Events whose sender and receiver are both inside become set/wait pairs. A segment has few
    // events: sorted vectors, not node maps.
    std::vector<std::pair<std::int64_t, int>> sender; // (event, position), first sender wins
    for (std::size_t p = 0; p < s.ops.size(); ++p)
        for (auto e : op_at(ctx, s, static_cast<int>(p)).send_events)
            sender.emplace_back(e, static_cast<int>(p));
    std::stable_sort(sender.begin(), sender.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    sender.erase(std::unique(sender.begin(), sender.end(),
                             [](const auto& x, const auto& y) { return x.first == y.first; }),
                 sender.end());
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        for (auto e : op_at(ctx, s, static_cast<int>(p)).recv_events) {
            auto it = std::lower_bound(sender.begin(), sender.end(), std::pair{e, INT_MIN});
            if (it == sender.end() || it->first != e || !s.options.stream_fusion)
                continue; // from outside: the launch waits; serialised: order suffices
            s.subs[static_cast<std::size_t>(it->second)].send_events.push_back(e);
            s.subs[p].recv_events.push_back(e);
            s.event_pairs.emplace_back(it->second, static_cast<int>(p));
        }
    }
    // Deadlock check: run the per-stream queues; a sub-kernel starts when every event it
    // waits for was set by a sub-kernel that already ran.
    std::vector<std::pair<std::uint32_t, std::vector<int>>> queues; // by stream, sorted
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        std::uint32_t q = queue_of(ctx, s, static_cast<int>(p));
        auto it = std::lower_bound(queues.begin(), queues.end(), q,
                                   [](const auto& x, std::uint32_t v) { return x.first < v; });
        if (it == queues.end() || it->first != q)
            it = queues.insert(it, {q, {}});
        it->second.push_back(static_cast<int>(p));
    }
    std::vector<std::size_t> head(queues.size(), 0);
    std::vector<std::int64_t> set_events; // sorted
    std::size_t done = 0;
    bool progress = true;
    while (progress && done < s.ops.size()) {
        progress = false;
        for (std::size_t k = 0; k < queues.size(); ++k) {
            const auto& items = queues[k].second;
            auto& h = head[k];
            while (h < items.size()) {
                const auto& sub = s.subs[static_cast<std::size_t>(items[h])];
                if (!std::all_of(
                        sub.recv_events.begin(), sub.recv_events.end(), [&](std::int64_t e) {
                            return std::binary_search(set_events.begin(), set_events.end(), e);
                        }))
                    break;
                for (auto e : sub.send_events) {
                    auto at = std::lower_bound(set_events.begin(), set_events.end(), e);
                    if (at == set_events.end() || *at != e)
                        set_events.insert(at, e);
                }
                ++h;
                ++done;
                progress = true;
            }
        }
    }
    if (done < s.ops.size())
        diags.error(op_at(ctx, s, 0).where,
                    "SuperKernel " + s.name +
                        " would deadlock: its streams wait on "
                        "each other's events in a cycle",
                    "reorder the operators or remove the scope");
}

namespace {

// The narrowest barrier holding the cores of every kernel type added.
class Narrowest {
  public:
    void add(KernelType t) {
        m_vector = m_vector && kernel::is_vector_only(t);
        m_cube = m_cube && kernel::is_cube_only(t);
    }
    BarrierKind kind() const {
        return m_vector ? BarrierKind::vector : m_cube ? BarrierKind::cube : BarrierKind::full;
    }

  private:
    bool m_vector = true;
    bool m_cube = true;
};

} // namespace

namespace {

// A dependency across streams is ordered by the event pair between them only for what ran on
// the sender's kind of core (sync_order.hpp); where the barriers and flags leave a dependency
// unordered, the barrier before the consumer is made wide enough.
void cover_dependencies(const PlanContext& ctx, Segment& s) {
    SyncOrder order(ctx.graph, s);
    bool widened = false;
    for (std::size_t j = 0; j < s.ops.size(); ++j) {
        order.advance(j);
        unsigned need = 0;
        for (int d : ctx.deps[static_cast<std::size_t>(s.ops[j])]) {
            int at = position_of(s, d);
            if (at < 0)
                continue;
            auto i = static_cast<std::size_t>(at);
            if (!order.before(i, j))
                need |= SyncOrder::kind_of(ctx.graph, s, i) | SyncOrder::kind_of(ctx.graph, s, j);
        }
        if (need != 0) {
            order.widen_barrier(j, need);
            widened = true;
        }
    }
    if (widened)
        s.barriers = order.barriers();
}

} // namespace

void barrier_pass(const PlanContext& ctx, Segment& s) {
    std::map<std::uint32_t, int> last_on_queue;
    std::vector<int> same; // per operator, kept to spare allocations
    for (int j = 0; j < static_cast<int>(s.ops.size()); ++j) {
        std::uint32_t q = queue_of(ctx, s, j);
        auto prev = last_on_queue.find(q);
        int predecessor = prev == last_on_queue.end() ? -1 : prev->second;
        last_on_queue[q] = j;
        if (j == 0)
            continue;
        if (s.options.debug_sync_all) {
            s.barriers.push_back({j, BarrierKind::full});
            continue;
        }
        // Dependencies inside the segment on the same queue need synchronisation here;
        // cross-queue ones are covered by the event set/wait pairs of stream_pass.
        same.clear();
        for (int d : ctx.deps[static_cast<std::size_t>(s.ops[static_cast<std::size_t>(j)])])
            if (int at = position_of(s, d); at >= 0 && queue_of(ctx, s, at) == q)
                same.push_back(at);
        Narrowest covered;
        covered.add(type_at(ctx, s, j));
        bool covers_more = false;
        for (int i : same) {
            bool early =
                (s.options.early_start == 1 && i == predecessor) || s.options.early_start == 2;
            if (early) {
                s.early_start_pairs.emplace_back(i, j);
                s.subs[static_cast<std::size_t>(i)].early_start_set = true;
                s.subs[static_cast<std::size_t>(j)].early_start_wait = true;
            } else {
                covered.add(type_at(ctx, s, i));
                covers_more = true;
            }
        }
        if (covers_more) {
            s.barriers.push_back({j, covered.kind()});
        } else if (!s.options.stream_fusion && predecessor >= 0 && same.empty()) {
            // Without stream fusion the sub-kernels run one after another.
            covered.add(type_at(ctx, s, predecessor));
            s.barriers.push_back({j, covered.kind()});
        }
    }
    cover_dependencies(ctx, s);
}

void cache_pass(const PlanContext& ctx, Segment& s) {
    auto any = [](const std::vector<std::string>& patterns, const std::string& type) {
        return std::any_of(patterns.begin(), patterns.end(),
                           [&](const std::string& p) { return graph::op_type_matches(p, type); });
    };
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        const auto& type = op_at(ctx, s, static_cast<int>(p)).type;
        auto& sub = s.subs[p];
        sub.dcci_disabled = any(s.options.dcci_disable_on_kernel, type);
        sub.dcci_before = !sub.dcci_disabled && (s.options.debug_dcci_all ||
                                                 any(s.options.dcci_before_kernel_start, type));
        sub.dcci_after = !sub.dcci_disabled &&
                         (s.options.debug_dcci_all || any(s.options.dcci_after_kernel_end, type));
    }
}

void layout_pass(const PlanContext& ctx, Segment& s) {
    constexpr std::uint64_t k_estimated_code = 16 * 1024;
    std::uint64_t align = s.options.func_align == 0 ? 1 : s.options.func_align;
    std::uint64_t offset = 0;
    std::vector<std::uint64_t> first_copy_size(s.ops.size());
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        const auto& op = op_at(ctx, s, static_cast<int>(p));
        const auto& k = ctx.graph.kernels[static_cast<std::size_t>(op.kernel_index)];
        std::uint64_t size = k.binary_size;
        if (size == 0) {
            size = k_estimated_code;
            s.code_size_estimated = true;
        }
        auto& sub = s.subs[p];
        sub.split_mode = k.meta.split_mode > 0 ? k.meta.split_mode : s.options.split_mode;
        first_copy_size[p] = size;
        for (std::uint32_t c = 0; c < sub.split_mode; ++c) {
            offset = (offset + align - 1) / align * align;
            s.layout.push_back({static_cast<int>(p), c, offset, size});
            offset += size;
        }
    }
    // What each sub-kernel prefetches while it runs: nothing, the next one, or all the rest.
    s.preload_bytes.assign(s.ops.size(), 0);
    for (std::size_t p = 0; p + 1 < s.ops.size(); ++p) {
        if (s.options.preload_code == graph::PreloadCode::per_func)
            s.preload_bytes[p] = first_copy_size[p + 1];
        else if (s.options.preload_code == graph::PreloadCode::max)
            s.preload_bytes[p] =
                std::accumulate(first_copy_size.begin() + static_cast<std::ptrdiff_t>(p) + 1,
                                first_copy_size.end(), std::uint64_t{0});
    }
}

} // namespace skforge::fusion
