// SPDX-License-Identifier: Apache-2.0
#include "graph_fixture.hpp"
#include "skforge/fusion/picture.hpp"
#include "skforge/fusion/report.hpp"

#include <algorithm>
#include <catch2/catch.hpp>

using namespace skforge;
using test::header;
using test::op;

namespace {

// Two streams, a left-out operator, every barrier width, an event inside a SuperKernel and one
// between launches, and an early-start pair.
std::string lanes_graph() {
    return header("scopes: {m: \"stream-fusion=1:early-start=0\", t: \"early-start=1\"}\n") +
           op("pre", "vec", "x", "no_fusion: true, send_event_list: [7]") +
           op("a", "vec", "x", "stream_id: 1, scope: m") +
           op("b", "vec", "a_out", "stream_id: 1, scope: m, send_event_list: [1]") +
           op("c", "cube", "x", "scope: m, recv_event_list: [7]") +
           op("d", "cube", "c_out", "scope: m") +
           op("e", "vec", "d_out, b_out", "scope: m, recv_event_list: [1]") +
           op("g", "vec", "e_out", "scope: t") + op("h", "vec", "g_out", "scope: t");
}

struct Planned {
    test::GraphFixture f;
    fusion::Plan plan;
    fusion::Picture pic;

    explicit Planned(const std::string& yaml) {
        REQUIRE(f.load(yaml));
        plan = fusion::make_plan(f.graph, f.diags);
        REQUIRE_FALSE(f.diags.has_errors());
        pic = fusion::plan_picture(f.graph, plan);
    }

    const std::string& name(std::size_t node) const { return pic.nodes[node].lines[0]; }

    bool has(fusion::EdgeKind kind, const std::string& from, const std::string& to) const {
        return std::any_of(pic.edges.begin(), pic.edges.end(), [&](const fusion::PictureEdge& e) {
            return e.kind == kind && name(e.from) == from && name(e.to) == to;
        });
    }

    std::size_t count(fusion::EdgeKind kind) const {
        return static_cast<std::size_t>(
            std::count_if(pic.edges.begin(), pic.edges.end(),
                          [&](const fusion::PictureEdge& e) { return e.kind == kind; }));
    }
};

std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1))
        ++n;
    return n;
}

} // namespace

TEST_CASE("display_text shows control characters and replaces what is not UTF-8",
          "[fusion][picture]") {
    using fusion::display_text;
    CHECK(display_text("plain name_1") == "plain name_1");
    CHECK(display_text("a\nb\tc\x01\x7f") == "a\\x0ab\\x09c\\x01\\x7f");
    CHECK(display_text(std::string("nul\0x", 5)) == "nul\\x00x");
    CHECK(display_text("caf\xc3\xa9 \xe2\x80\xae \xf0\x9f\x98\x80") ==
          "caf\xc3\xa9 \xe2\x80\xae \xf0\x9f\x98\x80");
    const std::string bad = "\xef\xbf\xbd";
    CHECK(display_text("a\xff") == "a" + bad);              // never a lead byte
    CHECK(display_text("\xc0\x80") == bad + bad);           // overlong NUL
    CHECK(display_text("\xed\xa0\x80") == bad + bad + bad); // a surrogate
    CHECK(display_text("\xef\xbf\xbe") == bad + bad + bad); // U+FFFE: no XML character
    CHECK(display_text("x\xe2\x82") == "x" + bad + bad);    // cut short at the end
    CHECK(display_text(display_text("a\n\xff")) == display_text("a\n\xff")); // idempotent
}

TEST_CASE("DOT strings escape quotes, backslashes and entities; lines are DOT line breaks",
          "[fusion][picture]") {
    using fusion::dot_quoted;
    CHECK(dot_quoted(std::string_view("a\"b\\c&d<>{}|")) == "\"a\\\"b\\\\c&amp;d<>{}|\"");
    std::vector<std::string> lines{"name", "Type", "x\\n"};
    auto label = dot_quoted(lines);
    CHECK(label == "\"name\\nType\\nx\\\\n\"");
    CHECK(label.find('\n') == std::string::npos);
    // A tooltip is unescaped twice by Graphviz.
    CHECK(fusion::dot_tooltip("\\N \"q\" &") == "\"\\\\\\\\N \\\"q\\\" &amp;\"");
}

