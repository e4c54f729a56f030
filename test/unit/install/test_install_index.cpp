// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/index.hpp"
#include "skforge/install/layout.hpp"

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

TEST_CASE("later packages win per simplifiedKey and binPath is kept as the package wrote it",
          "[install][index]") {
    PackageIndex a = {{"soc", json::parse(R"({"Add":{"dynamicRankSupport":false,"staticList":[
        {"simplifiedKey":"Add/k1","binPath":"pa/soc/Add/a1.o","coreType":2},
        {"simplifiedKey":"Add/k2","binPath":"pa/soc/Add/a2.o","coreType":2}]}})")}};
    PackageIndex b = {{"soc", json::parse(R"({"Add":{"dynamicRankSupport":true,"staticList":[
        {"simplifiedKey":"Add/k2","binPath":"pb/soc/Add/b2.o","coreType":0}]},
        "Mul":{"staticList":[{"binPath":"pb/soc/Mul/m.o"}]}})")},
                      {"soc2", json::parse(R"({"Add":{"staticList":[]}})")}};
    auto g = merge_indexes({{"pa", a}, {"pb", b}});
    REQUIRE(g.count("soc") == 1);
    auto list = g["soc"]["Add"]["staticList"];
    REQUIRE(list.size() == 2);
    CHECK(list[0]["binPath"] == "pa/soc/Add/a1.o");
    CHECK(list[1]["binPath"] == "pb/soc/Add/b2.o");
    CHECK(list[1]["coreType"] == 0);
    CHECK(g["soc"]["Add"]["dynamicRankSupport"] == true);
    CHECK(g["soc"]["Mul"]["staticList"][0]["binPath"] == "pb/soc/Mul/m.o");
    CHECK_FALSE(g["soc"]["Add"].contains("binaryList"));
    CHECK(g.count("soc2") == 1);
    auto reversed = merge_indexes({{"pb", b}, {"pa", a}});
    CHECK(reversed["soc"]["Add"]["staticList"][1]["binPath"] == "pa/soc/Add/a2.o");
}

TEST_CASE("key_uses names every provider of a key in install order; the last one wins",
          "[install][index]") {
    PackageIndex a = {{"soc", json::parse(R"({"Add":{"staticList":[
        {"simplifiedKey":"Add/k1","binPath":"pa/soc/Add/a1.o"},
        {"simplifiedKey":"Add/k2","binPath":"pa/soc/Add/a2.o"}]}})")}};
    PackageIndex b = {{"soc", json::parse(R"({"Add":{"staticList":[
        {"simplifiedKey":"Add/k2","binPath":"pb/soc/Add/b2.o"}]},
        "Mul":{"staticList":[{"binPath":"pb/soc/Mul/m.o"}]}})")}};
    PackageIndex c = {{"soc", json::parse(R"({"Add":{"staticList":[
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
    auto shadowed = shadowed_keys(uses);
    REQUIRE(shadowed.size() == 1);
    CHECK(shadowed[0].key == "Add/k2");
    // The winner agrees with the merged index.
    auto g = merge_indexes({{"pa", a}, {"pb", b}, {"pc", c}});
    CHECK(g["soc"]["Add"]["staticList"][1]["binPath"] == "pc/soc/Add/c2.o");
}
