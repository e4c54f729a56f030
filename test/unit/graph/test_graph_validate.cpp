// SPDX-License-Identifier: Apache-2.0
#include "graph_fixture.hpp"

#include <catch2/catch.hpp>

#include <random>

using namespace skforge;
using test::header;
using test::op;

TEST_CASE("validation rule: unique operator names", "[graph][validate]") {
    test::GraphFixture f;
    CHECK_FALSE(f.load(header() + op("a", "vec", "x") + op("a", "vec", "x")));
    CHECK_THAT(f.first(), Catch::StartsWith("g.yaml:7:5:") &&
                              Catch::Contains("'a' is used twice (first at line 6)"));
}

TEST_CASE("validation rule: inputs are produced earlier", "[graph][validate]") {
    test::GraphFixture f;
    CHECK_FALSE(f.load(header() + op("a", "vec", "b_out") + op("b", "vec", "x")));
    CHECK_THAT(f.first(), Catch::Contains("produced later by 'b' (a cycle)"));
    test::GraphFixture g;
    CHECK_FALSE(g.load(header() + op("a", "vec", "nowhere")));
    CHECK_THAT(g.first(), Catch::Contains("neither a graph input nor produced"));
}

TEST_CASE("validation rule: a tensor from another stream needs an event", "[graph][validate]") {
    test::GraphFixture f;
    CHECK_FALSE(f.load(header() + op("a", "vec", "x", "stream_id: 1") +
                       op("b", "vec", "a_out", "stream_id: 0")));
    CHECK_THAT(f.first(), Catch::Contains("comes from 'a' on stream 1 with no event in between"));
    test::GraphFixture ok;
    CHECK(ok.load(header() + op("a", "vec", "x", "stream_id: 1, send_event_list: [7]") +
                  op("b", "vec", "a_out", "stream_id: 0, recv_event_list: [7]")));
}

TEST_CASE("validation rule: an event sent before the producer does not cover it",
          "[graph][validate]") {
    test::GraphFixture f;
    CHECK_FALSE(f.load(header() + op("s", "vec", "x", "stream_id: 1, send_event_list: [7]") +
                       op("a", "vec", "x", "stream_id: 1") +
                       op("b", "vec", "a_out", "stream_id: 0, recv_event_list: [7]")));
    CHECK_THAT(f.first(), Catch::Contains("with no event in between"));
}

TEST_CASE("validation rule: events are paired", "[graph][validate]") {
    test::GraphFixture f;
    CHECK_FALSE(f.load(header() + op("a", "vec", "x", "recv_event_list: [3]")));
    CHECK_THAT(f.first(), Catch::Contains("receives event 3 that no operator sends"));
    test::GraphFixture g;
    CHECK_FALSE(g.load(header() + op("a", "vec", "x", "send_event_list: [3]")));
    CHECK_THAT(g.first(), Catch::Contains("event 3 sent by 'a' is never received"));
    test::GraphFixture h;
    CHECK_FALSE(h.load(header() + op("a", "vec", "x", "recv_event_list: [3]") +
                       op("b", "vec", "x", "send_event_list: [3]")));
    CHECK_THAT(h.first(), Catch::Contains("before any operator sends it"));
    test::GraphFixture twice;
    CHECK_FALSE(twice.load(header() + op("a", "vec", "x", "send_event_list: [3]") +
                           op("b", "vec", "x", "send_event_list: [3]") +
                           op("c", "vec", "x", "recv_event_list: [3]")));
    CHECK_THAT(twice.first(), Catch::Contains("event 3 is sent twice"));
    // Events never received are reported by event id, whatever order they were sent in.
    test::GraphFixture unreceived;
    CHECK_FALSE(unreceived.load(header() + op("a", "vec", "x", "send_event_list: [9, 40]") +
                                op("b", "vec", "x", "send_event_list: [2]")));
    REQUIRE(unreceived.diags.items().size() == 3);
    CHECK_THAT(unreceived.diags.items()[0].message, Catch::Contains("event 2 sent by 'b'"));
    CHECK_THAT(unreceived.diags.items()[1].message, Catch::Contains("event 9 sent by 'a'"));
    CHECK_THAT(unreceived.diags.items()[2].message, Catch::Contains("event 40 sent by 'a'"));
}