TEST_CASE("xml_escaped leaves no markup", "[fusion][picture]") {
    CHECK(fusion::xml_escaped("<script>a & \"b\" 'c'</script>") ==
          "&lt;script&gt;a &amp; &quot;b&quot; &#39;c&#39;&lt;/script&gt;");
    CHECK(fusion::xml_escaped("]]> <!--") == "]]&gt; &lt;!--");
}

TEST_CASE("the picture has lanes, SuperKernels with their arena peak, and every edge kind",
          "[fusion][picture]") {
    Planned t(lanes_graph());
    const auto& pic = t.pic;
    CHECK(pic.streams == std::vector<std::uint32_t>{0, 1});
    std::vector<std::string> order;
    for (std::size_t n = 0; n < pic.nodes.size(); ++n)
        order.push_back(t.name(n));
    CHECK(order == std::vector<std::string>{"pre", "a", "b", "c", "d", "e", "g", "h"});
    REQUIRE(pic.clusters.size() == t.plan.segments.size());
    for (std::size_t c = 0; c < pic.clusters.size(); ++c) {
        CHECK(pic.clusters[c].lines[0] == t.plan.segments[c].name);
        CHECK(pic.clusters[c].lines[1].rfind(
                  "arena peak " + std::to_string(t.plan.segments[c].arena_peak) + " B", 0) == 0);
    }
    CHECK(pic.nodes[0].cluster == -1);
    CHECK(pic.nodes[0].lines.back() == "NO_FUSION_MARK");
    CHECK(pic.nodes[1].lane == 1);
    using K = fusion::EdgeKind;
    CHECK(t.has(K::data, "d", "e"));
    CHECK(t.has(K::data, "b", "e"));
    CHECK(t.has(K::barrier_vector, "a", "b"));
    CHECK(t.has(K::barrier_cube, "c", "d"));
    CHECK(t.has(K::barrier_full, "d", "e"));
    CHECK(t.has(K::event_pair, "b", "e"));
    CHECK(t.has(K::event, "pre", "c"));
    CHECK(t.has(K::early_start, "g", "h"));
    CHECK(t.has(K::stream_order, "pre", "c"));
    std::size_t barriers = 0, pairs = 0;
    for (const auto& s : t.plan.segments)
        barriers += s.barriers.size(), pairs += s.early_start_pairs.size();
    CHECK(t.count(K::barrier_vector) + t.count(K::barrier_cube) + t.count(K::barrier_full) ==
          barriers);
    CHECK(t.count(K::early_start) == pairs);
}

TEST_CASE("every edge kind has its own style, in EdgeKind order", "[fusion][picture]") {
    auto styles = fusion::edge_styles();
    for (std::size_t k = 0; k < styles.size(); ++k) {
        CHECK(static_cast<std::size_t>(styles[k].kind) == k);
        CHECK(styles[k].color.size() == 7);
        for (std::size_t j = 0; j < k; ++j)
            CHECK(styles[j].name != styles[k].name);
    }
}

TEST_CASE("the DOT has a cluster per SuperKernel and per stream inside it, and real line breaks",
          "[fusion][picture]") {
    Planned t(lanes_graph());
    auto dot = fusion::picture_dot(t.pic);
    CHECK(occurrences(dot, "subgraph cluster_sk") == 2 + 3); // sk m: 2 lanes, sk t: 1 lane
    CHECK(dot.find("label=\"stream 1\"") != std::string::npos);
    CHECK(dot.find("n0 [label=\"pre\\nTvec\\nstream 0\\nNO_FUSION_MARK\"") != std::string::npos);
    CHECK(dot.find("\\\\n") == std::string::npos);
    CHECK(dot.find("class=\"barrier-cube\"") != std::string::npos);
    CHECK(dot == fusion::plan_dot(t.f.graph, t.plan));
}

