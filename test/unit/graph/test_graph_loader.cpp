// SPDX-License-Identifier: Apache-2.0
#include "graph_dump.hpp"
#include "graph_fixture.hpp"
#include "skforge/graph/yaml_doc.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

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

namespace {

std::string crlf(const std::string& text) {
    std::string out;
    for (char c : text)
        out += c == '\n' ? std::string("\r\n") : std::string(1, c);
    return out;
}

} // namespace

TEST_CASE("a graph parsed in pieces is the graph parsed whole, errors included",
          "[graph][loader]") {
    std::string ops =
        op("a", "vec", "x", "scope: s1, stream_id: 1, send_event_list: [3]") +
        "  # a comment between operators\n\n" +
        op("b", "cube", "a_out", "scope: s2, recv_event_list: [3], task_type: dynamic") +
        "  - name: c\n    type: Add\n    kernel: {json_path: kernels/vec.json}\n"
        "    inputs: [b_out]\n    outputs:\n      - {name: c_out, shape: [4], dtype: int8}\n" +
        op("d", "vec", "c_out", "stream: 2") +                      // unknown key
        "  - {name: e, type: T, stream_id: x, inputs: [d_out]}\n" + // bad integer, no kernel
        op("f", "vec", "e_out", "engine: tbe, no_fusion: maybe");   // bad boolean
    for (const std::string& text :
         {header("scopes: {s1: \"early-start=1\"}\n") + ops + "tail: 1\n", header() + ops,
          header() + ops + "ops:\n  - {name: z, type: T}\n", // a second list replaces the first
          std::string("name: g\nops:\n- {name: a, type: T, kernel: {json_path: k.json}}\n") +
              "- {name: b, type: T, kernel: {json_path: k.json}, inputs: [a_out]}\n",
          crlf(header() + ops),                    // Windows line ends
          header() + "  - {name: a, type: [\n"}) { // a syntax error
        INFO(text);
        // The pieces do parse (so the comparison is between the two paths).
        if (text.find("type: [") == std::string::npos) {
            auto split = graph::YamlDoc::split(support::share_text(text), "ops", 1);
            REQUIRE(split);
            graph::YamlDoc piece;
            for (std::size_t i = 0; i < split->pieces.size(); ++i) {
                CHECK(graph::YamlDoc::parse_piece(*split, i, piece));
                CHECK(piece.root().size() == split->pieces[i].items); // the items counted
            }
        }
        std::string whole = test::dump_graph(text, 0);
        for (std::size_t piece_bytes : {1u, 50u, 200u})
            CHECK(test::dump_graph(text, piece_bytes) == whole);
    }
}

TEST_CASE("an operator's kernel paths may be written at its top level", "[graph][loader]") {
    graph::Diagnostics diags;
    auto g = graph::parse_graph_text(
        "name: t\nops:\n  - {name: a, type: T, json_path: k/a.json, bin_path: k/a.o, "
        "source_path: k/a.cpp}\n",
        "g.yaml", diags);
    REQUIRE_FALSE(diags.has_errors());
    REQUIRE(g.ops.size() == 1);
    CHECK(g.ops[0].kernel.json_path == "k/a.json");
    CHECK(g.ops[0].kernel.bin_path == "k/a.o");
    CHECK(g.ops[0].kernel.source_path == "k/a.cpp");
    CHECK(g.ops[0].kernel.where.column == 75); // the last path written
}

TEST_CASE("diagnostics gathered elsewhere are appended in order, errors counted",
          "[graph][diagnostics]") {
    graph::Diagnostics all, other;
    all.warning({"a.yaml", 1, 1}, "first");
    other.error({"b.yaml", 2, 3}, "second", "hint");
    other.warning({"b.yaml", 4, 5}, "third");
    all.append(other);
    REQUIRE(all.items().size() == 3);
    CHECK(all.items()[1].message == "second");
    CHECK(all.items()[2].message == "third");
    CHECK(all.error_count() == 1);
    CHECK(all.has_errors());
    CHECK_THAT(all.format(), Catch::Contains("b.yaml:2:3: error: second (hint)"));
}

