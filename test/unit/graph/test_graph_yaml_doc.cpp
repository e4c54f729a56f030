// SPDX-License-Identifier: Apache-2.0
#include "skforge/graph/yaml_doc.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

using skforge::graph::YamlDoc;
using skforge::graph::YamlError;

namespace {

// The tree as text: kinds, scalars and structure (not positions).
std::string dump(const YamlDoc::Node& n) {
    if (n.is_null())
        return "~";
    if (n.is_scalar())
        return "'" + std::string(n.scalar()) + "'";
    std::string out = n.is_map() ? "{" : "[";
    for (std::size_t i = 0; i < n.size(); ++i) {
        if (i)
            out += ",";
        out += n.is_map() ? dump(n.key(i)) + ":" + dump(n.value(i)) : dump(n.item(i));
    }
    return out + (n.is_map() ? "}" : "]");
}

void same_as_yaml_cpp(const std::string& text) {
    auto fast = YamlDoc::parse(text);
    auto slow = YamlDoc::parse_with_yaml_cpp(text);
    INFO(text);
    CHECK(fast.fast_path());
    CHECK(dump(fast.root()) == dump(slow.root()));
}

} // namespace

TEST_CASE("the fast parser reads what yaml-cpp reads, the same way", "[graph][yaml]") {
    same_as_yaml_cpp("a: 1\nb: two words\nc:\n  - x\n  - {k: v, n: [1, 2, 3]}\n");
    same_as_yaml_cpp("# comment\nname: t   # trailing\nops:\n- name: a\n  type: B\n- name: c\n");
    same_as_yaml_cpp("s: 'it''s'\nd: \"q\\\"x\\\\y\"\ne: \"\"\nf: ~\ng: null\nh:\n");
    same_as_yaml_cpp(
        "flow: {a: [1, {b: c}], d: 'x, y', e: }\nnested:\n  deeper:\n    deepest: 1\n");
    same_as_yaml_cpp(
        "list: [a,\n  b,   # comment\n  c]\nurl: http://x/y#frag\nkey with spaces: v\n");
    same_as_yaml_cpp("---\nk: v\n");
    same_as_yaml_cpp("ops:\n  - {name: a, inputs: [x, y], outputs: [{name: z, shape: [1, 2], "
                     "dtype: float16}]}\n");
}

TEST_CASE("the example graphs take the fast path and match yaml-cpp", "[graph][yaml]") {
    for (const char* g : {"moe_block", "tbe_cut", "two_stream"}) {
        std::string path =
            std::string(SKFORGE_SOURCE_DIR) + "/share/skforge/examples/" + g + "/graph.yaml";
        same_as_yaml_cpp(skforge::test::read_text(path));
    }
}

TEST_CASE("anything outside the subset goes to yaml-cpp", "[graph][yaml]") {
    for (const char* text :
         {"a: &x 1\nb: *x\n", "a: !!str 1\n", "a: |\n  line\n  line\n", "a: >\n  folded\n",
          "a: multi\n  line plain\n", "? complex\n: key\n", "a: 1\n---\nb: 2\n"}) {
        auto doc = YamlDoc::parse(text);
        INFO(text);
        CHECK_FALSE(doc.fast_path());
    }
    auto doc = YamlDoc::parse("a: &x 1\nb: *x\n");
    CHECK(doc.root().find("b")->scalar() == "1");
}

TEST_CASE("invalid YAML is reported with yaml-cpp's message and position", "[graph][yaml]") {
    try {
        YamlDoc::parse("a: [1, 2\nb: 3\n");
        FAIL("parsed");
    } catch (const YamlError& e) {
        CHECK(e.line >= 1);
        CHECK(std::string(e.what()).size() > 0);
    }
}

TEST_CASE("positions are 1-based line and column", "[graph][yaml]") {
    auto doc = YamlDoc::parse("a: 1\nops:\n  - name: x\n    type: Y\n");
    auto ops = *doc.root().find("ops");
    CHECK(ops.line() == 3);
    CHECK(ops.column() == 3);
    auto type = *ops.item(0).find("type");
    CHECK(type.line() == 4);
    CHECK(type.column() == 11);
}