TEST_CASE("validation rule: scope names and count", "[graph][validate]") {
    test::GraphFixture f;
    CHECK_FALSE(f.load(header() + op("a", "vec", "x", "scope: " + std::string(256, 's'))));
    CHECK_THAT(f.first(), Catch::Contains("is longer than 255 bytes"));
    std::string many = header();
    for (int i = 0; i < 1025; ++i)
        many += op("a" + std::to_string(i), "vec", "x", "scope: s" + std::to_string(i));
    test::GraphFixture g;
    CHECK_FALSE(g.load(many));
    CHECK_THAT(g.first(), Catch::Contains("1025 scopes, more than 1024"));
}

TEST_CASE("validation rule: a scope that becomes a path is refused at its place",
          "[graph][validate]") {
    test::GraphFixture f;
    CHECK_FALSE(f.load(header() + op("a", "vec", "x", "scope: ../../../../ESC")));
    CHECK(f.first() == "g.yaml:6:5: error: scope name '../../../../ESC' contains '/' (it becomes "
                       "a file or directory name, so it must be one path component of letters, "
                       "digits and '._+-')");
    test::GraphFixture declared;
    CHECK_FALSE(declared.load(header("scopes: {'..': x}\n") + op("a", "vec", "x", "scope: '..'")));
    CHECK_THAT(declared.first(), Catch::StartsWith("g.yaml:4:10: error: scope name '..' is '.' or "
                                                   "'..'"));
    test::GraphFixture ok;
    CHECK(ok.load(header() + op("a", "vec", "x", "scope: sk_1.2") +
                  op("b", "vec", "a_out", "scope: sk_1.2")));
}

TEST_CASE("validation rule: an OpType that becomes a path is refused at each operator",
          "[graph][validate]") {
    test::GraphFixture f;
    std::string ops;
    for (const char* name : {"a", "b"})
        ops += std::string("  - {name: ") + name + ", type: ../../x/OPT, kernel: {json_path: " +
               "kernels/vec.json}, inputs: [x], outputs: [{name: " + name +
               "_out, shape: [4], dtype: float16}]}\n";
    CHECK_FALSE(f.load(header() + ops));
    REQUIRE(f.diags.error_count() == 2);
    CHECK(f.first() == "g.yaml:6:5: error: OpType '../../x/OPT' of operator 'a' contains '/' (it "
                       "becomes a file or directory name, so it must be one path component of "
                       "letters, digits and '._+-')");
    CHECK(f.diags.items()[1].where.line == 7);
}

TEST_CASE("validation rule: the graph name and SoC become paths", "[graph][validate]") {
    test::GraphFixture f;
    CHECK_FALSE(f.load("name: ../../ESC_G\nsoc_version: Ascend/910\n"
                       "inputs: [{name: x, shape: [4], dtype: float16}]\nops:\n" +
                       op("a", "vec", "x")));
    REQUIRE(f.diags.error_count() == 2);
    CHECK_THAT(f.first(), Catch::StartsWith("g.yaml:1:7: error: graph name '../../ESC_G' "
                                            "contains '/'"));
    CHECK_THAT(graph::format_diagnostic(f.diags.items()[1]),
               Catch::Contains("g.yaml:2:14: error: soc_version 'Ascend/910' contains '/'"));
    // A name taken from the file name is checked too, and the hint says how to fix it.
    graph::Diagnostics diags;
    auto g = graph::parse_graph_text("ops: []\n", "dir/my graph.yaml", diags);
    graph::validate_graph(g, diags);
    REQUIRE(diags.error_count() == 1);
    CHECK(graph::format_diagnostic(diags.items()[0]) ==
          "dir/my graph.yaml:1:1: error: graph name 'my graph' (from the file name) may contain "
          "only letters, digits and '._+-' (set 'name' in the graph)");
}

