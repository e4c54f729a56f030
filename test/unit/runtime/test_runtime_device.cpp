// SPDX-License-Identifier: Apache-2.0
#include "skforge/runtime/device.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <vector>

using skforge::runtime::Device;

TEST_CASE("device: a third of the workers are cube cores, the rest vector; one worker is both",
          "[runtime][device]") {
    Device three(3);
    const auto& c = three.cores();
    REQUIRE(c.size() == 3);
    CHECK(c[0].kinds == SK_CORE_CUBE);
    CHECK(c[1].kinds == SK_CORE_VECTOR);
    CHECK(c[2].kinds == SK_CORE_VECTOR);
    CHECK(c[0].count_in[SK_CORE_VECTOR] == 2);
    CHECK(c[0].count_in[SK_CORE_CUBE] == 1);
    CHECK(c[0].count_in[SK_CORE_ANY] == 3);
    CHECK(c[2].rank_in[SK_CORE_VECTOR] == 1);
    CHECK(c[2].rank_in[SK_CORE_ANY] == 2);
    Device one(1);
    CHECK(one.cores()[0].kinds == SK_CORE_ANY);
    CHECK(one.cores()[0].count_in[SK_CORE_CUBE] == 1);
    Device zero(0);
    CHECK(zero.workers() == 1);
}

TEST_CASE("device: a launch runs on every worker and returns when all finished",
          "[runtime][device]") {
    Device d(4);
    std::atomic<int> runs{0};
    std::vector<int> seen(4, 0);
    for (int i = 0; i < 500; ++i)
        d.launch([&](const sk_core& core) {
            ++seen[core.worker];
            runs.fetch_add(1, std::memory_order_relaxed);
        });
    CHECK(runs.load() == 2000);
    CHECK(seen == std::vector<int>(4, 500));
    CHECK(d.launches() == 500);
}

TEST_CASE("device: a barrier holds every worker of its kind until all arrived",
          "[runtime][device]") {
    Device d(5); // 2 cube, 3 vector
    for (std::uint32_t mask : {1u, 2u, 3u}) {
        constexpr int k_rounds = 300;
        std::vector<std::atomic<int>> arrived(k_rounds);
        std::atomic<int> early{0};
        d.launch([&](const sk_core& core) {
            for (int r = 0; r < k_rounds; ++r) {
                if (core.kinds & mask)
                    arrived[static_cast<std::size_t>(r)].fetch_add(1);
                core.barrier(&core, mask); // a no-op for workers of the other kind
                if ((core.kinds & mask) && arrived[static_cast<std::size_t>(r)].load() !=
                                               static_cast<int>(core.count_in[mask]))
                    early.fetch_add(1);
            }
        });
        INFO("mask " << mask);
        CHECK(early.load() == 0);
    }
}

TEST_CASE("flags: a waiter sees every write its setters made before arriving",
          "[runtime][device]") {
    Device d(3); // 1 cube (setter), 2 vector (waiters)
    for (int round = 0; round < 200; ++round) {
        std::vector<int> data(64, 0);
        std::uint64_t flag = 0;
        std::atomic<int> wrong{0};
        d.launch([&](const sk_core& core) {
            if (core.kinds & SK_CORE_CUBE) {
                for (auto& v : data)
                    v = round + 1;
                sk_flag_arrive(&flag);
            }
            if (core.kinds & SK_CORE_VECTOR) {
                sk_flag_wait(&flag, core.count_in[SK_CORE_CUBE]);
                for (int v : data)
                    if (v != round + 1)
                        wrong.fetch_add(1);
            }
        });
        REQUIRE(wrong.load() == 0);
    }
}

TEST_CASE("blocks: each block of a kernel runs once, on a worker of its kind",
          "[runtime][device]") {
    Device d(4); // 1 cube, 3 vector
    for (std::uint32_t mask : {1u, 2u, 3u}) {
        std::vector<std::atomic<int>> runs(37);
        std::atomic<int> wrong_kind{0};
        struct State {
            std::vector<std::atomic<int>>* runs;
            std::atomic<int>* wrong;
            std::uint32_t mask;
        } state{&runs, &wrong_kind, mask};
        static thread_local State* current = nullptr;
        d.launch([&](const sk_core& core) {
            current = &state;
            sk_kernel_ctx ctx{SK_HOST_ABI_VERSION, 0, 37, 0, 0, 0, nullptr, nullptr, 0};
            sk_run_blocks(
                &core, mask,
                [](const sk_kernel_ctx* c) {
                    (*current->runs)[c->block_idx].fetch_add(1);
                    if ((c->core_kind & current->mask) == 0 || c->block_num != 37)
                        current->wrong->fetch_add(1);
                },
                ctx);
        });
        INFO("mask " << mask);
        for (auto& r : runs)
            CHECK(r.load() == 1);
        CHECK(wrong_kind.load() == 0);
    }
}
