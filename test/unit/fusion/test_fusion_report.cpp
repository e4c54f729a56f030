// SPDX-License-Identifier: Apache-2.0
// skc plan's --format and --layout names, and the plan written in each format.
#include "graph_fixture.hpp"
#include "skforge/fusion/report.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace skforge;
using fusion::Layout;
using fusion::PlanFormat;
using test::header;
using test::op;

TEST_CASE("plan formats and layouts by name; anything else is none", "[fusion][report]") {
    CHECK(fusion::parse_plan_format("text") == PlanFormat::text);
    CHECK(fusion::parse_plan_format("json") == PlanFormat::json);
    CHECK(fusion::parse_plan_format("dot") == PlanFormat::dot);
    CHECK(fusion::parse_plan_format("svg") == PlanFormat::svg);
    CHECK(fusion::parse_plan_format("html") == PlanFormat::html);
    CHECK_FALSE(fusion::parse_plan_format("JSON"));
    CHECK_FALSE(fusion::parse_plan_format(""));
    CHECK(fusion::parse_layout("auto") == Layout::automatic);
    CHECK(fusion::parse_layout("dot") == Layout::graphviz);
    CHECK(fusion::parse_layout("builtin") == Layout::builtin);
    CHECK_FALSE(fusion::parse_layout("graphviz"));
}

TEST_CASE("write_plan hands the sink the plan in the format asked for", "[fusion][report]") {
    test::GraphFixture f;
    REQUIRE(f.load(header("scopes: {m: \"stream-fusion=1\"}\n") + op("a", "vec", "x", "scope: m") +
                   op("b", "vec", "a_out", "scope: m") + op("n", "nosk", "b_out")));
    auto plan = fusion::make_plan(f.graph, f.diags);
    auto written = [&](PlanFormat format) {
        std::string out;
        fusion::write_plan(f.graph, plan, format, Layout::builtin,
                           [&](std::string_view piece) { out += piece; });
        return out;
    };
    auto text = written(PlanFormat::text);
    CHECK(text == fusion::plan_text(f.graph, plan));
    CHECK_THAT(text,
               Catch::StartsWith("graph t (dav-2201, Ascend910B1): 3 operators, 1 SuperKernel "
                                 "segment(s), 1 left out") &&
                   Catch::Contains("n  Tnosk  NOT_IN_SCOPE  not in any SuperKernel scope"));
    auto json = written(PlanFormat::json);
    CHECK(json == fusion::plan_json(f.graph, plan));
    auto summary = nlohmann::json::parse(json)["summary"];
    CHECK(summary["ops"] == 3);
    CHECK(summary["left_out"] == 1);
    CHECK_THAT(written(PlanFormat::dot), Catch::StartsWith("digraph"));
    CHECK_THAT(written(PlanFormat::svg), Catch::StartsWith("<?xml") && Catch::Contains("<svg"));
    CHECK_THAT(written(PlanFormat::html), Catch::Contains("<html") && Catch::Contains("<svg"));
}
