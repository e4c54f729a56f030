// SPDX-License-Identifier: Apache-2.0
// The memory pass: one argument per distinct buffer, scratch workspace shared where the
// sub-kernels are ordered, and an arena for tensors that live only inside a SuperKernel, placed
// by lifetime.
#include "skforge/support/memory.hpp"
#include "skforge/fusion/plan.hpp"
#include "skforge/kernel/kernel_meta.hpp"
#include "sync_order.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <span>

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

// The positions (sub-kernels) that use each buffer of a segment, in order, all in one array.
struct Uses {
    std::vector<std::size_t> start; ///< buffer b's positions are [start[b], start[b + 1])
    std::vector<int> positions;
    std::span<const int> of(std::size_t b) const {
        return {positions.data() + start[b], start[b + 1] - start[b]};
    }
};

// Who conflicts with whom: one bit row per tensor (conflicts are sparse, most lifetimes being
// short, and each() visits only the set bits).
class Conflicts {
  public:
    explicit Conflicts(std::size_t n) : m_words((n + 63) / 64), m_bits(n * m_words, 0) {}
    std::size_t words() const { return m_words; }
    void set(std::size_t i, std::size_t j) {
        m_bits[i * m_words + j / 64] |= std::uint64_t{1} << (j % 64);
        m_bits[j * m_words + i / 64] |= std::uint64_t{1} << (i % 64);
    }
    const std::uint64_t* row(std::size_t i) const { return m_bits.data() + i * m_words; }
    // Calls f(j) for every j conflicting with i, in increasing order.
    template <class F> void each(std::size_t i, F&& f) const {
        for (std::size_t w = 0; w < m_words; ++w)
            for (std::uint64_t b = row(i)[w]; b != 0; b &= b - 1)
                f(w * 64 + static_cast<std::size_t>(std::countr_zero(b)));
    }

  private:
    std::size_t m_words;
    std::vector<std::uint64_t> m_bits;
};

// A greedy placement of an order: each tensor at the lowest offset free of the tensors it
// conflicts with that come before it in the order.
struct Placement {
    std::vector<std::uint64_t> offset; ///< by tensor
    std::vector<std::uint64_t> peak;   ///< peak[k]: the highest end among the order's first k
    // Scratch, kept to spare allocations in the local search.
    std::vector<char> placed;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> taken;
};

// Places order[from..] after order[..from), whose offsets in `pl` are kept (they depend only on
// the tensors before them, so an order that differs from the last one placed only from `from`
// on is placed exactly as from the start). Returns the peak.
std::uint64_t place(const std::vector<int>& order, std::size_t from, const Conflicts& conflicts,
                    const std::vector<std::uint64_t>& bytes, Placement& pl) {
    const std::size_t n = bytes.size();
    pl.offset.resize(n);
    pl.peak.resize(n + 1);
    if (from == 0)
        pl.peak[0] = 0;
    auto& placed = pl.placed;
    placed.assign(n, 0);
    for (std::size_t k = 0; k < from; ++k)
        placed[static_cast<std::size_t>(order[k])] = 1;
    auto& taken = pl.taken;
    std::uint64_t peak = pl.peak[from];
    for (std::size_t k = from; k < order.size(); ++k) {
        const auto xu = static_cast<std::size_t>(order[k]);
        taken.clear();
        conflicts.each(xu, [&](std::size_t yu) {
            if (placed[yu])
                taken.emplace_back(pl.offset[yu], pl.offset[yu] + bytes[yu]);
        });
        std::sort(taken.begin(), taken.end());
        std::uint64_t at = 0;
        for (const auto& [lo, hi] : taken) {
            if (at + bytes[xu] <= lo)
                break;
            at = std::max(at, hi);
        }
        pl.offset[xu] = at;
        peak = std::max(peak, at + bytes[xu]);
        pl.peak[k + 1] = peak;
        placed[xu] = 1;
    }
    return peak;
}

std::uint64_t place(const std::vector<int>& order, const Conflicts& conflicts,
                    const std::vector<std::uint64_t>& bytes, std::vector<std::uint64_t>& offset) {
    Placement pl;
    std::uint64_t peak = place(order, 0, conflicts, bytes, pl);
    offset = std::move(pl.offset);
    return peak;
}

