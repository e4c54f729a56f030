// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/json_text.hpp"
#include "skforge/support/error.hpp"

#include <catch2/catch.hpp>

using namespace skforge::package;

TEST_CASE("nesting is counted outside strings only", "[package][json_text]") {
    CHECK_FALSE(check_json_depth(R"({"a":[[1],{"b":[2]}]})", 4));
    CHECK(check_json_depth(R"({"a":[[1],{"b":[2]}]})", 3));
    // Brackets and escaped quotes inside strings do not count.
    CHECK_FALSE(check_json_depth(R"(["[[[[", "\"[[[[", "\\"])", 1));
    CHECK(check_json_depth(R"(["\\", [[]]])", 2));
}

TEST_CASE("deep documents are refused before the parser recurses", "[package][json_text]") {
    std::string deep = std::string(200000, '[') + std::string(200000, ']');
    CHECK_THROWS_WITH(parse_json_limited(deep, "/x/index.json"),
                      Catch::Contains("'/x/index.json' nests arrays and objects more than 64"));
    std::string ok = std::string(64, '[') + std::string(64, ']');
    CHECK(parse_json_limited(ok, "ok").is_array());
    CHECK_THROWS_WITH(parse_json_limited("{", "/x/bad.json"),
                      Catch::Contains("'/x/bad.json' is not valid JSON"));
}