TEST_CASE("scopes used but not declared are added in order of first use, at that operator",
          "[graph][loader]") {
    std::string text = "name: t\nscopes: {s2: \"early-start=1\"}\nops:\n";
    int line = 4;
    std::vector<std::pair<std::string, int>> first_use;
    for (std::string scope : {"s1", "s1", "s2", "s1", "", "s3", "s1", "s4", "s3"}) {
        text += "  - {name: op" + std::to_string(line) + ", type: T, json_path: k.json" +
                (scope.empty() ? "" : ", scope: " + scope) + "}\n";
        if (!scope.empty() && scope != "s2" &&
            std::none_of(first_use.begin(), first_use.end(),
                         [&](const auto& u) { return u.first == scope; }))
            first_use.emplace_back(scope, line);
        ++line;
    }
    for (std::size_t piece_bytes : {0u, 1u, 100u}) {
        INFO("piece bytes " << piece_bytes);
        graph::Diagnostics diags;
        auto g = graph::parse_graph_text(text, "g.yaml", diags, piece_bytes);
        REQUIRE_FALSE(diags.has_errors());
        REQUIRE(g.scopes.size() == 1 + first_use.size());
        CHECK(g.scopes[0].name == "s2");
        CHECK(g.scopes[0].options == "early-start=1");
        for (std::size_t i = 0; i < first_use.size(); ++i) {
            CHECK(g.scopes[i + 1].name == first_use[i].first);
            CHECK(g.scopes[i + 1].options.empty());
            CHECK(g.scopes[i + 1].where.line == first_use[i].second);
        }
    }
}

TEST_CASE("a tensor's format is one of GE's names, reported where it is written",
          "[graph][loader]") {
    test::GraphFixture f;
    REQUIRE(f.load("name: t\nnpu_arch: dav-2201\ninputs: [{name: x, shape: [4, 16], dtype: "
                   "bfloat16, format: FRACTAL_NZ}]\nops:\n" +
                   op("a", "vec", "x")));
    CHECK(f.graph.inputs[0].format == "FRACTAL_NZ");
    CHECK(f.graph.ops[0].outputs[0].format.empty()); // not given: ND
    test::GraphFixture bad;
    CHECK_FALSE(bad.load("name: t\nnpu_arch: dav-2201\ninputs: [{name: x, shape: [4], dtype: "
                         "float16, format: nz}]\nops:\n" +
                         op("a", "vec", "x")));
    CHECK_THAT(bad.first(), Catch::StartsWith("g.yaml:3:") &&
                                Catch::Contains("format 'nz' is not one of GE's formats"));
}

TEST_CASE("loader: kind and tiling_for, each refused where it does not belong",
          "[graph][loader][side]") {
    auto first = [](const std::string& yaml) {
        graph::Diagnostics d;
        graph::parse_graph_text(yaml, "g.yaml", d);
        return d.items().empty() ? std::string() : graph::format_diagnostic(d.items().front());
    };
    const std::string head = "inputs: [{name: x, shape: [4], dtype: float16}]\nops:\n";
    CHECK_THAT(first(head + "  - {name: a, type: A, json_path: a.json, kind: gpu}\n"),
               Catch::Contains("g.yaml:3:49: error: kind 'gpu' is unknown") &&
                   Catch::Contains("kernel, aicpu_tiling or prefetch"));
    CHECK_THAT(first(head + "  - {name: t, type: T, json_path: t.json, kind: aicpu_tiling}\n"),
               Catch::Contains("g.yaml:3:49: error: aicpu_tiling operator 't' needs tiling_for"));
    CHECK_THAT(first(head + "  - {name: a, type: A, json_path: a.json, tiling_for: b}\n"),
               Catch::Contains("g.yaml:3:55: error: tiling_for is only for operators of kind "
                               "aicpu_tiling ('a' is kernel)"));
    CHECK_THAT(first(head + "  - {name: p, kind: prefetch, json_path: p.json, inputs: [x]}\n"),
               Catch::Contains("error: prefetch operator 'p' runs no kernel, but one is given"));
    CHECK(first(head + "  - {name: p, kind: prefetch, inputs: [x]}\n").empty());
    CHECK_THAT(first(head + "  - {name: t, type: T, kind: aicpu_tiling, tiling_for: b}\n"),
               Catch::Contains("operator 't' needs kernel.json_path"));
}
