#include "graph_fixture.hpp"

#include <catch2/catch.hpp>

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
    CHECK_THAT(f.first(), Catch::Contains("must be 1..255 bytes"));
    std::string many = header();
    for (int i = 0; i < 1025; ++i)
        many += op("a" + std::to_string(i), "vec", "x", "scope: s" + std::to_string(i));
    test::GraphFixture g;
    CHECK_FALSE(g.load(many));
    CHECK_THAT(g.first(), Catch::Contains("1025 scopes, more than 1024"));
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
