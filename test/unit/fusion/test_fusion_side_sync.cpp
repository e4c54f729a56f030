// SPDX-License-Identifier: Apache-2.0
// Notify/wait with operators beside the cores (AICPU tiling, prefetch): segmentation sees them
// through, the passes give each sub-kernel its notify/wait slots, the plan lists the pairs.
#include "graph_fixture.hpp"
#include "skforge/fusion/plan.hpp"
#include "skforge/fusion/report.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace skforge;
using test::op;

namespace {

const std::string k_head = "name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n"
                           "inputs: [{name: x, shape: [4], dtype: float16}, "
                           "{name: w, shape: [4], dtype: float16}]\n"
                           "scopes: {s: \"early-start=0\"}\nops:\n";

// pre -> (event 1) -> tiling t -> (event 2) -> c, all of pre, mid, c in scope s; prefetch p of w
// -> (event 3) -> c. `between` goes between the tiling and the consumer.
std::string tiling_sink(const std::string& between = "") {
    return k_head + op("pre", "vec", "x", "scope: s, send_event_list: [1]") +
           "  - {name: t, kind: aicpu_tiling, type: Tiling, tiling_for: c, stream_id: 1, kernel: "
           "{json_path: kernels/aicpu.json}, inputs: [pre_out], outputs: [{name: tb, shape: [2], "
           "dtype: int64}], recv_event_list: [1], send_event_list: [2], scope: s}\n" +
           op("mid", "vec", "pre_out", "scope: s") +
           "  - {name: p, kind: prefetch, stream_id: 2, inputs: [w], send_event_list: [3], "
           "scope: s}\n" +
           between + op("c", "vec", "mid_out, tb, w", "scope: s, recv_event_list: [2, 3]");
}

fusion::Plan plan_of(test::GraphFixture& f, const std::string& yaml) {
    REQUIRE(f.load(yaml));
    return fusion::make_plan(f.graph, f.diags);
}

} // namespace

TEST_CASE("side operators stay outside the SuperKernel without cutting its scope",
          "[fusion][side]") {
    test::GraphFixture f;
    auto p = plan_of(f, tiling_sink());
    REQUIRE(p.segments.size() == 1);
    CHECK(p.segments[0].name == "s");
    CHECK(p.segments[0].ops == std::vector<int>{0, 2, 4});
    CHECK(p.ops[1].segment == -1);
    CHECK(p.ops[1].reason == fusion::Reason::op_unsupport);
    CHECK_THAT(p.ops[1].detail, Catch::Contains("AICPU tiling of 'c'"));
    CHECK(p.ops[3].segment == -1);
    CHECK_THAT(p.ops[3].detail, Catch::Contains("SDMA"));
}

TEST_CASE("notify/wait pairs and their slots in the parameter block", "[fusion][side]") {
    test::GraphFixture f;
    auto p = plan_of(f, tiling_sink());
    REQUIRE(p.notify_waits.size() == 3);
    const auto& s = p.segments[0];
    // pre notifies the tiling (event 1); c waits for the tiling (2), then the prefetch (3).
    const auto& pre = s.subs[0];
    const auto& c = s.subs[2];
    REQUIRE(pre.notifies.size() == 1);
    CHECK(pre.notifies[0].event == 1);
    CHECK(pre.notifies[0].peer == 1);
    REQUIRE(c.waits.size() == 2);
    CHECK(c.waits[0].event == 2);
    CHECK(c.waits[1].event == 3);
    CHECK(s.subs[1].notifies.empty());
    CHECK(s.subs[1].waits.empty());
    // The slots follow the event flags, one per notify and wait, sub-kernel by sub-kernel.
    CHECK(pre.notifies[0].slot == s.side_slot_offset);
    CHECK(c.waits[0].slot == s.side_slot_offset + 8);
    CHECK(c.waits[1].slot == s.side_slot_offset + 16);
    CHECK(s.param_block_size == s.side_slot_offset + 24);
    // The pairs carry the fused ends' slots.
    const auto& nw1 = p.notify_waits[0];
    CHECK((nw1.event == 1 && nw1.notifier == 0 && nw1.waiter == 1));
    CHECK((nw1.notify_segment == 0 && nw1.notify_slot == pre.notifies[0].slot));
    CHECK((nw1.wait_segment == -1 && nw1.wait_slot == -1));
    const auto& nw3 = p.notify_waits[2];
    CHECK((nw3.notifier == 3 && nw3.waiter == 4 && nw3.wait_slot == c.waits[1].slot));
    // The guarded arguments point at them: pre's output the tiling reads, c's tiling buffer
    // and prefetched weight.
    auto arg = [&](const fusion::SubKernel& sub, const std::string& tensor) {
        for (const auto& a : sub.args)
            if (s.buffers[static_cast<std::size_t>(a.buffer)].tensor == tensor)
                return a;
        FAIL("no argument " << tensor);
        return sub.args.front();
    };
    CHECK(arg(pre, "pre_out").notify_param_offset == pre.notifies[0].slot);
    CHECK(arg(c, "tb").wait_param_offset == c.waits[0].slot);
    CHECK(arg(c, "w").wait_param_offset == c.waits[1].slot);
    CHECK(arg(c, "mid_out").wait_param_offset == -1);
}

