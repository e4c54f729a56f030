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

TEST_CASE("json_text: invalid UTF-8 replaced, C1 controls escaped, the rest as is",
          "[package][json_text]") {
    nlohmann::json j = {{"p", "/x\xff.run"},
                        {"c", "a\xc2\x9b"
                              "b\x1b"},
                        {"u", "\xe4\xb8\xad"}};
    CHECK(json_text(j) ==
          "{\"c\":\"a\\u009bb\\u001b\",\"p\":\"/x\xef\xbf\xbd.run\",\"u\":\"\xe4\xb8\xad\"}");
    CHECK(nlohmann::json::parse(json_text(j))["c"] == "a\xc2\x9b"
                                                      "b\x1b");
}

TEST_CASE("a key written twice in one object, or with an escape, is refused (issue 36)",
          "[package][json_text]") {
    CHECK_FALSE(check_json_keys(R"({"a":{"b":1},"b":{"a":[{"b":2},{"b":3}]}})"));
    // The parser keeps the last duplicate; a reader of the text would see both.
    CHECK(check_json_keys(R"({"Add":{"staticList":[]},"Add":{"staticList":[]}})") ==
          R"(repeats the key "Add" in one object (line 1))");
    CHECK(check_json_keys("{\"Add\":{\"staticList\":[{\"binPath\":\"x\",\n\"binPath\":\"y\"}]}}") ==
          R"(repeats the key "binPath" in one object (line 2))");
    CHECK(check_json_keys(R"({"BA":1,"B\u0041":2})") ==
          R"(writes the key "B\u0041" with a backslash escape (line 1))");
    // Strings that are values are not keys, escaped or repeated.
    CHECK_FALSE(check_json_keys(R"({"a":["a","a"],"b":"\u0061","c":{"a":"a"}})"));
    CHECK_THROWS_WITH(parse_json_limited(R"({"staticList":[],"staticList":[]})", "/x/i.json"),
                      Catch::Contains(R"('/x/i.json' repeats the key "staticList")"));
}