// A lower bound on any placement: the heaviest set of tensors that pairwise conflict, found
// greedily from every seed (each such set must be laid out side by side). On one stream this is
// the most bytes live at one point of the execution order; across streams it also counts
// tensors whose lifetimes are not ordered.
std::uint64_t clique_bound(const Conflicts& conflicts, const std::vector<std::uint64_t>& bytes,
                           const std::vector<int>& by_size) {
    // A candidate may join the clique when it is in the AND of the members' conflict rows, so
    // each greedy pass is linear in words instead of cubic in tensors.
    std::size_t n = bytes.size();
    if (n == 0)
        return 0;
    std::size_t words = conflicts.words();
    std::uint64_t best = 0;
    std::vector<std::uint64_t> candidates(words);
    for (int seed : by_size) {
        auto su = static_cast<std::size_t>(seed);
        std::copy_n(conflicts.row(su), words, candidates.begin());
        std::uint64_t weight = bytes[su];
        for (int c : by_size) {
            auto cu = static_cast<std::size_t>(c);
            if (c == seed || (candidates[cu / 64] >> (cu % 64) & 1u) == 0)
                continue;
            weight += bytes[cu];
            for (std::size_t w = 0; w < words; ++w)
                candidates[w] &= conflicts.row(cu)[w];
        }
        best = std::max(best, weight);
    }
    return best;
}

void place_arena(const SyncOrder& clock, Segment& s, const Uses& uses) {
    std::vector<int> arena; // buffer indices
    for (std::size_t b = 0; b < s.buffers.size(); ++b)
        if (s.buffers[b].arena)
            arena.push_back(static_cast<int>(b));
    std::size_t n = arena.size();
    std::vector<std::uint64_t> bytes(n);
    // Two arena tensors may share memory only when every use of one happens before the other's
    // producer starts: when its uses, as a bitset of positions, are all in what the clock has
    // complete before that producer.
    const std::size_t words = clock.words();
    std::vector<std::uint64_t> used_at(n * words, 0);
    std::vector<int> last_use(n, -1);
    for (std::size_t i = 0; i < n; ++i) {
        const auto b = static_cast<std::size_t>(arena[i]);
        bytes[i] = s.buffers[b].bytes;
        for (int u : uses.of(b)) {
            auto uu = static_cast<std::size_t>(u);
            used_at[i * words + uu / 64] |= std::uint64_t{1} << (uu % 64);
            last_use[i] = std::max(last_use[i], u);
        }
    }
    auto all_before = [&](std::size_t i, std::size_t j) { // i's uses before j's producer
        const int start = s.buffers[static_cast<std::size_t>(arena[j])].first;
        if (last_use[i] >= start)
            return false;
        const std::uint64_t* done = clock.complete_before(static_cast<std::size_t>(start));
        for (std::size_t w = 0; w < words; ++w)
            if ((used_at[i * words + w] & ~done[w]) != 0)
                return false;
        return true;
    };
    Conflicts conflicts(n);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (!all_before(i, j) && !all_before(j, i))
                conflicts.set(i, j);
    auto start = [&](int i) {
        return s.buffers[static_cast<std::size_t>(arena[static_cast<std::size_t>(i)])].first;
    };
    std::vector<int> by_size(n), by_degree(n), by_start(n);
    for (std::size_t i = 0; i < n; ++i)
        by_size[i] = by_degree[i] = by_start[i] = static_cast<int>(i);
    // Ties always fall back to the index, so the result never depends on sort internals.
    std::sort(by_size.begin(), by_size.end(), [&](int x, int y) {
        auto bx = bytes[static_cast<std::size_t>(x)], by = bytes[static_cast<std::size_t>(y)];
        return bx != by ? bx > by : start(x) != start(y) ? start(x) < start(y) : x < y;
    });
    std::vector<std::uint64_t> weight(n, 0);
    for (std::size_t i = 0; i < n; ++i)
        conflicts.each(i, [&](std::size_t j) { weight[i] += bytes[j]; });
    std::sort(by_degree.begin(), by_degree.end(), [&](int x, int y) {
        auto wx = weight[static_cast<std::size_t>(x)] + bytes[static_cast<std::size_t>(x)];
        auto wy = weight[static_cast<std::size_t>(y)] + bytes[static_cast<std::size_t>(y)];
        return wx != wy ? wx > wy : x < y;
    });
    std::sort(by_start.begin(), by_start.end(),
              [&](int x, int y) { return start(x) != start(y) ? start(x) < start(y) : x < y; });
    // Latest-ending first: the mirror image of by_start.
    std::vector<int> by_end(n);
    for (std::size_t i = 0; i < n; ++i)
        by_end[i] = static_cast<int>(i);
    auto end = [&](int i) {
        return s.buffers[static_cast<std::size_t>(arena[static_cast<std::size_t>(i)])].last;
    };
    std::sort(by_end.begin(), by_end.end(),
              [&](int x, int y) { return end(x) != end(y) ? end(x) > end(y) : x < y; });
    // Four greedy orders, then a few deterministic shuffles of the best; the lowest peak wins
    // (the first on ties, for determinism).
    Placement best_pl, pl;
    std::uint64_t best = UINT64_MAX;
    const std::vector<int>* best_order = &by_size;
    for (const auto* order : {&by_size, &by_degree, &by_start, &by_end}) {
        std::uint64_t peak = place(*order, 0, conflicts, bytes, pl);
        if (peak < best) {
            best = peak;
            best_pl = pl;
            best_order = order;
        }
    }
    std::vector<std::uint64_t> best_offset = best_pl.offset;
    // Lower bounds: the most bytes live at one point of the order, and the greedy cliques.
    std::vector<std::int64_t> change(s.ops.size() + 1, 0); // live bytes, by difference
    for (const auto& b : s.buffers)
        if (b.arena) {
            change[static_cast<std::size_t>(b.first)] += static_cast<std::int64_t>(b.bytes);
            change[static_cast<std::size_t>(b.last) + 1] -= static_cast<std::int64_t>(b.bytes);
        }
    std::int64_t live = 0;
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        live += change[p];
        s.arena_lower_bound = std::max(s.arena_lower_bound, static_cast<std::uint64_t>(live));
    }
    s.arena_lower_bound = std::max(s.arena_lower_bound, clique_bound(conflicts, bytes, by_size));
    // A local search, unless the greedy placement already reaches the lower bound.
    std::vector<int> trial = *best_order;
    Placement trial_pl = std::move(best_pl);
    std::mt19937 rng(static_cast<std::uint32_t>(n));
    for (int round = 0, stale = 0; round < 48 && stale < 16 && n > 2 && best > s.arena_lower_bound;
         ++round) {
        // Swap two neighbours of the best order; keep it when it is no worse, stop after sixteen
        // tries in a row that found nothing lower. Only the tensors from the swap on move.
        std::size_t at = rng() % (n - 1);
        std::swap(trial[at], trial[at + 1]);
        pl.offset = trial_pl.offset;
        pl.peak = trial_pl.peak;
        std::uint64_t peak = place(trial, at, conflicts, bytes, pl);
        ++stale;
        if (peak <= best) {
            if (peak < best) {
                best = peak;
                best_offset = pl.offset;
                stale = 0;
            }
            std::swap(trial_pl, pl);
        } else {
            std::swap(trial[at], trial[at + 1]); // back
        }
    }
    s.arena_peak = n == 0 ? 0 : best;
    for (std::size_t i = 0; i < n; ++i)
        s.buffers[static_cast<std::size_t>(arena[i])].offset = best_offset[i];
}