TEST_CASE("a tiling that waits for an operator run after the segment starts splits it",
          "[fusion][side]") {
    // `late` is outside the scope, after the segment starts; the tiling waits for it, and the
    // consumer for the tiling: the launch would wait for what runs after it.
    test::GraphFixture f;
    auto p = plan_of(
        f, k_head + op("pre", "vec", "x", "scope: s, send_event_list: [5]") +
               op("late", "vec", "pre_out",
                  "stream_id: 3, recv_event_list: [5], send_event_list: [1]") +
               "  - {name: t, kind: aicpu_tiling, type: Tiling, tiling_for: c, stream_id: 1, "
               "kernel: {json_path: kernels/aicpu.json}, inputs: [x], outputs: [{name: tb, "
               "shape: [2], dtype: int64}], recv_event_list: [1], send_event_list: [2]}\n" +
               op("c", "vec", "pre_out, tb", "scope: s, recv_event_list: [2]"));
    REQUIRE(p.segments.size() == 2);
    REQUIRE(p.segments[1].split_reason);
    CHECK(*p.segments[1].split_reason == fusion::Reason::exist_deadlock);
    CHECK_THAT(p.segments[1].split_detail, Catch::Contains("'late'"));
    // The split leaves c first in its SuperKernel, waiting for its tiling: refused on dav-2201.
    REQUIRE(f.diags.error_count() == 1);
    CHECK_THAT(f.first(), Catch::Contains("'c' is the first sub-kernel of SuperKernel '" +
                                          p.segments[1].name + "' (scope 's')"));
}

TEST_CASE("the plan report counts and lists the notify/wait pairs", "[fusion][side][report]") {
    test::GraphFixture f;
    auto p = plan_of(f, tiling_sink());
    auto j = nlohmann::json::parse(fusion::plan_json(f.graph, p));
    CHECK(j["summary"]["notify_wait_pairs"] == 3);
    REQUIRE(j["notify_wait"].size() == 3);
    const auto& second = j["notify_wait"][1];
    CHECK(second["event"] == 2);
    CHECK(second["notifier"] == "t");
    CHECK(second["notifier_kind"] == "aicpu_tiling");
    CHECK(second["notify_segment"].is_null());
    CHECK(second["waiter"] == "c");
    CHECK(second["wait_segment"] == "s");
    CHECK(second["wait_slot"] == p.segments[0].subs[2].waits[0].slot);
    CHECK(j["ops"][1]["kind"] == "aicpu_tiling");
    CHECK(j["ops"][1]["tiling_for"] == "c");
    CHECK(j["ops"][3]["kind"] == "prefetch");
    CHECK(j["ops"][0]["kind"] == "kernel");
    auto text = fusion::plan_text(f.graph, p);
    CHECK_THAT(text, Catch::Contains("notify/wait with operators beside the AI cores: 3 pair(s)") &&
                         Catch::Contains("event 2: t (aicpu_tiling) -> c (kernel, in s, wait "
                                         "slot " +
                                         std::to_string(p.segments[0].subs[2].waits[0].slot)));
    // The picture (DOT, SVG, HTML) draws each pair as a notify/wait edge.
    auto pic = fusion::plan_picture(f.graph, p);
    CHECK(std::any_of(pic.edges.begin(), pic.edges.end(), [&](const fusion::PictureEdge& e) {
        return e.kind == fusion::EdgeKind::notify_wait && pic.nodes[e.from].lines[0] == "p" &&
               pic.nodes[e.to].lines[0] == "c" && e.label == "notify/wait 3";
    }));
    CHECK_THAT(fusion::plan_dot(f.graph, p),
               Catch::Contains("[class=\"notify-wait\", style=dashed, "
                               "color=\"#1abc9c\", label=\"notify/"
                               "wait 3\""));
}

