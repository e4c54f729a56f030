#include "graph_fixture.hpp"

#include <catch2/catch.hpp>

using namespace skforge;
using test::header;
using test::op;

TEST_CASE("a graph loads with its kernels, scopes and options", "[graph][loader]") {
    test::GraphFixture f;
    REQUIRE(f.load(
        header("super_kernel_optimize_options: {split_mode: 2, dcci_before_kernel_start: [Add]}\n"
               "scopes: {s1: \"early-start=1\"}\n") +
        op("a", "vec", "x", "scope: s1, stream_id: 0") + op("b", "cube", "a_out", "scope: s2")));
    CHECK(f.graph.ops.size() == 2);
    CHECK(f.graph.kernels.size() == 2);
    CHECK(f.graph.ops[1].kernel_index == 1);
    REQUIRE(f.graph.scopes.size() == 2);
    CHECK(f.graph.scopes[0].options == "early-start=1");
    CHECK(f.graph.scopes[1].name == "s2"); // declared implicitly by its operator
    CHECK(graph::flatten_graph_options(f.graph.options) ==
          "dcci_before_kernel_start=Add:split_mode=2");
}

TEST_CASE("YAML syntax errors name the line and column", "[graph][loader]") {
    test::GraphFixture f;
    CHECK_FALSE(f.load("name: t\nops:\n  - {name: a, type: [\n"));
    CHECK_THAT(f.first(),
               Catch::StartsWith("g.yaml:") && Catch::Contains("error: YAML syntax error"));
}

TEST_CASE("unknown keys are errors at their position, with the known keys", "[graph][loader]") {
    test::GraphFixture f;
    CHECK_FALSE(f.load(
        header() + "  - {name: a, type: T, stream: 1, kernel: {json_path: kernels/vec.json}}\n"));
    CHECK_THAT(f.first(), Catch::StartsWith("g.yaml:6:") &&
                              Catch::Contains("unknown key 'stream' in an operator") &&
                              Catch::Contains("known keys: name, type"));
}

TEST_CASE("missing and unreadable kernel metadata is reported at the operator", "[graph][loader]") {
    test::GraphFixture f;
    CHECK_FALSE(f.load(header() +
                       "  - {name: a, type: T, kernel: {json_path: kernels/missing.json}}\n" +
                       "  - {name: b, type: T}\n"));
    CHECK_THAT(f.first(), Catch::Contains("needs kernel.json_path"));
    bool missing = false;
    for (const auto& d : f.diags.items())
        missing = missing || d.message.find("cannot read kernel metadata") != std::string::npos;
    CHECK(missing);
}

TEST_CASE("a kernel binary must match the sha256 in its metadata", "[graph][loader]") {
    test::GraphFixture f;
    test::write_text(f.dir / "kernels/k.o", "binary");
    test::write_text(f.dir / "kernels/k.json",
                     R"({"kernelName":"k","magic":"RT_DEV_BINARY_MAGIC_ELF","sha256":")" +
                         std::string(64, 'a') + "\"}");
    CHECK_FALSE(f.load(
        header() +
        "  - {name: a, type: T, kernel: {json_path: kernels/k.json, bin_path: kernels/k.o}}\n"));
    CHECK_THAT(f.first(), Catch::Contains("does not match the sha256"));
}

TEST_CASE("outputs need a shape and a dtype", "[graph][loader]") {
    test::GraphFixture f;
    CHECK_FALSE(f.load(
        header() +
        "  - {name: a, type: T, kernel: {json_path: kernels/vec.json}, outputs: [{name: y}]}\n"));
    CHECK_THAT(f.first(), Catch::Contains("output 'y' needs a shape and a dtype"));
}
