// SPDX-License-Identifier: Apache-2.0
#include "graph_fixture.hpp"
#include "skforge/fusion/plan.hpp"

#include <catch2/catch.hpp>

using namespace skforge;
using test::header;
using test::op;

namespace {

fusion::Plan plan_of(test::GraphFixture& f, const std::string& yaml) {
    REQUIRE(f.load(yaml));
    return fusion::make_plan(f.graph, f.diags);
}

std::vector<std::string> names(const test::GraphFixture& f, const fusion::Segment& s) {
    std::vector<std::string> out;
    for (int i : s.ops)
        out.push_back(f.graph.ops[static_cast<std::size_t>(i)].name);
    return out;
}

std::string reason(const fusion::Plan& p, std::size_t op) {
    return p.ops[op].reason ? std::string(fusion::reason_code(*p.ops[op].reason)) : "fused";
}

} // namespace

TEST_CASE("a whole scope is one segment named after the scope", "[fusion][segment]") {
    test::GraphFixture f;
    auto p =
        plan_of(f, header() + op("a", "vec", "x", "scope: s") +
                       op("b", "cube", "a_out", "scope: s") + op("c", "mix", "b_out", "scope: s"));
    REQUIRE(p.segments.size() == 1);
    CHECK(p.segments[0].name == "s");
    CHECK(names(f, p.segments[0]) == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("each left-out operator gets its reason", "[fusion][segment]") {
    test::GraphFixture f;
    auto p = plan_of(f, header() + op("free", "vec", "x") +
                            op("tbe", "vec", "x", "scope: s, engine: tbe") +
                            op("cpu", "aicpu", "x", "scope: s") +
                            op("dyn", "vec", "x", "scope: s, task_type: dynamic") +
                            op("simt", "vec", "x", "scope: s, engine: simt") +
                            op("nosk", "nosk", "x", "scope: s") +
                            op("big", "big", "x", "scope: s") + op("odd", "odd", "x", "scope: s") +
                            op("mark", "vec", "x", "scope: s, no_fusion: true") +
                            op("bcast", "vec", "x", "scope: s, engine: hccl, type: HcomBroadcast") +
                            op("ar", "vec", "x", "scope: s, engine: hccl"));
    CHECK(reason(p, 0) == "NOT_IN_SCOPE");
    CHECK(reason(p, 1) == "OP_UNSUPPORT");
    CHECK(reason(p, 2) == "OP_UNSUPPORT");
    CHECK(reason(p, 3) == "DYNAMIC_TASK_UNSUPPORT");
    CHECK(reason(p, 4) == "SIMT_OP_UNSUPPORT");
    CHECK(reason(p, 5) == "OP_UNSUPPORT");
    CHECK(reason(p, 6) == "EXCEED_CORE_MAX");
    CHECK(reason(p, 7) == "OP_UNSUPPORT");
    CHECK(reason(p, 8) == "NO_FUSION_MARK");
    CHECK(reason(p, 9) == "OP_UNSUPPORT");
    CHECK(p.ops[9].detail.find("HcomBroadcast") != std::string::npos);
    CHECK(reason(p, 10) == "OP_UNSUPPORT"); // type Tvec is not a supported collective
}

TEST_CASE("supported collectives fuse", "[fusion][segment]") {
    test::GraphFixture f;
    auto p = plan_of(
        f, header() + "  - {name: ar, type: HcomAllReduce, engine: hccl, kernel: {json_path: "
                      "kernels/vec.json}, "
                      "inputs: [x], outputs: [{name: y, shape: [4], dtype: float16}], scope: s}\n");
    CHECK(reason(p, 0) == "fused");
}

TEST_CASE("an unfusible operator cuts its scope and the pieces are named by position",
          "[fusion][segment]") {
    test::GraphFixture f;
    auto p = plan_of(
        f, header() + op("a", "vec", "x", "scope: s") + op("b", "vec", "a_out", "scope: s") +
               op("t", "vec", "b_out", "scope: s, engine: tbe") +
               op("c", "vec", "t_out", "scope: s") + op("d", "vec", "c_out", "scope: s"));
    REQUIRE(p.segments.size() == 2);
    CHECK(p.segments[0].name == "s_split_0_1");
    CHECK(p.segments[1].name == "s_split_3_4");
    CHECK(fusion::reason_code(*p.segments[1].split_reason) == "CUT_BY_UNFUSIBLE");
    CHECK(reason(p, 2) == "OP_UNSUPPORT");
}

TEST_CASE("an outside operator between scope members splits when a member depends on it",
          "[fusion][segment]") {
    test::GraphFixture f;
    // o depends on a (inside) and b depends on o: fusing a and b would deadlock.
    auto p = plan_of(f, header() + op("a", "vec", "x", "scope: s") + op("o", "vec", "a_out") +
                            op("b", "vec", "o_out", "scope: s"));
    REQUIRE(p.segments.size() == 2);
    CHECK(fusion::reason_code(*p.segments[1].split_reason) == "EXIST_DEADLOCK");
    test::GraphFixture g;
    // o does not depend on the segment, but runs after it starts: still split.
    auto q = plan_of(g, header() + op("a", "vec", "x", "scope: s") + op("o", "vec", "x") +
                            op("b", "vec", "o_out", "scope: s"));
    REQUIRE(q.segments.size() == 2);
    CHECK(fusion::reason_code(*q.segments[1].split_reason) == "EXTERNAL_DEPEND");
    test::GraphFixture h;
    // An independent outside operator in between does not split.
    auto r = plan_of(h, header() + op("a", "vec", "x", "scope: s") + op("o", "vec", "x") +
                            op("b", "vec", "a_out", "scope: s"));
    CHECK(r.segments.size() == 1);
}

TEST_CASE("interleaved scopes are independent segments", "[fusion][segment]") {
    test::GraphFixture f;
    auto p = plan_of(
        f, header() + op("a1", "vec", "x", "scope: A") + op("b1", "vec", "x", "scope: B") +
               op("a2", "vec", "a1_out", "scope: A") + op("b2", "vec", "b1_out", "scope: B"));
    REQUIRE(p.segments.size() == 2);
    CHECK(names(f, p.segments[0]) == std::vector<std::string>{"a1", "a2"});
    CHECK(names(f, p.segments[1]) == std::vector<std::string>{"b1", "b2"});
}

TEST_CASE("a segment holds at most 1024 tasks", "[fusion][segment]") {
    test::GraphFixture f;
    std::string yaml = header() + op("o0", "vec", "x", "scope: s");
    for (int i = 1; i < 1030; ++i)
        yaml +=
            op("o" + std::to_string(i), "vec", "o" + std::to_string(i - 1) + "_out", "scope: s");
    auto p = plan_of(f, yaml);
    REQUIRE(p.segments.size() == 2);
    CHECK(p.segments[0].ops.size() == 1024);
    CHECK(fusion::reason_code(*p.segments[1].split_reason) == "EXCEED_TASK_MAX");
}

TEST_CASE("super_kernel_optimize false fuses nothing", "[fusion][segment]") {
    test::GraphFixture f;
    auto p = plan_of(f, header("super_kernel_optimize: false\n") + op("a", "vec", "x", "scope: s"));
    CHECK(p.segments.empty());
    CHECK(reason(p, 0) == "FUSION_DISABLED");
}

TEST_CASE("scope options reach their segment over the graph's defaults", "[fusion][segment]") {
    test::GraphFixture f;
    auto p = plan_of(
        f,
        header("super_kernel_optimize_options: {split_mode: 2}\nscopes: {s: \"early-start=2\"}\n") +
            op("a", "vec", "x", "scope: s"));
    REQUIRE(p.segments.size() == 1);
    CHECK(p.segments[0].options.early_start == 2);
    CHECK(p.segments[0].options.split_mode == 2);
}

TEST_CASE("an outside operator that depends on the segment through others is a deadlock",
          "[fusion][segment]") {
    test::GraphFixture f;
    // a -> o1 -> o2 -> b: o2 depends on the segment only through o1.
    auto p = plan_of(f, header() + op("a", "vec", "x", "scope: s") + op("o1", "vec", "a_out") +
                            op("o2", "vec", "o1_out") + op("b", "vec", "o2_out", "scope: s"));
    REQUIRE(p.segments.size() == 2);
    CHECK(fusion::reason_code(*p.segments[1].split_reason) == "EXIST_DEADLOCK");
    CHECK_THAT(p.segments[1].split_detail, Catch::Contains("'o2'"));
}

TEST_CASE("every late dependency is looked at, and a deadlock wins", "[fusion][segment]") {
    test::GraphFixture f;
    // b depends on o1 (independent of the segment) and on o2 (which depends on a).
    auto p =
        plan_of(f, header() + op("a", "vec", "x", "scope: s") + op("o1", "vec", "x") +
                       op("o2", "vec", "a_out") + op("b", "vec", "o1_out, o2_out", "scope: s"));
    REQUIRE(p.segments.size() == 2);
    CHECK(fusion::reason_code(*p.segments[1].split_reason) == "EXIST_DEADLOCK");
    CHECK_THAT(p.segments[1].split_detail, Catch::Contains("'o2'"));
    test::GraphFixture g;
    // With no deadlock the first late dependency is named.
    auto q = plan_of(g, header() + op("a", "vec", "x", "scope: s") + op("o1", "vec", "x") +
                            op("o2", "vec", "x") + op("b", "vec", "o1_out, o2_out", "scope: s"));
    REQUIRE(q.segments.size() == 2);
    CHECK(fusion::reason_code(*q.segments[1].split_reason) == "EXTERNAL_DEPEND");
    CHECK_THAT(q.segments[1].split_detail, Catch::Contains("'o1'"));
}

TEST_CASE("super_kernel_optimize false comes before an operator's no_fusion mark",
          "[fusion][segment]") {
    test::GraphFixture f;
    auto p = plan_of(f, header("super_kernel_optimize: false\n") +
                            op("a", "vec", "x", "scope: s, no_fusion: true"));
    CHECK(reason(p, 0) == "FUSION_DISABLED");
}

namespace {

constexpr const char* k_ignored_types[] = {
    "Send", "SendNotify", "SendMem", "Recv",     "RecvNotify",      "RecvMem",
    "Data", "Variable",   "Const",   "Constant", "ConstPlaceHolder"};

} // namespace

TEST_CASE("Send, Recv, Data, Variable and Const are neither fused nor cut a scope",
          "[fusion][segment]") {
    for (const char* type : k_ignored_types) {
        INFO(type);
        test::GraphFixture f;
        // A fusible kernel in the scope, and a TBE one that would cut it were it a member; the
        // members do not read what either writes.
        auto p = plan_of(
            f, header() + op("a", "vec", "x", "scope: s") +
                   op("i", "vec", "a_out", std::string("scope: s, type: ") + type) +
                   op("t", "vec", "x", std::string("scope: s, engine: tbe, type: ") + type) +
                   op("b", "vec", "a_out", "scope: s"));
        REQUIRE(p.segments.size() == 1);
        CHECK(p.segments[0].name == "s");
        CHECK(names(f, p.segments[0]) == std::vector<std::string>{"a", "b"});
        CHECK(reason(p, 1) == "NOT_IN_SCOPE");
        CHECK(reason(p, 2) == "NOT_IN_SCOPE");
        CHECK_THAT(p.ops[1].detail, Catch::Contains("ignored by segmentation"));
    }
}

TEST_CASE("a member that reads an ignored operator run after the launch starts a new segment",
          "[fusion][segment]") {
    for (const char* type : k_ignored_types) {
        INFO(type);
        const std::string as = std::string("type: ") + type;
        test::GraphFixture f;
        // The three-Square case: a -> d1 -> b -> d2 -> c. d1 and d2 run kernels after the
        // launch, so b and c cannot be in a SuperKernel launched where a was.
        auto p =
            plan_of(f, header() + op("a", "vec", "x", "scope: s") +
                           op("d1", "vec", "a_out", "scope: s, " + as) +
                           op("b", "vec", "d1_out", "scope: s") + op("d2", "vec", "b_out", as) +
                           op("c", "vec", "d2_out", "scope: s"));
        REQUIRE(p.segments.size() == 3);
        CHECK(p.segments[0].name == "s_split_0_0");
        CHECK(p.segments[1].name == "s_split_1_1");
        CHECK(p.segments[2].name == "s_split_2_2");
        for (std::size_t k : {1u, 2u}) {
            const auto& seg = p.segments[k];
            REQUIRE(seg.split_reason);
            CHECK(fusion::reason_code(*seg.split_reason) == "EXIST_DEADLOCK");
            CHECK_THAT(seg.split_detail,
                       Catch::Contains("'d" + std::to_string(k) + "' (a " + std::string(type) +
                                       " operator: segmentation ignores its type, but here it "
                                       "runs a kernel)") &&
                           Catch::Contains("depends on the segment itself"));
        }
        // One that reads only what ran before: the member depends on an outside operator run
        // after the start.
        test::GraphFixture g;
        auto q = plan_of(g, header() + op("a", "vec", "x", "scope: s") +
                                op("d", "vec", "x", "scope: s, " + as) +
                                op("b", "vec", "d_out, a_out", "scope: s"));
        REQUIRE(q.segments.size() == 2);
        CHECK(fusion::reason_code(*q.segments[1].split_reason) == "EXTERNAL_DEPEND");
        CHECK_THAT(q.segments[1].split_detail,
                   Catch::Contains("'d' (a " + std::string(type) + " operator"));
        // Before the segment's first operator it has run when the launch starts: whole.
        test::GraphFixture h;
        auto r = plan_of(h, header() + op("d", "vec", "x", "scope: s, " + as) +
                                op("a", "vec", "d_out", "scope: s") +
                                op("b", "vec", "a_out, d_out", "scope: s"));
        REQUIRE(r.segments.size() == 1);
        CHECK(names(h, r.segments[0]) == std::vector<std::string>{"a", "b"});
    }
}

TEST_CASE("an ignored operator on another stream between members splits where it is read",
          "[fusion][segment]") {
    test::GraphFixture f;
    // d (Recv) on stream 1 waits for a, b waits for d: b cannot be launched with a.
    auto p = plan_of(f, header() + op("a", "vec", "x", "scope: s, send_event_list: [1]") +
                            op("d", "vec", "a_out",
                               "type: Recv, stream_id: 1, recv_event_list: [1], "
                               "send_event_list: [2]") +
                            op("m", "vec", "a_out", "scope: s") +
                            op("b", "vec", "d_out, m_out", "scope: s, recv_event_list: [2]"));
    REQUIRE(p.segments.size() == 2);
    CHECK(names(f, p.segments[0]) == std::vector<std::string>{"a", "m"});
    CHECK(fusion::reason_code(*p.segments[1].split_reason) == "EXIST_DEADLOCK");
    CHECK_THAT(p.segments[1].split_detail, Catch::Contains("'d' (a Recv operator"));
}

TEST_CASE("a dependency through an ignored operator is a dependency on it", "[fusion][segment]") {
    test::GraphFixture f;
    // b reads r (a Recv, ignored), which reads o: both outside and late.
    auto p =
        plan_of(f, header() + op("a", "vec", "x", "scope: s") + op("o", "vec", "x") +
                       op("r", "vec", "o_out", "type: Recv") + op("b", "vec", "r_out", "scope: s"));
    REQUIRE(p.segments.size() == 2);
    CHECK(fusion::reason_code(*p.segments[1].split_reason) == "EXTERNAL_DEPEND");
    CHECK_THAT(p.segments[1].split_detail, Catch::Contains("depends on 'r' (a Recv operator"));
}

TEST_CASE("strict-scope-check=abort refuses a scope that is split or loses operators",
          "[fusion][segment]") {
    const std::string abort = "scopes: {s: \"strict-scope-check=abort\"}\n";
    test::GraphFixture f;
    plan_of(f, header(abort) + op("a", "vec", "x", "scope: s") +
                   op("t", "vec", "a_out", "scope: s, engine: tbe") +
                   op("b", "vec", "t_out", "scope: s"));
    REQUIRE(f.diags.has_errors());
    CHECK_THAT(f.first(), Catch::Contains("g.yaml:") &&
                              Catch::Contains("scope 's' has strict-scope-check=abort") &&
                              Catch::Contains("'t' is left out (OP_UNSUPPORT"));
    test::GraphFixture g;
    // Split with nothing left out.
    plan_of(g, header(abort) + op("a", "vec", "x", "scope: s") + op("o", "vec", "x") +
                   op("b", "vec", "o_out", "scope: s"));
    CHECK_THAT(g.first(), Catch::Contains("cut before 'b' (EXTERNAL_DEPEND"));
    test::GraphFixture h;
    // Loses its only operator: no segment at all, still refused.
    plan_of(h, header(abort) + op("t", "vec", "x", "scope: s, no_fusion: true"));
    CHECK_THAT(h.first(), Catch::Contains("'t' is left out (NO_FUSION_MARK"));
}

TEST_CASE("strict-scope-check lets a whole scope, or a bypassed one, through",
          "[fusion][segment]") {
    test::GraphFixture f;
    // Whole, with an ignored operator in it.
    auto p = plan_of(
        f, header("scopes: {s: \"strict-scope-check=abort\"}\n") + op("a", "vec", "x", "scope: s") +
               op("d", "vec", "x", "scope: s, type: Data") + op("b", "vec", "a_out", "scope: s"));
    CHECK_FALSE(f.diags.has_errors());
    CHECK(p.segments.size() == 1);
    test::GraphFixture g;
    auto q = plan_of(g, header("scopes: {s: \"strict-scope-check=bypass\"}\n") +
                            op("a", "vec", "x", "scope: s") +
                            op("t", "vec", "a_out", "scope: s, engine: tbe") +
                            op("b", "vec", "t_out", "scope: s"));
    CHECK_FALSE(g.diags.has_errors());
    CHECK(q.segments.size() == 2);
    test::GraphFixture h;
    // Nothing is fused when fusion is off: there is nothing to check.
    plan_of(h, header("super_kernel_optimize: false\nscopes: {s: \"strict-scope-check=abort\"}\n") +
                   op("a", "vec", "x", "scope: s"));
    CHECK_FALSE(h.diags.has_errors());
}
