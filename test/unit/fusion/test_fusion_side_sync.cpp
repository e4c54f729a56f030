// Notify/wait with operators beside the cores (AICPU tiling, prefetch): segmentation sees them
// through, the passes give each sub-kernel its notify/wait slots, the plan lists the pairs.
#include "graph_fixture.hpp"
#include "skforge/fusion/plan.hpp"
#include "skforge/fusion/report.hpp"

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
    CHECK_THAT(fusion::plan_dot(f.graph, p),
               Catch::Contains("\"p\" -> \"c\" [style=dotted, color=blue, label=\"notify/wait "
                               "3\"]"));
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
