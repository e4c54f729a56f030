// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/json_text.hpp"
#include "skforge/support/error.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

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

TEST_CASE("the texts the scripts' awk refuses are the ones parse_json_limited refuses (issue 36)",
          "[package][json_text]") {
    // The same cases as standalone_index.bats "every awk refuses the same index texts…".
    for (
        const std::string& ok : std::vector<std::string>{
            R"({"Add":{"staticList":[{"binPath":"a/b.o","simplifiedKey":"k\"[{"}]},"x":[1.5e3,-0,true,null,false,"\u0041\ud83d\ude00\\"]})",
            "\xEF\xBB\xBF{\"a\":\"\xE4\xB8\xAD\"}\r",
            R"({"a":1.7976931348623157e308,"b":1e-999,"c":0e999})"})
        CHECK_NOTHROW(parse_json_limited(ok, "t"));
    for (const std::string& bad : std::vector<std::string>{
             "{\"a\":[1,]}", "{\"a\":1,}", "{a:1}", "{\"a\":01}", "{\"a\":1e999}",
             R"({"a":"\ud83d"})", R"({"a":"\x"})", "{\"a\":\"\t\"}", "{\"a\":\"\xFF\"}",
             "{\"a\":\"\xED\xA0\x80\"}", "{\"a\":1} {}", "{\"a\":[}", "{\"a\" 1}", ""})
        CHECK_THROWS_WITH(parse_json_limited(bad, "t"), "'t' is not valid JSON");
}
