// SPDX-License-Identifier: Apache-2.0
#pragma once

// Happens-before between the sub-kernels of a SuperKernel, from its synchronisation only, shared
// by the barrier pass (which adds barriers where a dependency is not yet ordered) and the memory
// pass (which lets two arena tensors share bytes only when one's uses are ordered before the
// other's producer).
//
// Cores run the sub-kernels in plan order, but a core does not wait for the others unless told
// to: two sub-kernels with no barrier or flag between them run at the same time on different
// cores. So x is complete on every core before any core starts y only if
//  - a barrier at b (x < b <= y) holds every core that runs x and every core that runs y (a
//    vector barrier covers vector-only kernels, a cube barrier cube-only ones, a full barrier
//    all), or
//  - y waits on a flag (early-start or stream event) set by a sub-kernel at or after x whose
//    cores include all of x's (every core of the setter's kind sets it after running, in order,
//    everything before the setter),
// or a chain of these. One bitset per position holds what is complete at its start.
#include "skforge/fusion/plan.hpp"

#include <cstdint>
#include <vector>

namespace skforge::fusion {

class SyncOrder {
  public:
    /// Core bits a kernel runs on: vector-only 1, cube-only 2, anything else 3.
    static unsigned kind_of(const graph::Graph& g, const Segment& s, std::size_t p);
    /// Bits of a barrier kind, and the narrowest barrier kind holding `bits`.
    static unsigned bits(BarrierKind k);
    static BarrierKind kind(unsigned bits);

    /// Prepares the order of `s` (barriers, early-start and event pairs as they are now).
    SyncOrder(const graph::Graph& g, const Segment& s);

    /// Computes position p; positions are advanced in order 0, 1, ...
    void advance(std::size_t p);
    /// Makes the barrier at the last advanced position at least as wide as `bits` and
    /// recomputes it.
    void widen_barrier(std::size_t p, unsigned bits);
    /// True when x is complete on every core before any core starts y (both advanced).
    bool before(std::size_t x, std::size_t y) const;
    /// The positions x < y for which before(x, y) holds, as a bitset of words() words.
    const std::uint64_t* complete_before(std::size_t y) const { return row(y); }
    std::size_t words() const { return m_words; }
    /// The barriers, by position, as widened.
    std::vector<Barrier> barriers() const;

    /// A whole order, every position advanced.
    static SyncOrder full(const graph::Graph& g, const Segment& s);

  private:
    std::uint64_t* row(std::size_t p) { return m_done.data() + p * m_words; }
    const std::uint64_t* row(std::size_t p) const { return m_done.data() + p * m_words; }
    void apply_barrier(std::size_t p);
    void compute(std::size_t p);

    std::size_t m_words;
    std::vector<unsigned> m_mask;
    std::vector<unsigned> m_barrier; ///< bits of the barrier before each position, 0: none
    std::vector<std::vector<int>> m_waits_on;
    std::vector<std::uint64_t> m_complete[4];
    std::vector<std::uint64_t> m_done;
};

} // namespace skforge::fusion