// Workspaces: two sub-kernels share scratch bytes only when one is complete before the other
// starts (sync_order.hpp); placed like the arena, largest first, each rounded up to 512 bytes.
void place_workspaces(const SyncOrder& clock, Segment& s) {
    std::vector<std::size_t> users;
    for (std::size_t p = 0; p < s.subs.size(); ++p)
        if (s.subs[p].workspace > 0)
            users.push_back(p);
    std::size_t n = users.size();
    std::vector<std::uint64_t> bytes(n), offset(n);
    Conflicts conflicts(n);
    for (std::size_t i = 0; i < n; ++i) {
        bytes[i] = aligned(s.subs[users[i]].workspace);
        s.workspace_naive += bytes[i];
        for (std::size_t j = 0; j < i; ++j)
            if (!clock.before(users[j], users[i]) && !clock.before(users[i], users[j]))
                conflicts.set(i, j);
    }
    std::vector<int> order(n);
    for (std::size_t i = 0; i < n; ++i)
        order[i] = static_cast<int>(i);
    std::sort(order.begin(), order.end(), [&](int x, int y) {
        auto bx = bytes[static_cast<std::size_t>(x)], by = bytes[static_cast<std::size_t>(y)];
        return bx != by ? bx > by : x < y;
    });
    s.workspace_total = n == 0 ? 0 : place(order, conflicts, bytes, offset);
    for (std::size_t i = 0; i < n; ++i)
        s.subs[users[i]].workspace_offset = offset[i];
}

} // namespace