TEST_CASE("kernel metadata names that become paths are refused against the metadata file",
          "[graph][validate]") {
    test::GraphFixture f;
    test::write_text(f.dir / "kernels/vec.json",
                     R"({"kernelName":"../../../../ESC_K","blockDim":8,)"
                     R"("magic":"RT_DEV_BINARY_MAGIC_ELF_AIVEC","binFileName":"..",)"
                     R"("sub_operator_kernel_type":"KERNEL_TYPE_AIV_ONLY"})");
    CHECK_FALSE(f.load(header() + op("a", "vec", "x")));
    REQUIRE(f.diags.error_count() == 2);
    CHECK_THAT(f.first(), Catch::StartsWith("g.yaml:6:35: error: kernel metadata "
                                            "'kernels/vec.json': 'kernelName' '../../../../ESC_K' "
                                            "contains '/'"));
    CHECK_THAT(graph::format_diagnostic(f.diags.items()[1]),
               Catch::Contains("g.yaml:6:35: error: kernel metadata 'kernels/vec.json': "
                               "'binFileName' '..' is '.' or '..'"));
}

TEST_CASE("validation reports every error, not just the first", "[graph][validate]") {
    test::GraphFixture f;
    CHECK_FALSE(f.load(header() + op("a", "vec", "nope1") + op("a", "vec", "nope2")));
    CHECK(f.diags.error_count() == 4); // two missing inputs, the name, the output tensor a_out
}

TEST_CASE("dependencies: what each operator waits for and what each input reads",
          "[graph][validate]") {
    test::GraphFixture f;
    // d reads what nothing produces: invalid, but planning runs beside validation.
    CHECK_FALSE(f.load(header() + op("a", "vec", "x", "send_event_list: [7]") +
                       op("b", "vec", "a_out, x") +
                       op("c", "vec", "a_out, b_out", "recv_event_list: [7], stream_id: 1") +
                       op("d", "vec", "nowhere")));
    auto deps = graph::dependencies(f.graph);
    REQUIRE(deps.size() == 4);
    auto list = [](std::span<const int> s) { return std::vector<int>(s.begin(), s.end()); };
    CHECK(list(deps[0]).empty());
    CHECK(list(deps[1]) == std::vector<int>{0});
    CHECK(list(deps[2]) == std::vector<int>{0, 1}); // data from both, the event from a: once
    int a_out = deps.output_id(0, 0), b_out = deps.output_id(1, 0);
    CHECK(a_out != b_out);
    CHECK(list(deps.sources(1)) == std::vector<int>{a_out, -1}); // x is graph input 0
    CHECK(list(deps.sources(2)) == std::vector<int>{a_out, b_out});
    CHECK(list(deps.sources(3)) == std::vector<int>{graph::Dependencies::k_unknown});
    CHECK(deps.reads(a_out) == 2);
    CHECK(deps.reads(b_out) == 1);
    CHECK(deps.reads(deps.output_id(3, 0)) == 0);
    CHECK(deps.output(b_out) == std::pair<int, int>{1, 0});
}

