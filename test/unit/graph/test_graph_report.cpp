// SPDX-License-Identifier: Apache-2.0
// What skc check says of a valid graph and after the diagnostics of an invalid one.
#include "graph_fixture.hpp"
#include "skforge/graph/report.hpp"

#include <catch2/catch.hpp>

using namespace skforge;
using test::header;
using test::op;

TEST_CASE("check counts the operators, scopes and kernel metadata files of a valid graph",
          "[graph][report]") {
    test::GraphFixture f;
    REQUIRE(f.load(header("scopes: {m: \"stream-fusion=1\"}\n") + op("a", "vec", "x", "scope: m") +
                   op("b", "cube", "a_out", "scope: m") + op("c", "vec", "b_out")));
    CHECK(graph::report::check_text("g.yaml", f.graph) ==
          "g.yaml: valid: 3 operators, 1 scopes, 2 kernel metadata files");
}

TEST_CASE("an invalid graph's summary counts its errors", "[graph][report]") {
    graph::Diagnostics d;
    d.error({"g.yaml", 3, 1}, "unknown tensor 'y'");
    d.warning({"g.yaml", 4, 1}, "unused output");
    d.error({"g.yaml", 5, 1}, "duplicate operator 'a'");
    CHECK(graph::report::errors_text("dir/g.yaml", d) == "dir/g.yaml: 2 error(s)");
}
