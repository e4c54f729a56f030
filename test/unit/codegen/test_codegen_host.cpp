// SPDX-License-Identifier: Apache-2.0
#include "graph_fixture.hpp"
#include "skforge/codegen/host.hpp"
#include "skforge/support/error.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace skforge;
using test::header;

namespace {

std::string op(const std::string& name, const std::string& kernel, const std::string& inputs,
               const std::string& extra = "", const std::string& dtype = "float16") {
    return "  - {name: " + name + ", type: T" + kernel + ", kernel: {json_path: kernels/" + kernel +
           ".json}, inputs: [" + inputs + "], outputs: [{name: " + name +
           ", shape: [2, 8], dtype: " + dtype + "}]" + (extra.empty() ? "" : ", " + extra) + "}\n";
}

fusion::Plan plan(test::GraphFixture& f, const std::string& yaml) {
    REQUIRE(f.load(yaml));
    auto p = fusion::make_plan(f.graph, f.diags);
    REQUIRE_FALSE(f.diags.has_errors());
    return p;
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

} // namespace

TEST_CASE("host codegen: the plan's barriers become barrier calls of the same width",
          "[codegen][host]") {
    test::GraphFixture f;
    // a(vec) -> b(vec): vector; c(cube) <- b: full; d(cube) <- c: cube.
    auto p = plan(f, header() + op("a", "vec", "x", "scope: s") + op("b", "vec", "a", "scope: s") +
                         op("c", "cube", "b", "scope: s") + op("d", "cube", "c", "scope: s"));
    REQUIRE(p.segments.size() == 1);
    std::string src = codegen::host_entry_source(f.graph, p.segments[0]);
    CHECK(count(src, "core->barrier(core, 1); // vector barrier") == 1);
    CHECK(count(src, "core->barrier(core, 3); // full barrier") == 1);
    CHECK(count(src, "core->barrier(core, 2); // cube barrier") == 1);
    // Each sub-kernel runs on its kind of core, with its shapes as constants.
    CHECK(count(src, "sk_run_blocks(core, 1u, vec, ctx);") == 2);
    CHECK(count(src, "sk_run_blocks(core, 2u, cube, ctx);") == 2);
    CHECK_THAT(src, Catch::Contains("extern \"C\" SK_EXPORT void sk_entry_s(const sk_core* core"));
    CHECK(codegen::host_version_script(p.segments[0]) ==
          "{\n  global: sk_entry_s;\n  local: *;\n};\n");
}

TEST_CASE("host codegen: early-start pairs and event pairs become flags counted per kind",
          "[codegen][host]") {
    test::GraphFixture f;
    // early-start=1: b waits for a (vector setter) through sync[0]. Stream 1's c sends event 5
    // to d on stream 0.
    auto p = plan(f, header("scopes: {s: \"early-start=1\"}\n") + op("a", "vec", "x", "scope: s") +
                         op("b", "vec", "a", "scope: s") +
                         op("c", "cube", "x", "scope: s, stream_id: 1, send_event_list: [5]") +
                         op("d", "vec", "b, c", "scope: s, recv_event_list: [5]"));
    REQUIRE(p.segments.size() == 1);
    const auto& s = p.segments[0];
    std::string src = codegen::host_entry_source(f.graph, s);
    auto layout = codegen::host_layout(s);
    CHECK(layout.sync_slots == s.early_start_pairs.size());
    CHECK_THAT(src, Catch::Contains("sk_flag_arrive(&sync[0]); // early start of [1]"));
    CHECK_THAT(src, Catch::Contains(
                        "sk_flag_wait(&sync[0], core->count_in[1]); // early start after [0]"));
    REQUIRE(s.event_slots.size() == 1);
    std::string slot = std::to_string(s.event_slots[0].second);
    CHECK_THAT(src,
               Catch::Contains("sk_flag_arrive(sk_event_flag(params, " + slot + ")); // event 5"));
    // The receiver waits for every cube worker, since the sender is a cube kernel.
    CHECK_THAT(src, Catch::Contains("sk_flag_wait(sk_event_flag(params, " + slot +
                                    "), core->count_in[2]); // event 5 from [2]"));
}

TEST_CASE("host codegen: arena tensors point into the workspace, others into the parameters",
          "[codegen][host]") {
    test::GraphFixture f;
    auto p = plan(f, header() + op("a", "vec", "x", "scope: s") + op("b", "vec", "a", "scope: s"));
    const auto& s = p.segments[0];
    std::string src = codegen::host_entry_source(f.graph, s);
    CHECK_THAT(src, Catch::Contains("{ws + 0, 1, 2, {2, 8}}, // a (arena)"));
    CHECK_THAT(src, Catch::Contains("{sk_param(params, 0), 1, 1, {4}}, // x"));
    auto layout = codegen::host_layout(s);
    CHECK(layout.workspace_bytes >= s.arena_peak);
    CHECK(layout.sub_workspace.size() == 2);
}

TEST_CASE("host program: each segment launches where its first operator is", "[codegen][host]") {
    test::GraphFixture f;
    // The AICPU operator cuts scope s in two; it runs alone between the two SuperKernels.
    auto p = plan(f, header() + op("a", "vec", "x", "scope: s") +
                         op("cut", "aicpu", "a", "scope: s") + op("b", "vec", "cut", "scope: s"));
    REQUIRE(p.segments.size() == 2);
    codegen::HostFiles files;
    files.kernel_library.assign(f.graph.kernels.size(), "lib.so");
    files.kernel_symbol.assign(f.graph.kernels.size(), "sym");
    files.segment_library = {"s0.so", "s1.so"};
    auto j = nlohmann::json::parse(codegen::host_program_json(f.graph, p, files));
    CHECK(j["steps"] == nlohmann::json::parse(R"([{"segment":0},{"op":1},{"segment":1}])"));
    CHECK(j["ops"][1]["segment"] == -1);
    CHECK(j["ops"][0]["core_mask"] == 1);
    CHECK(j["tensors"][0]["graph_input"] == true);
    CHECK(j["tensors"][3]["graph_output"] == true);
    CHECK(j["segments"][0]["entry"] == "sk_entry_" + p.segments[0].name);
}

TEST_CASE("host codegen refuses a dtype the host ABI lacks, naming operator and tensor",
          "[codegen][host]") {
    test::GraphFixture f;
    auto p = plan(f, header() + op("a", "vec", "x", "scope: s", "complex64") +
                         op("b", "vec", "a", "scope: s"));
    CHECK_THROWS_WITH(codegen::host_entry_source(f.graph, p.segments[0]),
                      Catch::Contains("operator 'a': tensor 'a' has dtype 'complex64'"));
}
