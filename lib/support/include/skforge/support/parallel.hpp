// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <thread>
#include <vector>

namespace skforge::support {

/// The cores to use for CPU-bound work (at least one).
inline unsigned cores() {
    return std::max(1u, std::thread::hardware_concurrency());
}

/// Runs `work(t)` for every t in [0, threads) on that many threads, this one included (it runs
/// t == 0), and returns when all are done. `work` must not throw.
template <class F> void on_threads(unsigned threads, F&& work) {
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t)
        pool.emplace_back([&work, t] { work(t); });
    work(0u);
    for (auto& t : pool)
        t.join();
}

} // namespace skforge::support
