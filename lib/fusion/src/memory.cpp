// The memory pass: one argument per distinct buffer, workspace reuse within each stream, and an
// arena for tensors that live only inside a SuperKernel, placed by lifetime.
#include "skforge/fusion/plan.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace skforge::fusion {

std::uint32_t dtype_size(std::string_view d) {
    static const std::pair<std::string_view, std::uint32_t> k_sizes[] = {
        {"float16", 2}, {"half", 2},  {"bfloat16", 2}, {"float32", 4}, {"float", 4}, {"float64", 8},
        {"double", 8},  {"int8", 1},  {"uint8", 1},    {"bool", 1},    {"int4", 1},  {"int16", 2},
        {"uint16", 2},  {"int32", 4}, {"uint32", 4},   {"int64", 8},   {"uint64", 8}};
    for (const auto& [name, size] : k_sizes)
        if (name == d)
            return size;
    return 0;
}

namespace {

constexpr std::uint64_t k_align = 512;

std::uint64_t aligned(std::uint64_t n) {
    return (n + k_align - 1) / k_align * k_align;
}

struct TensorIndex {
    std::unordered_map<std::string_view, const graph::Tensor*> decl;
    std::unordered_map<std::string_view, std::vector<int>> consumers;
};

TensorIndex index_tensors(const graph::Graph& g) {
    TensorIndex t;
    for (const auto& in : g.inputs)
        t.decl.emplace(in.name, &in);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        for (const auto& out : g.ops[i].outputs)
            t.decl.emplace(out.name, &out);
        for (const auto& in : g.ops[i].inputs)
            t.consumers[in.name].push_back(static_cast<int>(i));
    }
    return t;
}

std::uint64_t tensor_bytes(const graph::Tensor* t) {
    if (t == nullptr)
        return 0;
    std::uint64_t n = 1;
    for (auto d : t->shape)
        n *= static_cast<std::uint64_t>(std::max<std::int64_t>(d, 0));
    std::uint32_t size = dtype_size(t->dtype);
    if (t->dtype == "int4")
        return aligned((n + 1) / 2);
    return aligned(n * (size == 0 ? 1 : size));
}

// Happens-before between positions of a segment: per-queue order plus internal event pairs.
class SegmentClock {
  public:
    SegmentClock(const PlanContext& ctx, const Segment& s) {
        std::map<std::uint32_t, int> dense;
        for (int op : s.ops)
            dense.emplace(
                s.options.stream_fusion ? ctx.graph.ops[static_cast<std::size_t>(op)].stream_id : 0,
                0);
        int n = 0;
        for (auto& [q, d] : dense)
            d = n++;
        std::vector<std::vector<int>> after(s.ops.size());
        std::vector<int> last(static_cast<std::size_t>(n), -1);
        m_queue.resize(s.ops.size());
        m_start.resize(s.ops.size());
        for (std::size_t p = 0; p < s.ops.size(); ++p) {
            const auto& op = ctx.graph.ops[static_cast<std::size_t>(s.ops[p])];
            int q = dense.at(s.options.stream_fusion ? op.stream_id : 0);
            m_queue[p] = q;
            std::vector<int> clock =
                last[static_cast<std::size_t>(q)] < 0
                    ? std::vector<int>(static_cast<std::size_t>(n), -1)
                    : after[static_cast<std::size_t>(last[static_cast<std::size_t>(q)])];
            for (const auto& [from, to] : s.event_pairs)
                if (to == static_cast<int>(p))
                    for (std::size_t k = 0; k < clock.size(); ++k)
                        clock[k] = std::max(clock[k], after[static_cast<std::size_t>(from)][k]);
            m_start[p] = clock;
            clock[static_cast<std::size_t>(q)] = static_cast<int>(p);
            after[p] = std::move(clock);
            last[static_cast<std::size_t>(q)] = static_cast<int>(p);
        }
    }
    /// True when position x finishes before position y starts.
    bool before(int x, int y) const {
        return x < y && m_start[static_cast<std::size_t>(y)]
                               [static_cast<std::size_t>(m_queue[static_cast<std::size_t>(x)])] >=
                            x;
    }

  private:
    std::vector<int> m_queue;
    std::vector<std::vector<int>> m_start;
};

struct Interval {
    int buffer;
    std::vector<int> uses; // producer and consumers
};

// Two arena tensors may share memory only when every use of one happens before the other's
// producer starts.
bool conflict(const SegmentClock& clock, const Buffer& a, const std::vector<int>& a_uses,
              const Buffer& b, const std::vector<int>& b_uses) {
    auto all_before = [&](const std::vector<int>& uses, int start) {
        return std::all_of(uses.begin(), uses.end(), [&](int u) { return clock.before(u, start); });
    };
    return !(all_before(a_uses, b.first) || all_before(b_uses, a.first));
}