namespace {

void segment_memory(const PlanContext& ctx, Segment& s) {
    const auto& g = ctx.graph;
    const auto& deps = ctx.deps;
    // A tensor is known by its number (graph::Dependencies): an output's number, a graph input
    // as -1 - its index. An input nothing produces (only in a graph that fails validation,
    // whose plan is dropped) gets a buffer of its own. The segment's tensor numbers, sorted,
    // index the buffer each one has (a segment has tens of tensors: no hash table).
    std::vector<int> ids;
    std::size_t args = 0;
    for (int i : s.ops) {
        const auto iu = static_cast<std::size_t>(i);
        // The loop below reads every tensor: ask for them now, while this one counts.
        support::prefetch(g.ops[iu].inputs.data());
        support::prefetch(g.ops[iu].outputs.data());
        for (int id : deps.sources(iu))
            ids.push_back(id);
        for (std::size_t k = 0; k < g.ops[iu].outputs.size(); ++k)
            ids.push_back(deps.output_id(iu, k));
        args += g.ops[iu].inputs.size() + g.ops[iu].outputs.size();
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::vector<int> buffer_of(ids.size(), -1);
    s.buffers.reserve(ids.size());
    std::vector<std::uint32_t> reads_here; // per buffer
    std::vector<std::uint32_t> reads_all;  // per buffer: inputs of the whole graph reading it
    std::vector<std::pair<int, int>> used; // (buffer, position), in position order
    used.reserve(args);
    auto add_buffer = [&](const graph::Tensor& named, const graph::Tensor* decl,
                          std::uint32_t reads) {
        s.buffers.push_back({named.name, tensor_bytes(decl)});
        reads_here.push_back(0);
        reads_all.push_back(reads);
        return static_cast<int>(s.buffers.size() - 1);
    };
    auto buffer = [&](int id, const graph::Tensor& named) {
        if (id == graph::Dependencies::k_unknown)
            return add_buffer(named, nullptr, 0);
        int& known = buffer_of[static_cast<std::size_t>(
            std::lower_bound(ids.begin(), ids.end(), id) - ids.begin())];
        if (known >= 0)
            return known;
        if (id < 0)
            return known = add_buffer(named, &g.inputs[static_cast<std::size_t>(-1 - id)], 0);
        auto [op, k] = deps.output(id);
        return known = add_buffer(
                   named, &g.ops[static_cast<std::size_t>(op)].outputs[static_cast<std::size_t>(k)],
                   deps.reads(id));
    };
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        const auto i = static_cast<std::size_t>(s.ops[p]);
        const auto& op = g.ops[i];
        auto& sub = s.subs[p];
        auto sources = deps.sources(i);
        sub.args.reserve(op.inputs.size() + op.outputs.size());
        for (std::size_t j = 0; j < op.inputs.size(); ++j) {
            int b = buffer(sources[j], op.inputs[j]);
            s.buffers[static_cast<std::size_t>(b)].last = static_cast<int>(p);
            ++reads_here[static_cast<std::size_t>(b)];
            used.emplace_back(b, static_cast<int>(p));
            sub.args.push_back({b, false, 0});
        }
        for (std::size_t k = 0; k < op.outputs.size(); ++k) {
            int b = buffer(deps.output_id(i, k), op.outputs[k]);
            s.buffers[static_cast<std::size_t>(b)].first = static_cast<int>(p);
            used.emplace_back(b, static_cast<int>(p));
            sub.args.push_back({b, true, 0});
        }
        sub.workspace = g.kernels[static_cast<std::size_t>(op.kernel_index)].meta.workspace.total();
    }
    // The uses by buffer, each buffer's in position order (a counting sort of `used`).
    Uses uses;
    uses.start.assign(s.buffers.size() + 1, 0);
    for (auto [b, p] : used)
        ++uses.start[static_cast<std::size_t>(b) + 1];
    for (std::size_t b = 0; b < s.buffers.size(); ++b)
        uses.start[b + 1] += uses.start[b];
    uses.positions.resize(used.size());
    {
        std::vector<std::size_t> next(uses.start.begin(), uses.start.end() - 1);
        for (auto [b, p] : used)
            uses.positions[next[static_cast<std::size_t>(b)]++] = p;
    }
    // Internal: produced here, read, and read only here (every read of it is one of ours).
    for (std::size_t i = 0; i < s.buffers.size(); ++i) {
        auto& b = s.buffers[i];
        b.arena = b.first >= 0 && reads_all[i] > 0 && reads_all[i] == reads_here[i];
        if (b.last < b.first)
            b.last = b.first;
    }
    SyncOrder clock = SyncOrder::full(ctx.graph, s);
    place_arena(clock, s, uses);
    place_workspaces(clock, s);
}

} // namespace

void memory_pass(const PlanContext& ctx, Segment& s) {
    segment_memory(ctx, s);
}

} // namespace skforge::fusion
