// SPDX-License-Identifier: Apache-2.0
// Happens-before from synchronisation only: see sync_order.hpp.
#include "sync_order.hpp"

#include "skforge/kernel/kernel_meta.hpp"

#include <algorithm>

namespace skforge::fusion {

unsigned SyncOrder::kind_of(const graph::Graph& g, const Segment& s, std::size_t p) {
    auto t =
        g.kernels[static_cast<std::size_t>(g.ops[static_cast<std::size_t>(s.ops[p])].kernel_index)]
            .meta.kernel_type;
    return !t ? 3u : kernel::is_vector_only(*t) ? 1u : kernel::is_cube_only(*t) ? 2u : 3u;
}

unsigned SyncOrder::bits(BarrierKind k) {
    return k == BarrierKind::vector ? 1u : k == BarrierKind::cube ? 2u : 3u;
}

BarrierKind SyncOrder::kind(unsigned b) {
    return b == 1u ? BarrierKind::vector : b == 2u ? BarrierKind::cube : BarrierKind::full;
}

SyncOrder::SyncOrder(const graph::Graph& g, const Segment& s)
    : m_words((s.ops.size() + 63) / 64), m_mask(s.ops.size()), m_barrier(s.ops.size(), 0),
      m_waits_on(s.ops.size()), m_done(s.ops.size() * m_words, 0) {
    for (std::size_t p = 0; p < s.ops.size(); ++p)
        m_mask[p] = kind_of(g, s, p);
    for (const auto& b : s.barriers)
        if (b.before >= 0 && static_cast<std::size_t>(b.before) < s.ops.size())
            m_barrier[static_cast<std::size_t>(b.before)] |= bits(b.kind);
    for (const auto& pairs : {s.early_start_pairs, s.event_pairs})
        for (const auto& [from, to] : pairs)
            m_waits_on[static_cast<std::size_t>(to)].push_back(from);
    for (auto& c : m_complete)
        c.assign(m_words, 0);
}

SyncOrder SyncOrder::full(const graph::Graph& g, const Segment& s) {
    SyncOrder o(g, s);
    for (std::size_t p = 0; p < s.ops.size(); ++p)
        o.advance(p);
    return o;
}

void SyncOrder::apply_barrier(std::size_t p) {
    unsigned k = m_barrier[p];
    if (k == 0)
        return;
    auto& c = m_complete[k];
    for (std::size_t x = 0; x < p; ++x)
        if ((m_mask[x] & ~k) == 0) {
            c[x / 64] |= std::uint64_t{1} << (x % 64);
            const std::uint64_t* r = row(x);
            for (std::size_t w = 0; w < m_words; ++w)
                c[w] |= r[w];
        }
    if (k == 3)
        for (unsigned narrower : {1u, 2u})
            for (std::size_t w = 0; w < m_words; ++w)
                m_complete[narrower][w] |= c[w];
}

void SyncOrder::compute(std::size_t p) {
    std::uint64_t* done = row(p);
    std::fill(done, done + m_words, 0);
    for (unsigned k = 1; k <= 3; ++k)
        if ((m_mask[p] & ~k) == 0)
            for (std::size_t w = 0; w < m_words; ++w)
                done[w] |= m_complete[k][w];
    for (int from : m_waits_on[p]) {
        auto f = static_cast<std::size_t>(from);
        for (std::size_t x = 0; x <= f; ++x)
            if ((m_mask[x] & ~m_mask[f]) == 0) {
                done[x / 64] |= std::uint64_t{1} << (x % 64);
                const std::uint64_t* r = row(x);
                for (std::size_t w = 0; w < m_words; ++w)
                    done[w] |= r[w];
            }
    }
}

void SyncOrder::advance(std::size_t p) {
    apply_barrier(p);
    compute(p);
}

void SyncOrder::widen_barrier(std::size_t p, unsigned b) {
    unsigned now = m_barrier[p] | b;
    // A barrier holds the cores of one kind, or all: two kinds together need a full one.
    m_barrier[p] = now == 1u || now == 2u ? now : 3u;
    apply_barrier(p);
    compute(p);
}

bool SyncOrder::before(std::size_t x, std::size_t y) const {
    return x < y && (row(y)[x / 64] >> (x % 64) & 1u) != 0;
}

std::vector<Barrier> SyncOrder::barriers() const {
    std::vector<Barrier> out;
    for (std::size_t p = 0; p < m_barrier.size(); ++p)
        if (m_barrier[p] != 0)
            out.push_back({static_cast<int>(p), kind(m_barrier[p])});
    return out;
}

} // namespace skforge::fusion
