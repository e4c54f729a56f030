// Worker threads standing in for AI cores. Idle workers sleep on a futex (std::atomic::wait);
// barriers spin briefly, then sleep.
#include "skforge/runtime/device.hpp"

#include <algorithm>
#include <cstdlib>

namespace skforge::runtime {

namespace {

template <typename T> void wait_change(const std::atomic<T>& a, T seen) {
    for (int i = 0; i < 200; ++i) {
        if (a.load(std::memory_order_acquire) != seen)
            return;
        sk_cpu_relax();
    }
    while (a.load(std::memory_order_acquire) == seen)
        a.wait(seen, std::memory_order_acquire);
}

// Cube workers for a ration "aic:aiv" over `workers` workers; -1 when every worker is both.
int cube_workers(const std::string& ration, unsigned workers) {
    auto colon = ration.find(':');
    if (ration.empty() || colon == std::string::npos)
        return -1;
    int aic = std::atoi(ration.substr(0, colon).c_str());
    int aiv = std::atoi(ration.substr(colon + 1).c_str());
    if (aic <= 0 && aiv <= 0)
        return -1;
    if (aiv <= 0)
        return static_cast<int>(workers);
    if (aic <= 0)
        return 0;
    if (workers < 2)
        return -1;
    int cube = static_cast<int>(
        (workers * static_cast<unsigned>(aic) + static_cast<unsigned>(aic + aiv) / 2) /
        static_cast<unsigned>(aic + aiv));
    return std::clamp(cube, 1, static_cast<int>(workers) - 1);
}

} // namespace

Device::Device(unsigned workers) {
    workers = std::max(1u, workers);
    m_cores.resize(workers);
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

std::vector<sk_core> Device::cores(const std::string& ration) {
    unsigned n = static_cast<unsigned>(m_cores.size());
    int cube = cube_workers(ration, n);
    std::vector<sk_core> out(n);
    for (unsigned w = 0; w < n; ++w) {
        sk_core& c = out[w];
        c = sk_core{};
        c.worker = w;
        c.workers = n;
        c.kinds = cube < 0                          ? SK_CORE_ANY
                  : w < static_cast<unsigned>(cube) ? SK_CORE_CUBE
                                                    : SK_CORE_VECTOR;
        c.barrier = &Device::barrier;
        c.device = this;
    }
    for (std::uint32_t mask = 1; mask <= 3; ++mask) {
        std::uint32_t count = 0;
        for (auto& c : out)
            if ((c.kinds & mask) != 0)
                c.rank_in[mask] = count++;
        for (auto& c : out)
            c.count_in[mask] = count;
    }
    return out;
}

void Device::launch(const std::string& ration, const std::function<void(const sk_core&)>& fn) {
    m_cores = cores(ration);
    m_job = &fn;
    m_pending.store(workers(), std::memory_order_relaxed);
    ++m_launches;
    m_generation.fetch_add(1, std::memory_order_release);
    m_generation.notify_all();
    for (std::uint32_t left = m_pending.load(std::memory_order_acquire); left != 0;
         left = m_pending.load(std::memory_order_acquire))
        wait_change(m_pending, left);
}

void Device::work(unsigned index) {
    std::uint64_t seen = 0;
    for (;;) {
        wait_change(m_generation, seen);
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
    wait_change(b.generation, gen);
}

} // namespace skforge::runtime
