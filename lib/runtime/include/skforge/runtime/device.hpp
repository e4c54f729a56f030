// SPDX-License-Identifier: Apache-2.0
#pragma once

// The host stand-in for an NPU: worker threads for AI cores, launches, and the barriers a
// SuperKernel's sub-kernels synchronise with.
#include "skforge_host_kernel.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace skforge::runtime {

/// Worker threads that stay for the device's life. A launch hands every worker the same
/// function and returns when all of them finished it, like one task on the device.
///
/// Like an Ascend device, which has twice as many vector cores as cube cores, a third of the
/// workers (at least one) are cube cores and the rest vector cores; with one worker it is both.
/// A kernel's blocks run on the workers of its kind, launched alone or inside a SuperKernel.
class Device {
  public:
    /// Starts `workers` threads (at least 1).
    explicit Device(unsigned workers);
    ~Device();
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    unsigned workers() const { return static_cast<unsigned>(m_threads.size()); }

    /// Runs `fn` on every worker and waits for all of them.
    void launch(const std::function<void(const sk_core&)>& fn);

    /// Launches so far.
    std::uint64_t launches() const { return m_launches; }

    /// The sk_core of every worker.
    const std::vector<sk_core>& cores() const { return m_cores; }

  private:
    struct Barrier {
        std::atomic<std::uint32_t> count{0};
        std::atomic<std::uint32_t> generation{0};
    };
    static void barrier(const sk_core* core, std::uint32_t mask);
    void work(unsigned index);

    std::vector<std::thread> m_threads;
    std::vector<sk_core> m_cores;
    const std::function<void(const sk_core&)>* m_job = nullptr;
    std::atomic<std::uint64_t> m_generation{0};
    std::atomic<std::uint32_t> m_pending{0};
    std::atomic<bool> m_stop{false};
    Barrier m_barriers[4];
    std::uint64_t m_launches = 0;
};

} // namespace skforge::runtime