namespace {

// A large graph (enough operators to be resolved on every core) whose inputs read what a
// planner meets: the operator just before, one far back (across the threads' runs), graph
// inputs, names produced later or never, the operator's own output; events sent and received
// in every order. `repeat` gives one output the name of an earlier one.
graph::Graph busy_graph(bool repeat) {
    graph::Graph g;
    for (int k = 0; k < 3; ++k)
        g.inputs.push_back({"in" + std::to_string(k), {4}, "float16", {}});
    std::mt19937 rng(7);
    const int n = 20000;
    for (int i = 0; i < n; ++i) {
        graph::Op op;
        op.name = "op" + std::to_string(i);
        auto out = [](int j) { return "t" + std::to_string(j); };
        auto read = [&](std::string name) { op.inputs.push_back({std::move(name), {}, "", {}}); };
        switch (rng() % 8) {
        case 0:
            read("in" + std::to_string(rng() % 3));
            break;
        case 1:
            read(out(static_cast<int>(rng() % static_cast<unsigned>(n)))); // maybe later
            break;
        case 2:
            read("nowhere" + std::to_string(i));
            break;
        case 3:
            read(out(i)); // its own output
            break;
        default:
            if (i > 0)
                read(out(static_cast<int>(rng() % static_cast<unsigned>(i))));
            if (i > 1)
                read(out(i - 1));
        }
        op.outputs.push_back({out(i), {4}, "float16", {}});
        if (i % 5 == 0)
            op.outputs.push_back({out(i) + "_b", {4}, "float16", {}});
        if (rng() % 10 == 0)
            op.send_events.push_back(static_cast<std::int64_t>(rng() % 3000));
        if (rng() % 10 == 0)
            op.recv_events.push_back(static_cast<std::int64_t>(rng() % 3000));
        g.ops.push_back(std::move(op));
    }
    if (repeat) {
        g.ops[n - 3].outputs[0].name = "t17";
        g.inputs.push_back({"in1", {4}, "float16", {}});
    }
    return g;
}

void check_same(const graph::Dependencies& a, const graph::Dependencies& b, const graph::Graph& g) {
    auto list = [](auto s) { return std::vector<std::int64_t>(s.begin(), s.end()); };
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        INFO("operator " << i);
        REQUIRE(list(a[i]) == list(b[i]));
        REQUIRE(list(a.sources(i)) == list(b.sources(i)));
        for (std::size_t j = 0; j < g.ops[i].outputs.size(); ++j) {
            int id = a.output_id(i, j);
            REQUIRE(id == b.output_id(i, j));
            REQUIRE(a.reads(id) == b.reads(id));
            REQUIRE(a.output(id) == b.output(id));
        }
    }
    CHECK(list(a.repeated_inputs()) == list(b.repeated_inputs()));
    CHECK(list(a.repeated_outputs()) == list(b.repeated_outputs()));
}

} // namespace

TEST_CASE("dependencies found on every core equal the serial walk", "[graph][validate]") {
    for (bool repeat : {false, true}) {
        INFO("repeated names: " << repeat);
        auto g = busy_graph(repeat);
        auto serial = graph::dependencies_in_order(g);
        check_same(graph::dependencies(g), serial, g);
        // The walk saw every kind of input the graph was built with.
        std::size_t unknown = 0, graph_inputs = 0, outputs = 0;
        for (std::size_t i = 0; i < serial.size(); ++i)
            for (int s : serial.sources(i))
                (s == graph::Dependencies::k_unknown ? unknown : s < 0 ? graph_inputs : outputs)++;
        CHECK(unknown > 1000);
        CHECK(graph_inputs > 1000);
        CHECK(outputs > 10000);
        CHECK(serial.repeated_outputs().size() == (repeat ? 1u : 0u));
        CHECK(serial.repeated_inputs().size() == (repeat ? 1u : 0u));
    }
}

TEST_CASE("validation reports a repeated tensor name once, where it repeats", "[graph][validate]") {
    auto g = busy_graph(true);
    graph::Diagnostics diags;
    graph::validate_graph(g, diags);
    std::vector<std::string> twice;
    for (const auto& d : diags.items())
        if (d.message.find("declared twice") != std::string::npos ||
            d.message.find("produced twice") != std::string::npos)
            twice.push_back(d.message);
    CHECK(twice == std::vector<std::string>{"graph input 'in1' is declared twice",
                                            "tensor 't17' is produced twice"});
}

// ---- Operators beside the cores (aicpu_tiling, prefetch) ---------------------------------

namespace {

// x -> pre (scope s) -> tiling t of `c` on stream 1 -> c (scope s); prefetch p of w on stream 2
// -> c. `tiling` and `prefetch` replace the side operators' extra keys.
std::string side_graph(const std::string& tiling = "", const std::string& prefetch = "",
                       const std::string& consumer = "recv_event_list: [2, 3]") {
    return "name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n"
           "inputs: [{name: x, shape: [4], dtype: float16}, {name: w, shape: [4], dtype: "
           "float16}]\nops:\n" +
           test::op("pre", "vec", "x", "scope: s, send_event_list: [1]") +
           "  - {name: t, kind: aicpu_tiling, type: Tiling, kernel: {json_path: "
           "kernels/aicpu.json}, inputs: [pre_out], outputs: [{name: tb, shape: [2], dtype: "
           "int64}], " +
           (tiling.empty() ? "tiling_for: c, stream_id: 1, recv_event_list: [1], "
                             "send_event_list: [2]"
                           : tiling) +
           "}\n  - {name: p, kind: prefetch, inputs: [w], " +
           (prefetch.empty() ? "stream_id: 2, send_event_list: [3]" : prefetch) + "}\n" +
           test::op("c", "vec", "pre_out, tb, w", "scope: s, " + consumer);
}

} // namespace

