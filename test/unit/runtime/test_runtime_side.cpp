// SPDX-License-Identifier: Apache-2.0
// The runtime's operators beside the cores: a program whose prefetches notify and wait for each
// other on threads of their own streams, and the refusal of a wait nothing notifies.
#include "skforge/runtime/package.hpp"
#include "skforge/support/error.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace skforge;

namespace {

// A program of two prefetches of `w`: the first (stream 2) notifies event 1, the second
// (stream 3) waits for `waited`.
std::string program(int waited) {
    auto op = [](const char* name, int stream, const std::string& notify, const std::string& wait) {
        return std::string(R"({"name": ")") + name +
               R"(", "type": "Prefetch", "kind": "prefetch", "stream": )" + std::to_string(stream) +
               R"(, "library": "", "symbol": "", "block_dim": 1, "workspace": 0, "core_mask": 3,
                  "inputs": [0], "outputs": [], "segment": -1, "notify": )" +
               notify + R"(, "wait": )" + wait + "}";
    };
    return R"({"format": "skforge-host-program", "version": 1, "abi_version": 1, "graph": "g",
        "tensors": [{"name": "w", "dtype": "float32", "shape": [4096], "graph_input": true,
                     "graph_output": false, "producer": ""}],
        "ops": [)" +
           op("p1", 2, "[1]", "[]") + ", " + op("p2", 3, "[]", "[" + std::to_string(waited) + "]") +
           R"(], "segments": [], "steps": [{"op": 0}, {"op": 1}]})";
}

} // namespace

TEST_CASE("runtime: prefetches on their own streams notify and wait, fused and op by op",
          "[runtime][side]") {
    test::ScopedTempDir dir;
    test::write_text(dir / "host/program.json", program(1));
    auto pkg = runtime::Package::open(dir.path());
    REQUIRE(pkg.ops().size() == 2);
    CHECK(pkg.ops()[0].kind == runtime::OpKind::prefetch);
    CHECK(pkg.ops()[0].notify == std::vector<std::int64_t>{1});
    CHECK(pkg.ops()[1].wait == std::vector<std::int64_t>{1});
    CHECK(pkg.ops()[1].stream == 3);
    runtime::Device device(2);
    runtime::Tensors tensors(pkg.tensors());
    runtime::Runner runner(pkg, device, tensors);
    for (int i = 0; i < 20; ++i)        // flags are reset each run: a second run waits again
        CHECK(runner.run_fused() == 0); // no device launches: both ran beside the cores
    CHECK(runner.run_unfused() == 0);
    runner.drop_side_waits(true);
    CHECK(runner.run_fused() == 0);
}

TEST_CASE("runtime: a wait no operator notifies is refused before anything runs",
          "[runtime][side]") {
    test::ScopedTempDir dir;
    test::write_text(dir / "host/program.json", program(9));
    CHECK_THROWS_WITH(runtime::Package::open(dir.path()),
                      Catch::Contains("operator 'p2' waits for event 9, which no operator "
                                      "notifies"));
}
