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