namespace {

// Parses every piece of `split` and joins their items, as the loader does.
std::string dump_pieces(const YamlDoc::Split& split) {
    std::string out = "[";
    YamlDoc piece;
    for (std::size_t i = 0; i < split.pieces.size(); ++i) {
        REQUIRE(YamlDoc::parse_piece(split, i, piece));
        for (std::size_t k = 0; k < piece.root().size(); ++k)
            out += (out.size() > 1 ? "," : "") + dump(piece.root().item(k));
    }
    return out + "]";
}

// Item positions, joined: the pieces must report the lines and columns of the whole parse.
std::string positions(const YamlDoc::Node& n) {
    std::string out = std::to_string(n.line()) + ":" + std::to_string(n.column());
    for (std::size_t i = 0; i < (n.is_map() ? 2 * n.size() : n.size()); ++i)
        out += " " + positions(n.is_map() ? (i % 2 ? n.value(i / 2) : n.key(i / 2)) : n.item(i));
    return out;
}

} // namespace

TEST_CASE("a split document's pieces parse to the whole document's items", "[graph][yaml]") {
    for (std::string text :
         {std::string("name: g\nops:\n  - {name: a, x: [1, 2]}\n  - {name: b}\n\n  # c\n"
                      "  - name: c\n    k: v\n  -\n    name: d\nscopes: {s: x}\n"),
          std::string("ops:\n- {name: a}\n- {name: b}\n- [1, 2]\n"),
          std::string("# head\n---\nops:   # list\n\n  - a\n  - {b: 'q''s', c: \"e\\n\"}\n"
                      "  - c\ntail: 1\n")}) {
        INFO(text);
        auto whole = YamlDoc::parse(text);
        REQUIRE(whole.fast_path());
        auto ops = *whole.root().find("ops");
        for (std::size_t piece_bytes : {1u, 8u, 20u, 1000u}) {
            auto split = YamlDoc::split(skforge::support::share_text(text), "ops", piece_bytes);
            REQUIRE(split);
            CHECK(split->pieces.size() >= (piece_bytes == 1 ? ops.size() : 1));
            CHECK(dump_pieces(*split) == dump(ops));
            // The rest is the document without the list, positions unchanged.
            CHECK(split->rest.root().find("ops")->is_null());
            CHECK(positions(split->rest.root().key(0)) == positions(whole.root().key(0)));
            YamlDoc first;
            REQUIRE(YamlDoc::parse_piece(*split, 0, first));
            CHECK(positions(first.root().item(0)) == positions(ops.item(0)));
            YamlDoc last;
            REQUIRE(YamlDoc::parse_piece(*split, split->pieces.size() - 1, last));
            CHECK(positions(last.root().item(last.root().size() - 1)) ==
                  positions(ops.item(ops.size() - 1)));
        }
    }
}

TEST_CASE("a document of another shape is not split, or its pieces refuse", "[graph][yaml]") {
    auto split = [](const std::string& text) {
        return YamlDoc::split(skforge::support::share_text(text), "ops", 1);
    };
    CHECK_FALSE(split("name: g\n"));               // no key
    CHECK_FALSE(split("ops: [a, b]\n"));           // a flow list
    CHECK_FALSE(split("ops:\n  a: 1\n"));          // a mapping
    CHECK_FALSE(split("  ops:\n  - a\n"));         // not at the top level
    CHECK_FALSE(split("a: &x 1\nops:\n  - *x\n")); // the rest needs yaml-cpp
    CHECK_FALSE(split("ops:\n  - a\n- b\n"));      // the rest would differ from the whole
    // An item whose flow list spans a line that looks like the next item: the piece before it
    // does not end where the next begins.
    auto s = split("ops:\n  - [a,\n  - b]\n  - c\n");
    REQUIRE(s);
    YamlDoc piece;
    bool all = true;
    for (std::size_t i = 0; i < s->pieces.size(); ++i)
        all = all && YamlDoc::parse_piece(*s, i, piece);
    CHECK_FALSE(all);
    // Nesting too deep inside a piece refuses it (the whole parse reports the error).
    std::string deep = "ops:\n  - " + std::string(300, '[') + std::string(300, ']') + "\n";
    auto d = split(deep);
    REQUIRE(d);
    CHECK_FALSE(YamlDoc::parse_piece(*d, 0, piece));
}

TEST_CASE("nesting too deep is an error on both paths, never a crash", "[graph][yaml]") {
    std::string block;
    for (int i = 0; i < 3000; ++i)
        block += std::string(static_cast<std::size_t>(i), ' ') + "k:\n";
    std::string dashes;
    for (int i = 0; i < 3000; ++i)
        dashes += "- ";
    dashes += "x\n";
    // Without and with an anchor, which sends the document to yaml-cpp.
    for (const std::string& text : {block, "a: &x 1\n" + block, dashes, "a: &x 1\nb:\n" + dashes}) {
        try {
            (void)YamlDoc::parse(text);
            FAIL("parsed");
        } catch (const YamlError& e) {
            CHECK_THAT(e.what(), Catch::Contains("nesting deeper than"));
        }
    }
}
