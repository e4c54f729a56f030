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

TEST_CASE("later packages win per kernel key and paths become ai_core-relative",
          "[install][index]") {
    PackageIndex a = {{"soc", json::parse(R"({"Add":{"dynamicRankSupport":false,"binaryList":[
        {"simplifiedKey":["k1"],"binPath":"soc/Add/a1.json"},{"simplifiedKey":["k2"],"binPath":"soc/Add/a2.json"}]}})")}};
    PackageIndex b = {{"soc", json::parse(R"({"Add":{"dynamicRankSupport":true,"binaryList":[
        {"simplifiedKey":["k2"],"binPath":"soc/Add/b2.json"}]},"Mul":{"binaryList":[{"binPath":"soc/Mul/m.json"}]}})")},
                      {"soc2", json::parse(R"({"Add":{"binaryList":[]}})")}};
    auto g = merge_indexes({{"pa", a}, {"pb", b}});
    REQUIRE(g.count("soc") == 1);
    auto list = g["soc"]["Add"]["binaryList"];
    REQUIRE(list.size() == 2);
    CHECK(list[0]["binPath"] == "pa/soc/Add/a1.json");
    CHECK(list[1]["binPath"] == "pb/soc/Add/b2.json");
    CHECK(g["soc"]["Add"]["dynamicRankSupport"] == true);
    CHECK(g["soc"]["Mul"]["binaryList"][0]["binPath"] == "pb/soc/Mul/m.json");
    CHECK(g.count("soc2") == 1);
    auto reversed = merge_indexes({{"pb", b}, {"pa", a}});
    CHECK(reversed["soc"]["Add"]["binaryList"][1]["binPath"] == "pa/soc/Add/a2.json");
}