TEST_CASE("side operators: a tiling sink and a prefetch connected by events validate",
          "[graph][validate][side]") {
    test::GraphFixture f;
    REQUIRE(f.load(side_graph()));
    const auto& t = f.graph.ops[1];
    CHECK(t.kind == graph::OpKind::aicpu_tiling);
    CHECK(t.tiling_for == "c");
    const auto& p = f.graph.ops[2];
    CHECK(p.kind == graph::OpKind::prefetch);
    CHECK(p.type == "Prefetch");
    CHECK(p.kernel_index == -1);
    CHECK(graph::runs_beside_cores(p.kind));
    CHECK_FALSE(graph::runs_beside_cores(f.graph.ops[0].kind));
    CHECK(f.diags.items().empty());
}

TEST_CASE("side operators: every wait has its notify, sent before it", "[graph][validate][side]") {
    test::GraphFixture none;
    CHECK_FALSE(none.load(side_graph("", "", "recv_event_list: [2, 3, 9]")));
    CHECK_THAT(none.first(), Catch::Contains("'c' receives event 9 that no operator sends"));
    test::GraphFixture unwaited;
    CHECK_FALSE(unwaited.load(side_graph("", "", "recv_event_list: [2]")));
    CHECK_THAT(unwaited.first(), Catch::Contains("event 3 sent by 'p' is never received"));
    test::GraphFixture twice;
    CHECK_FALSE(
        twice.load(side_graph("", "stream_id: 2, send_event_list: [2]", "recv_event_list: [2]")));
    CHECK_THAT(twice.first(), Catch::Contains("event 2 is sent twice (again by 'p')"));
}

TEST_CASE("side operators: a tiling waits for its input's producer (no cycle, order kept)",
          "[graph][validate][side]") {
    // Without event 1 the tiling reads pre_out from stream 0 with nothing in between.
    test::GraphFixture f;
    CHECK_FALSE(f.load(side_graph("tiling_for: c, stream_id: 1, send_event_list: [2]")));
    CHECK_THAT(f.first(), Catch::Contains("input 'pre_out' of 't' (stream 1) comes from 'pre' on "
                                          "stream 0 with no event in between"));
}

TEST_CASE("side operators: the consumer of a tiling must wait for it", "[graph][validate][side]") {
    test::GraphFixture f;
    CHECK_FALSE(f.load(side_graph("", "", "recv_event_list: [3]") +
                       test::op("d", "vec", "x", "recv_event_list: [2]")));
    CHECK_THAT(f.first(),
               Catch::StartsWith("g.yaml:9:5: error: 'c' does not wait for its tiling") &&
                   Catch::Contains("stale tiling buffer"));
}

