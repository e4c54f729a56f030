// SPDX-License-Identifier: Apache-2.0
#include "skforge/graph/options.hpp"

#include <catch2/catch.hpp>

using namespace skforge::graph;

namespace {
ScopeOptions parse(const std::string& text, Diagnostics& d) {
    return parse_scope_options(text, {}, {"g.yaml", 3, 5}, d);
}
std::string first(const Diagnostics& d) {
    return d.items().empty() ? "" : format_diagnostic(d.items().front());
}
} // namespace

TEST_CASE("scope options parse every key", "[graph][options]") {
    Diagnostics d;
    auto o = parse(
        "func-align=4096:preload-code=max:early-start=2:stream-fusion=0:debug-dcci-all=1:"
        "debug-sync-all=1:feed-sync-all=1:profiling=1:compile-options=-O2:strict-scope-check=abort:"
        "dcci-before-kernel-start=A,B*:dcci-after-kernel-end=C:dcci-disable-on-kernel=D:split-mode="
        "64:"
        "debug-aic-num=4:debug-aiv-num=8",
        d);
    CHECK(d.items().empty());
    CHECK(o.func_align == 4096);
    CHECK(o.preload_code == PreloadCode::max);
    CHECK(o.early_start == 2);
    CHECK_FALSE(o.stream_fusion);
    CHECK(o.debug_dcci_all);
    CHECK(o.feed_sync_all);
    CHECK(o.compile_options == "-O2");
    CHECK(o.strict_scope_check == StrictScopeCheck::abort);
    CHECK(o.dcci_before_kernel_start == std::vector<std::string>{"A", "B*"});
    CHECK(o.split_mode == 64);
    CHECK(*o.debug_aiv_num == 8);
}

TEST_CASE("scope option rule: unknown key is an error with its position", "[graph][options]") {
    Diagnostics d;
    parse("early-strat=1", d);
    CHECK(first(d) == "g.yaml:3:5: error: unknown scope option 'early-strat' (see "
                      "graph-format.md in /usr/share/doc/skforge/ for the keys)");
}

TEST_CASE("scope option rule: duplicate key is an error", "[graph][options]") {
    Diagnostics d;
    parse("early-start=1:early-start=2", d);
    CHECK_THAT(first(d), Catch::Contains("'early-start' is given twice"));
}

TEST_CASE("scope option rule: a pair without '=' is a warning", "[graph][options]") {
    Diagnostics d;
    parse("early-start=1:oops", d);
    CHECK_FALSE(d.has_errors());
    CHECK_THAT(first(d), Catch::Contains("warning: scope option 'oops' has no '='"));
}

TEST_CASE("scope option rule: values are range-checked", "[graph][options]") {
    for (const char* bad : {"func-align=3", "func-align=1", "preload-code=some", "early-start=3",
                            "profiling=2", "strict-scope-check=maybe", "split-mode=0",
                            "split-mode=65", "dcci-before-kernel-start=*x"}) {
        Diagnostics d;
        parse(bad, d);
        CHECK(d.has_errors());
    }
    Diagnostics ok;
    parse("func-align=0:split-mode=1", ok);
    CHECK_FALSE(ok.has_errors());
}

TEST_CASE("scope option rule: debug core ratio", "[graph][options]") {
    for (auto [text, good] :
         std::vector<std::pair<std::string, bool>>{{"debug-aic-num=2:debug-aiv-num=0", true},
                                                   {"debug-aic-num=0:debug-aiv-num=3", true},
                                                   {"debug-aic-num=3:debug-aiv-num=3", true},
                                                   {"debug-aic-num=3:debug-aiv-num=6", true},
                                                   {"debug-aic-num=2:debug-aiv-num=3", false},
                                                   {"debug-aic-num=0:debug-aiv-num=0", false},
                                                   {"debug-aiv-num=0", false}}) {
        Diagnostics d;
        parse(text, d);
        CHECK(d.has_errors() == !good);
    }
    // One count alone leaves the other kind of core none, as the vendor reads an absent count
    // (vendor kernel_info options such as "debug-aiv-num=40").
    Diagnostics d;
    auto aic = parse("debug-aic-num=12", d);
    CHECK(aic.debug_aic_num == 12);
    CHECK(aic.debug_aiv_num == 0);
    auto aiv = parse("debug-aiv-num=40", d);
    CHECK(aiv.debug_aic_num == 0);
    CHECK(aiv.debug_aiv_num == 40);
    CHECK_FALSE(d.has_errors());
}

TEST_CASE("graph options validate, flatten and set scope defaults", "[graph][options]") {
    Diagnostics d;
    GraphOptionMap m;
    std::vector<std::string> list = {"MatMul*", "Add"};
    m["preload_code"] = *check_graph_option("preload_code", "2", nullptr, {}, d);
    m["split_mode"] = *check_graph_option("split_mode", "2", nullptr, {}, d);
    m["dcci_before_kernel_start"] =
        *check_graph_option("dcci_before_kernel_start", "", &list, {}, d);
    CHECK_FALSE(d.has_errors());
    CHECK(flatten_graph_options(m) ==
          "dcci_before_kernel_start=MatMul*,Add:preload_code=2:split_mode=2");
    auto o = scope_defaults(m);
    CHECK(o.preload_code == PreloadCode::max);
    CHECK(o.split_mode == 2);
    CHECK(o.dcci_before_kernel_start == list);
    CHECK_FALSE(check_graph_option("split_mode", "5", nullptr, {}, d));
    CHECK_FALSE(check_graph_option("preload", "1", nullptr, {}, d));
    std::vector<std::string> bad = {"*x"};
    CHECK_FALSE(check_graph_option("ubuf_lock_ignore_kernel", "", &bad, {}, d));
    CHECK(d.error_count() == 3);
}

TEST_CASE("OpType patterns", "[graph][options]") {
    CHECK(op_type_matches("MatMul*", "MatMulV2"));
    CHECK(op_type_matches("Mat*V2", "MatMulV2"));
    CHECK(op_type_matches("Add", "Add"));
    CHECK_FALSE(op_type_matches("Add", "AddN"));
    CHECK_FALSE(op_type_matches("Mat*V3", "MatMulV2"));
    CHECK_FALSE(check_op_type_pattern("a.b-c_d*"));
    CHECK(check_op_type_pattern("*a"));
    CHECK(check_op_type_pattern("a b"));
}
