// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/index.hpp"
#include "skforge/install/layout.hpp"

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

using namespace skforge::install;
using nlohmann::json;

TEST_CASE("config.ini round-trips and drops unsafe names", "[install][index]") {
    std::vector<std::string> order = {"a", "b_2", "c-3"};
    CHECK(parse_config_ini(render_config_ini(order)) == order);
    CHECK(parse_config_ini(render_config_ini({})).empty());
    CHECK(parse_config_ini("install_order=a,../x,,b\n") == std::vector<std::string>{"a", "b"});
    CHECK(parse_config_ini("# nothing\n").empty());
}

TEST_CASE("config.ini is read line by line: a comment is not the order, CR ends a line (issue 36)",
          "[install][index]") {
    using Names = std::vector<std::string>;
    CHECK(parse_config_ini("# was: install_order=old\ninstall_order=other\n") == Names{"other"});
    CHECK(parse_config_ini("x_install_order=old\ninstall_order=a,b") == Names{"a", "b"});
    CHECK(parse_config_ini("# skforge\r\ninstall_order=a,b\r\n") == Names{"a", "b"});
    // The first install_order line is the order, as the scripts read it.
    CHECK(parse_config_ini("install_order=a\ninstall_order=b\n") == Names{"a"});
    CHECK(parse_config_ini(" install_order=a\n").empty());
}

TEST_CASE("later packages win per simplifiedKey; entries are kept as written, compacted",
          "[install][index]") {
    PackageIndex a = {{"soc", scan_index_text(R"({"Add":{"dynamicRankSupport":false,"staticList":[
        {"simplifiedKey":"Add/k1","binPath":"pa/soc/Add/a1.o","coreType":2},
        {"simplifiedKey":"Add/k2", "binPath" : "pa/soc/Add/a2.o","coreType":2}]}})")}};
    PackageIndex b = {{"soc", scan_index_text(R"({"Add":{"dynamicRankSupport":true,"staticList":[
        {"simplifiedKey":"Add/k2","binPath":"pb/soc/Add/b2.o","coreType":0}]},
        "Mul":{"staticList":[{"binPath":"pb/soc/Mul/m.o","x":"a b\"c"}]}})")},
                      {"soc2", scan_index_text(R"({"Add":{"staticList":[]}})")}};
    auto g = merge_indexes({{"pa", a}, {"pb", b}});
    REQUIRE(g.count("soc") == 1);
    CHECK(g["soc"] ==
          "{\n"
          "\"Add\":{\"staticList\":[\n"
          "{\"simplifiedKey\":\"Add/k1\",\"binPath\":\"pa/soc/Add/a1.o\",\"coreType\":2},\n"
          "{\"simplifiedKey\":\"Add/k2\",\"binPath\":\"pb/soc/Add/b2.o\",\"coreType\":0}\n"
          "]},\n"
          "\"Mul\":{\"staticList\":[\n"
          "{\"binPath\":\"pb/soc/Mul/m.o\",\"x\":\"a b\\\"c\"}\n"
          "]}\n"
          "}\n");
    CHECK(nlohmann::json::parse(g["soc"])["Add"]["staticList"].size() == 2);
    CHECK(g["soc2"] == "{\n}\n"); // a SoC the packages have, without entries
    auto reversed = merge_indexes({{"pb", b}, {"pa", a}});
    auto list = nlohmann::json::parse(reversed["soc"])["Add"]["staticList"];
    REQUIRE(list.size() == 2);
    CHECK(list[0]["binPath"] == "pa/soc/Add/a1.o"); // the replaced entry moved to the end
    CHECK(list[1]["binPath"] == "pa/soc/Add/a2.o");
}

TEST_CASE("an index is read as tokens: keys of any JSON type, strings with escapes and brackets",
          "[install][index]") {
    auto idx =
        scan_index_text("\xEF\xBB\xBF { \"B\\u0041\" : { \"other\" : [1, {\"staticList\": [9]}],\n"
                        "\"staticList\" : [ {\"simplifiedKey\": [\"x]\", \"y,\"]},"
                        " 7 , {\"binPath\":\"q\"} , {\"z\": {\"simplifiedKey\": \"no\"}} ] },"
                        " \"N\": 3 }");
    REQUIRE(idx.size() == 1);
    const auto& list = idx.at("B\\u0041");
    REQUIRE(list.size() == 4);
    CHECK(list[0].key == "k:[\"x]\",\"y,\"]");
    CHECK(list[0].text == "{\"simplifiedKey\":[\"x]\",\"y,\"]}");
    CHECK(list[1].key == "e:7");
    CHECK(list[2].key == "p:\"q\"");
    CHECK(list[3].key == "e:{\"z\":{\"simplifiedKey\":\"no\"}}"); // only the entry's own members
    CHECK(shown_json_text("\"a\\u0041\"") == "aA");
    CHECK(shown_json_text("[1]") == "[1]");
}

TEST_CASE("key_uses names every provider of a key in install order; the last one wins",
          "[install][index]") {
    PackageIndex a = {{"soc", scan_index_text(R"({"Add":{"staticList":[
        {"simplifiedKey":"Add/k1","binPath":"pa/soc/Add/a1.o"},
        {"simplifiedKey":"Add/k2","binPath":"pa/soc/Add/a2.o"}]}})")}};
    PackageIndex b = {{"soc", scan_index_text(R"({"Add":{"staticList":[
        {"simplifiedKey":"Add/k2","binPath":"pb/soc/Add/b2.o"}]},
        "Mul":{"staticList":[{"binPath":"pb/soc/Mul/m.o"}]}})")}};
    PackageIndex c = {{"soc", scan_index_text(R"({"Add":{"staticList":[
        {"simplifiedKey":"Add/k2","binPath":"pc/soc/Add/c2.o"}]}})")}};
    auto uses = key_uses({{"pa", a}, {"pb", b}, {"pc", c}});
    REQUIRE(uses.size() == 3);
    CHECK(uses[0].key == "Add/k1");
    CHECK(uses[0].winner() == "pa");
    CHECK(uses[1].key == "Add/k2");
    CHECK(uses[1].winner() == "pc");
    REQUIRE(uses[1].providers.size() == 3);
    CHECK(uses[1].providers[0] == std::pair<std::string, std::string>{"pa", "pa/soc/Add/a2.o"});
    CHECK(uses[2].key == "pb/soc/Mul/m.o"); // no simplifiedKey: keyed by binPath
    CHECK(uses[2].op == "Mul");
    auto shadowed = shadowed_keys(uses);
    REQUIRE(shadowed.size() == 1);
    CHECK(shadowed[0].key == "Add/k2");
    // The winner agrees with the merged index.
    auto g = merge_indexes({{"pa", a}, {"pb", b}, {"pc", c}});
    CHECK(nlohmann::json::parse(g["soc"])["Add"]["staticList"][1]["binPath"] == "pc/soc/Add/c2.o");
}