TEST_CASE(
    "side operators: tiling_for names a later kernel operator, tiled once, reading the buffer",
    "[graph][validate][side]") {
    test::GraphFixture missing;
    CHECK_FALSE(missing.load(
        side_graph("tiling_for: nope, stream_id: 1, recv_event_list: [1], send_event_list: [2]")));
    CHECK_THAT(missing.first(),
               Catch::Contains("tiling_for of 't' names 'nope', which is no operator"));
    test::GraphFixture earlier;
    CHECK_FALSE(earlier.load(
        side_graph("tiling_for: pre, stream_id: 1, recv_event_list: [1], send_event_list: [2]")));
    CHECK_THAT(earlier.first(), Catch::Contains("'pre' (tiled by 't') comes before its tiling"));
    test::GraphFixture side;
    CHECK_FALSE(side.load(
        side_graph("tiling_for: p, stream_id: 1, recv_event_list: [1], send_event_list: [2]")));
    CHECK_THAT(side.first(), Catch::Contains("is of kind prefetch: only a kernel operator"));
    test::GraphFixture unread;
    CHECK_FALSE(unread.load(
        "name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n"
        "inputs: [{name: x, shape: [4], dtype: float16}]\nops:\n"
        "  - {name: t, kind: aicpu_tiling, type: Tiling, kernel: {json_path: kernels/aicpu.json},"
        " inputs: [x], outputs: [{name: tb, shape: [2], dtype: int64}], tiling_for: c,"
        " stream_id: 1, send_event_list: [2]}\n" +
        test::op("c", "vec", "x", "recv_event_list: [2]")));
    CHECK_THAT(unread.first(), Catch::Contains("'c' (tiled by 't') does not read the tiling "
                                               "buffer 'tb'"));
    test::GraphFixture again;
    CHECK_FALSE(again.load(
        "name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n"
        "inputs: [{name: x, shape: [4], dtype: float16}]\nops:\n"
        "  - {name: t, kind: aicpu_tiling, type: Tiling, kernel: {json_path: kernels/aicpu.json},"
        " inputs: [x], outputs: [{name: tb, shape: [2], dtype: int64}], tiling_for: c,"
        " stream_id: 1, send_event_list: [2]}\n"
        "  - {name: u, kind: aicpu_tiling, type: Tiling, kernel: {json_path: kernels/aicpu.json},"
        " inputs: [x], outputs: [{name: tb2, shape: [2], dtype: int64}], tiling_for: c,"
        " stream_id: 1, send_event_list: [3]}\n" +
        test::op("c", "vec", "x, tb, tb2", "recv_event_list: [2, 3]")));
    CHECK_THAT(again.first(), Catch::Contains("'c' (tiled by 'u') already has its tiling computed "
                                              "by 't'"));
}

TEST_CASE("side operators: one tiling buffer, prefetch reads only, own streams",
          "[graph][validate][side]") {
    test::GraphFixture outputs;
    CHECK_FALSE(outputs.load(
        side_graph("", "stream_id: 2, send_event_list: [3], outputs: [{name: q, shape: [1], "
                       "dtype: int8}]")));
    CHECK_THAT(outputs.first(), Catch::Contains("prefetch operator 'p' has outputs"));
    test::GraphFixture stream;
    CHECK_FALSE(stream.load(side_graph("", "stream_id: 0, send_event_list: [3]")));
    CHECK_THAT(stream.first(),
               Catch::Contains("prefetch operator 'p' is on stream 0, which also runs AI-core "
                               "operator 'pre'") &&
                   Catch::Contains("SDMA"));
    test::GraphFixture shared;
    CHECK_FALSE(shared.load(
        side_graph("tiling_for: c, stream_id: 0, recv_event_list: [1], send_event_list: [2]")));
    CHECK_THAT(shared.first(), Catch::Contains("aicpu_tiling operator 't' is on stream 0") &&
                                   Catch::Contains("AICPU"));
    test::GraphFixture two;
    CHECK_FALSE(two.load("name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n"
                         "inputs: [{name: x, shape: [4], dtype: float16}]\nops:\n"
                         "  - {name: t, kind: aicpu_tiling, type: Tiling, kernel: {json_path: "
                         "kernels/aicpu.json}, inputs: [x], outputs: [], tiling_for: c, "
                         "stream_id: 1, send_event_list: [2]}\n" +
                         test::op("c", "vec", "x", "recv_event_list: [2]")));
    CHECK_THAT(two.first(), Catch::Contains("aicpu_tiling operator 't' has 0 outputs, not one"));
    test::GraphFixture empty;
    CHECK_FALSE(empty.load(header() + "  - {name: p, kind: prefetch, inputs: [], stream_id: 2}\n"));
    CHECK_THAT(empty.first(), Catch::Contains("prefetch operator 'p' names no tensor to prefetch"));
    test::GraphFixture idle;
    CHECK(idle.load(header() + "  - {name: p, kind: prefetch, inputs: [x], stream_id: 2}\n"));
    REQUIRE(idle.diags.items().size() == 1);
    CHECK_THAT(idle.first(), Catch::Contains("warning: nothing waits for prefetch operator 'p'"));
}