TEST_CASE("a graph without side operators has no pairs and no slots", "[fusion][side]") {
    test::GraphFixture f;
    auto p =
        plan_of(f, k_head + op("a", "vec", "x", "scope: s, stream_id: 1, send_event_list: [1]") +
                       op("b", "vec", "a_out", "scope: s, recv_event_list: [1]"));
    CHECK(p.notify_waits.empty());
    REQUIRE(p.segments.size() == 1);
    CHECK(p.segments[0].side_slot_offset == p.segments[0].param_block_size);
    auto j = nlohmann::json::parse(fusion::plan_json(f.graph, p));
    CHECK(j["summary"]["notify_wait_pairs"] == 0);
    CHECK(j["notify_wait"].empty());
}

namespace {

// A tiling t of c, the first of scope s, and a prefetch p that e, the last, notifies; `head` the
// graph's first lines (its npu_arch).
std::string edge_events(const std::string& head) {
    return head +
           "inputs: [{name: x, shape: [4], dtype: float16}, "
           "{name: w, shape: [4], dtype: float16}]\nscopes: {s: \"early-start=0\"}\nops:\n" +
           "  - {name: t, kind: aicpu_tiling, type: Tiling, tiling_for: c, stream_id: 1, kernel: "
           "{json_path: kernels/aicpu.json}, inputs: [x], outputs: [{name: tb, shape: [2], "
           "dtype: int64}], send_event_list: [2]}\n" +
           op("c", "vec", "x, tb", "scope: s, recv_event_list: [2]") +
           op("d", "vec", "c_out", "scope: s") +
           op("e", "vec", "d_out", "scope: s, send_event_list: [3]") +
           "  - {name: p, kind: prefetch, stream_id: 2, inputs: [w], recv_event_list: [3]}\n";
}

const std::string k_dav2201 = "name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n";

std::vector<std::string> errors(const test::GraphFixture& f) {
    std::vector<std::string> out;
    for (const auto& d : f.diags.items())
        if (d.severity == graph::Severity::error)
            out.push_back(graph::format_diagnostic(d));
    return out;
}

} // namespace

TEST_CASE("NPU targets refuse a first sub-kernel that waits for, or a last one that notifies, an "
          "operator beside the cores",
          "[fusion][side]") {
    test::GraphFixture f;
    auto p = plan_of(f, edge_events(k_dav2201));
    REQUIRE(p.segments.size() == 1);
    auto edge = fusion::edge_notify_waits(f.graph, p, p.segments[0]);
    REQUIRE(edge.size() == 2);
    CHECK((edge[0].event == 2 && edge[0].waiter == 1 && edge[0].notifier == 0));
    CHECK((edge[1].event == 3 && edge[1].notifier == 3 && edge[1].waiter == 4));
    auto e = errors(f);
    REQUIRE(e.size() == 2);
    // Each at its operator (c on line 8, e on line 10), naming the SuperKernel, the peer, the
    // event, the vendor's rule and what to do.
    CHECK_THAT(e[0], Catch::Contains("g.yaml:8:5: error: 'c' is the first sub-kernel of "
                                     "SuperKernel 's' and waits for 't' (aicpu_tiling, event 2): "
                                     "on dav-2201 the vendor's SuperKernel compiler refuses a "
                                     "first sub-kernel that receives an event") &&
                         Catch::Contains("(put another operator of scope 's' before 'c', or take "
                                         "'c' out of the scope)"));
    CHECK_THAT(e[1], Catch::Contains("g.yaml:10:5: error: 'e' is the last sub-kernel of "
                                     "SuperKernel 's' and notifies 'p' (prefetch, event 3): on "
                                     "dav-2201 the vendor's SuperKernel compiler refuses a last "
                                     "sub-kernel that sends an event") &&
                         Catch::Contains("after 'e'"));
}