TEST_CASE("the built-in SVG escapes every name and draws every node, box and visible edge",
          "[fusion][picture]") {
    fusion::Picture pic;
    pic.title = "t";
    pic.streams = {0, 3};
    pic.clusters.push_back({0, {"sk<1>", "arena peak 512 B"}, "tip & more"});
    pic.nodes.push_back(
        {0, {"<script>alert(1)</script>", "T"}, "<script>alert(1)</script> \"x\" & 'y'", 0, 0, 0});
    pic.nodes.push_back({1, {"b]]>", "T"}, "", -1, 3, 1});
    pic.edges.push_back({0, 1, fusion::EdgeKind::barrier_full, "barrier full", "<b>"});
    pic.edges.push_back({0, 1, fusion::EdgeKind::stream_order, "", ""});
    auto svg = fusion::picture_svg(pic);
    CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
    CHECK(svg.find("<script") == std::string::npos);
    CHECK(svg.find("<title>&lt;script&gt;alert(1)&lt;/script&gt; ") != std::string::npos);
    CHECK(svg.find(">&lt;script&gt;alert(1)&lt;/scri\xe2\x80\xa6</text>") !=
          std::string::npos); // cut
    CHECK(svg.find("]]>") == std::string::npos);
    CHECK(svg.find("sk&lt;1&gt;") != std::string::npos);
    CHECK(svg.find("&quot;x&quot; &amp; &#39;y&#39;") != std::string::npos);
    CHECK(occurrences(svg, "<g class=\"node\"") == 2);
    CHECK(occurrences(svg, "<g class=\"cluster\"") == 1);
    CHECK(occurrences(svg, "<g class=\"edge ") == 1); // stream order is invisible
    CHECK(svg.find(">stream 3<") != std::string::npos);
    CHECK(occurrences(svg, "<g") == occurrences(svg, "</g>"));
    CHECK(svg == fusion::picture_svg(pic));
}

TEST_CASE("the built-in layout puts concurrent streams side by side", "[fusion][picture]") {
    Planned t(lanes_graph());
    auto svg = fusion::picture_svg(t.pic);
    // a (stream 1) and c (stream 0) both start the SuperKernel: the same column.
    auto x_of = [&](std::size_t n) {
        auto g = svg.find("<g class=\"node\" id=\"n" + std::to_string(n) + "\"");
        REQUIRE(g != std::string::npos);
        auto x = svg.find("x=\"", svg.find("<rect", g)) + 3;
        return std::stoi(svg.substr(x));
    };
    CHECK(x_of(1) == x_of(3));
    CHECK(x_of(0) < x_of(1));
    CHECK(x_of(2) > x_of(1));
}

TEST_CASE("HTML escapes names and holds every table", "[fusion][picture]") {
    Planned t(header("scopes: {s: \"\"}\n") +
              op("<img src=x onerror=alert(1)>", "vec", "x", "scope: s") +
              op("b", "aicpu", "x", "scope: s"));
    auto html = fusion::plan_html(t.f.graph, t.plan, fusion::Layout::builtin);
    CHECK(html.find("<img") == std::string::npos);
    CHECK(html.find("&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
    CHECK(occurrences(html, "<script>") == 1);
    CHECK(html.find("src=\"") == std::string::npos); // nothing loaded from outside
    CHECK(html.find("href=\"") == std::string::npos);
    for (const char* caption : {"SuperKernels", "sub-kernels of s", "barriers and early-start",
                                "tensors of s", "code layout of s", "events", "operators left out"})
        CHECK(html.find("<caption>" + std::string(caption)) != std::string::npos);
    CHECK(html.find("<td>OP_UNSUPPORT</td>") != std::string::npos);
    CHECK(html.find("skforge&#39;s built-in layout") != std::string::npos);
}
