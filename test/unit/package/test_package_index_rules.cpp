// SPDX-License-Identifier: Apache-2.0
#include "craft.hpp"
#include "skforge/package/index_rules.hpp"
#include "skforge/support/error.hpp"

#include <catch2/catch.hpp>

using namespace skforge;
using namespace skforge::package;
using nlohmann::json;

namespace {

Manifest kernels() {
    return test::make_manifest(
        "kp", {{"soc", EntryType::directory, 0755, 0, ""}, test::file_entry("soc/add.o", "k")});
}

std::vector<std::string> problems(const std::string& bin) {
    auto doc = json::parse(R"({"Add":{"staticList":[{"binPath":")" + bin + R"("}]}})");
    return check_package_index(doc, "kp", kernels());
}

} // namespace

TEST_CASE("index paths are recognised only at config/<soc dir>/", "[package][index_rules]") {
    CHECK(is_index_path("config/ascend910b/binary_info_config.json"));
    CHECK_FALSE(is_index_path("config/binary_info_config.json"));
    CHECK_FALSE(is_index_path("config/a/b/binary_info_config.json"));
    CHECK_FALSE(is_index_path("x/config/ascend910b/binary_info_config.json"));
}

TEST_CASE("binPath must name a file of the package itself", "[package][index_rules]") {
    CHECK(problems("kp/soc/add.o").empty());
    CHECK_THAT(problems("../../../../etc/shadow").at(0), Catch::Contains("'..' component"));
    CHECK_THAT(problems("other/soc/add.o").at(0), Catch::Contains("outside the package"));
    CHECK_THAT(problems("kp/./soc/add.o").at(0), Catch::Contains("'.' component"));
    CHECK_THAT(problems("kp//soc/add.o").at(0), Catch::Contains("empty component"));
    CHECK_THAT(problems("kp/soc").at(0), Catch::Contains("names no file"));
    CHECK_THAT(problems("kp/soc/add.json").at(0), Catch::Contains("names no file"));
    CHECK_THAT(problems("kp").at(0), Catch::Contains("outside the package"));
}

TEST_CASE("an index must be OpType objects with staticList arrays", "[package][index_rules]") {
    auto m = kernels();
    CHECK(check_package_index(json::parse("[]"), "kp", m).size() == 1);
    CHECK_THAT(check_package_index(json::parse(R"({"Add":1})"), "kp", m).at(0),
               Catch::Contains("'Add' is not an object"));
    CHECK_THAT(check_package_index(json::parse(R"({"Add":{"staticList":{}}})"), "kp", m).at(0),
               Catch::Contains("staticList is not an array"));
    CHECK_THAT(check_package_index(json::parse(R"({"Add":{"binaryList":[]}})"), "kp", m).at(0),
               Catch::Contains("uses binaryList"));
    CHECK_THAT(check_package_index(json::parse(R"({"Add":{"staticList":[{"binPath":"kp/soc/add.o",
                                   "simplifiedKey":["x"]}]}})"),
                                   "kp", m)
                   .at(0),
               Catch::Contains("simplifiedKey that is not a string"));
    CHECK_THROWS_WITH(parse_package_index(R"({"Add":{"staticList":[{"binPath":"../x"}]}})",
                                          "/p/config/s/binary_info_config.json", m),
                      Catch::Contains("'/p/config/s/binary_info_config.json' is not a valid"));
}

TEST_CASE("an index that repeats an OpType or a key is refused, whichever copy is valid (issue 36)",
          "[package][index_rules]") {
    auto m = kernels();
    const std::string where = "/p/config/s/binary_info_config.json";
    // The parsed document keeps only the valid copies; the text holds the escaping binPath.
    CHECK_THROWS_WITH(
        parse_package_index(R"({"Add":{"staticList":[{"binPath":"../../../../../tmp/evil.o"}]},
                                "Add":{"staticList":[{"binPath":"kp/soc/add.o"}]}})",
                            where, m),
        Catch::Contains("'" + where + "' repeats the key \"Add\""));
    CHECK_THROWS_WITH(parse_package_index(R"({"Add":{"staticList":[{"binPath":"../x.o"}],
                                       "staticList":[{"binPath":"kp/soc/add.o"}]}})",
                                          where, m),
                      Catch::Contains("repeats the key \"staticList\""));
    CHECK_THROWS_WITH(
        parse_package_index(
            R"({"Add":{"staticList":[{"binPath":"../x.o","binPath":"kp/soc/add.o"}]}})", where, m),
        Catch::Contains("repeats the key \"binPath\""));
    CHECK_NOTHROW(
        parse_package_index(R"({"Add":{"staticList":[{"binPath":"kp/soc/add.o"}]}})", where, m));
}