void place_arena(const PlanContext& ctx, Segment& s, const std::vector<std::vector<int>>& uses) {
    SegmentClock clock(ctx, s);
    std::vector<int> order;
    for (std::size_t b = 0; b < s.buffers.size(); ++b)
        if (s.buffers[b].arena)
            order.push_back(static_cast<int>(b));
    // Largest first, then by when they start: the usual best-fit order for offline allocation.
    std::sort(order.begin(), order.end(), [&](int x, int y) {
        const auto& a = s.buffers[static_cast<std::size_t>(x)];
        const auto& b = s.buffers[static_cast<std::size_t>(y)];
        return a.bytes != b.bytes   ? a.bytes > b.bytes
               : a.first != b.first ? a.first < b.first
                                    : x < y;
    });
    std::vector<int> placed;
    for (int x : order) {
        auto& buf = s.buffers[static_cast<std::size_t>(x)];
        std::vector<std::pair<std::uint64_t, std::uint64_t>> taken;
        for (int y : placed) {
            const auto& other = s.buffers[static_cast<std::size_t>(y)];
            if (conflict(clock, buf, uses[static_cast<std::size_t>(x)], other,
                         uses[static_cast<std::size_t>(y)]))
                taken.emplace_back(other.offset, other.offset + other.bytes);
        }
        std::sort(taken.begin(), taken.end());
        std::uint64_t offset = 0;
        for (const auto& [lo, hi] : taken) {
            if (offset + buf.bytes <= lo)
                break;
            offset = std::max(offset, hi);
        }
        buf.offset = offset;
        s.arena_peak = std::max(s.arena_peak, offset + buf.bytes);
        placed.push_back(x);
    }
    // Lower bound: the most bytes live at one position of the execution order.
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        std::uint64_t live = 0;
        for (const auto& b : s.buffers)
            if (b.arena && b.first <= static_cast<int>(p) && static_cast<int>(p) <= b.last)
                live += b.bytes;
        s.arena_lower_bound = std::max(s.arena_lower_bound, live);
    }
}

} // namespace

void memory_pass(PlanContext& ctx) {
    if (ctx.plan.segments.empty())
        return;
    TensorIndex tensors = index_tensors(ctx.graph);
    for (auto& s : ctx.plan.segments) {
        std::map<int, int> pos;
        for (std::size_t p = 0; p < s.ops.size(); ++p)
            pos.emplace(s.ops[p], static_cast<int>(p));
        std::unordered_map<std::string_view, int> buffer_of;
        std::vector<std::vector<int>> uses;
        auto buffer = [&](const std::string& name) {
            auto [it, fresh] = buffer_of.emplace(name, static_cast<int>(s.buffers.size()));
            if (fresh) {
                auto d = tensors.decl.find(name);
                s.buffers.push_back(
                    {name, tensor_bytes(d == tensors.decl.end() ? nullptr : d->second)});
                uses.emplace_back();
            }
            return it->second;
        };
        for (std::size_t p = 0; p < s.ops.size(); ++p) {
            const auto& op = ctx.graph.ops[static_cast<std::size_t>(s.ops[p])];
            auto& sub = s.subs[p];
            for (const auto& in : op.inputs) {
                int b = buffer(in.name);
                s.buffers[static_cast<std::size_t>(b)].last = static_cast<int>(p);
                uses[static_cast<std::size_t>(b)].push_back(static_cast<int>(p));
                sub.args.push_back({b, false, 0});
            }
            for (const auto& out : op.outputs) {
                int b = buffer(out.name);
                s.buffers[static_cast<std::size_t>(b)].first = static_cast<int>(p);
                uses[static_cast<std::size_t>(b)].push_back(static_cast<int>(p));
                sub.args.push_back({b, true, 0});
            }
            sub.workspace =
                ctx.graph.kernels[static_cast<std::size_t>(op.kernel_index)].meta.workspace.total();
        }
        // Internal: produced here, read, and read only here.
        for (auto& b : s.buffers) {
            auto c = tensors.consumers.find(b.tensor);
            b.arena = b.first >= 0 && c != tensors.consumers.end() && !c->second.empty() &&
                      std::all_of(c->second.begin(), c->second.end(),
                                  [&](int op) { return pos.contains(op); });
            if (b.last < b.first)
                b.last = b.first;
        }
        place_arena(ctx, s, uses);
        // Workspace: sub-kernels of one stream run one after another and reuse the largest.
        std::map<std::uint32_t, std::uint64_t> per_stream;
        for (std::size_t p = 0; p < s.ops.size(); ++p) {
            auto q = s.options.stream_fusion
                         ? ctx.graph.ops[static_cast<std::size_t>(s.ops[p])].stream_id
                         : 0u;
            per_stream[q] = std::max(per_stream[q], s.subs[p].workspace);
            s.workspace_naive += s.subs[p].workspace;
        }
        for (const auto& [q, w] : per_stream)
            s.workspace_total += w;
    }
}

} // namespace skforge::fusion