TEST_CASE("the refusal follows the target: none on the host, whatever the graph says",
          "[fusion][side]") {
    test::GraphFixture npu;
    REQUIRE(npu.load(edge_events(k_dav2201)));
    // skc compile --npu-arch host of a dav-2201 graph: the host runtime fills every flag.
    auto p = fusion::make_plan(npu.graph, graph::dependencies(npu.graph), npu.diags,
                               fusion::PlanDepth::full, "host");
    CHECK(errors(npu).empty());
    CHECK(fusion::edge_notify_waits(npu.graph, p, p.segments[0]).size() == 2);
    // The cores pass follows the same target: no NPU launch on the host.
    CHECK_FALSE(p.segments[0].launch.has_value());
    test::GraphFixture host;
    auto own = plan_of(host, edge_events("name: t\nnpu_arch: host\n"));
    CHECK(errors(host).empty());
    CHECK_FALSE(own.segments[0].launch.has_value());
    // A host graph compiled for an NPU is refused, and planned with the NPU's launch.
    auto for_npu = fusion::make_plan(host.graph, graph::dependencies(host.graph), host.diags,
                                     fusion::PlanDepth::checks, "dav-2201");
    CHECK(errors(host).size() == 2);
    CHECK(for_npu.segments[0].launch.has_value());
}

TEST_CASE("dav-3510 refuses tiling sink, whatever the graph's own arch; prefetch stays",
          "[fusion][side]") {
    test::GraphFixture f;
    plan_of(f, tiling_sink()); // dav-2201: pre notifies, c (last) waits: accepted
    CHECK(errors(f).empty());
    fusion::make_plan(f.graph, graph::dependencies(f.graph), f.diags, fusion::PlanDepth::checks,
                      "dav-3510");
    auto e = errors(f);
    REQUIRE(e.size() == 1);
    CHECK_THAT(e[0], Catch::Contains("g.yaml:8:5: error: aicpu_tiling operator 't' (the tiling "
                                     "of 'c') cannot run on dav-3510: CANN supports tiling sink "
                                     "on Atlas A2/A3 (dav-2201) only, not yet on Ascend "
                                     "950PR/950DT") &&
                         Catch::Contains("compute the tiling of 'c' on the host"));
    // The graph's own arch.
    test::GraphFixture own;
    std::string yaml = tiling_sink();
    yaml.replace(yaml.find("dav-2201"), 8, "dav-3510");
    yaml.replace(yaml.find("Ascend910B1"), 11, "Ascend950PR_9599");
    plan_of(own, yaml);
    REQUIRE(errors(own).size() == 1);
    CHECK_THAT(errors(own)[0], Catch::Contains("aicpu_tiling operator 't'"));
    // A prefetch is no tiling sink.
    test::GraphFixture prefetch;
    plan_of(prefetch, "name: t\nnpu_arch: dav-3510\nsoc_version: Ascend950PR_9599\n"
                      "inputs: [{name: x, shape: [4], dtype: float16}, "
                      "{name: w, shape: [4], dtype: float16}]\nscopes: {s: \"\"}\nops:\n" +
                          op("a", "vec", "x", "scope: s") +
                          "  - {name: p, kind: prefetch, stream_id: 2, inputs: [w], "
                          "send_event_list: [3]}\n" +
                          op("b", "vec", "a_out, w", "scope: s, recv_event_list: [3]"));
    CHECK(errors(prefetch).empty());
}
