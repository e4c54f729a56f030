// SPDX-License-Identifier: Apache-2.0
// Worker threads standing in for AI cores. Idle workers sleep on a futex (std::atomic::wait);
// barriers spin briefly, then sleep.
#include "skforge/runtime/device.hpp"

#include <algorithm>
#include <cstdlib>

namespace skforge::runtime {

namespace {

// Spins `spins` times, then yields the CPU `yields` times, then sleeps on the futex: cores
// inside a SuperKernel spin on flags as the hardware does; idle workers must not burn a CPU.
template <typename T> void wait_change(const std::atomic<T>& a, T seen, int spins, int yields) {
    for (int i = 0; i < spins; ++i) {
        if (a.load(std::memory_order_acquire) != seen)
            return;
        sk_cpu_relax();
    }
    for (int i = 0; i < yields; ++i) {
        if (a.load(std::memory_order_acquire) != seen)
            return;
        std::this_thread::yield();
    }
    while (a.load(std::memory_order_acquire) == seen)
        a.wait(seen, std::memory_order_acquire);
}

} // namespace

Device::Device(unsigned workers) {
    workers = std::max(1u, workers);
    unsigned cube = workers == 1 ? 0 : std::max(1u, (workers + 1) / 3);
    m_cores.resize(workers);
    for (unsigned w = 0; w < workers; ++w) {
        sk_core& c = m_cores[w];
        c.worker = w;
        c.workers = workers;
        c.kinds = workers == 1 ? SK_CORE_ANY : w < cube ? SK_CORE_CUBE : SK_CORE_VECTOR;
        c.barrier = &Device::barrier;
        c.device = this;
    }
    for (std::uint32_t mask = 1; mask <= 3; ++mask) {
        std::uint32_t count = 0;
        for (auto& c : m_cores)
            if ((c.kinds & mask) != 0)
                c.rank_in[mask] = count++;
        for (auto& c : m_cores)
            c.count_in[mask] = count;
    }
    for (unsigned i = 0; i < workers; ++i)
        m_threads.emplace_back([this, i] { work(i); });
}

Device::~Device() {
    m_stop.store(true, std::memory_order_release);
    m_generation.fetch_add(1, std::memory_order_release);
    m_generation.notify_all();
    for (auto& t : m_threads)
        t.join();
}

void Device::launch(const std::function<void(const sk_core&)>& fn) {
    m_job = &fn;
    m_pending.store(workers(), std::memory_order_relaxed);
    ++m_launches;
    m_generation.fetch_add(1, std::memory_order_release);
    m_generation.notify_all();
    for (std::uint32_t left = m_pending.load(std::memory_order_acquire); left != 0;
         left = m_pending.load(std::memory_order_acquire))
        wait_change(m_pending, left, 200, 0);
}

void Device::work(unsigned index) {
    std::uint64_t seen = 0;
    for (;;) {
        wait_change(m_generation, seen, 2000, 0);
        seen = m_generation.load(std::memory_order_acquire);
        if (m_stop.load(std::memory_order_acquire))
            return;
        (*m_job)(m_cores[index]);
        if (m_pending.fetch_sub(1, std::memory_order_acq_rel) == 1)
            m_pending.notify_one();
    }
}

void Device::barrier(const sk_core* core, std::uint32_t mask) {
    if ((core->kinds & mask) == 0)
        return; // not one of the cores this barrier is for
    auto* self = static_cast<Device*>(core->device);
    Barrier& b = self->m_barriers[mask & 3u];
    std::uint32_t gen = b.generation.load(std::memory_order_acquire);
    if (b.count.fetch_add(1, std::memory_order_acq_rel) + 1 == core->count_in[mask & 3u]) {
        b.count.store(0, std::memory_order_relaxed);
        b.generation.fetch_add(1, std::memory_order_release);
        b.generation.notify_all();
        return;
    }
    wait_change(b.generation, gen, 2000, 2000);
}

} // namespace skforge::runtime
