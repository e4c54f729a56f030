// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/string_map.hpp"

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

using skforge::support::StringMap;

TEST_CASE("string map: finds what was inserted, keeps the first value, grows", "[support]") {
    StringMap<int> m;
    CHECK(m.find("x") == nullptr); // empty, never reserved
    auto [v, fresh] = m.emplace("x", 1);
    CHECK(fresh);
    CHECK(*v == 1);
    auto [again, fresh_again] = m.emplace("x", 2);
    CHECK_FALSE(fresh_again);
    CHECK(*again == 1);
    CHECK(m.find("y") == nullptr);
    m["y"] += 5;
    CHECK(*m.find("y") == 5);
    CHECK(m.size() == 2);
    CHECK(m.find("") == nullptr);
    m.emplace("", 7);
    CHECK(*m.find("") == 7);
}

TEST_CASE("string map: agrees with std::unordered_map on many random names", "[support]") {
    std::mt19937 rng(42);
    std::vector<std::string> names;
    for (int i = 0; i < 20000; ++i) // short names collide in their low hash bits often
        names.push_back("t" + std::to_string(rng() % 12000));
    StringMap<int> m;
    std::unordered_map<std::string, int> ref;
    for (std::size_t i = 0; i < names.size(); ++i) {
        bool fresh = m.emplace(names[i], static_cast<int>(i)).second;
        CHECK(fresh == ref.emplace(names[i], static_cast<int>(i)).second);
    }
    CHECK(m.size() == ref.size());
    for (const auto& [k, v] : ref)
        REQUIRE((m.find(k) != nullptr && *m.find(k) == v));
    for (int i = 0; i < 1000; ++i)
        CHECK(m.find("absent" + std::to_string(i)) == nullptr);
}

TEST_CASE("string map: long keys that share their first bytes stay apart", "[support]") {
    StringMap<int> m;
    std::vector<std::string> keys;
    for (int i = 0; i < 500; ++i) // same length, same first 20 bytes, differing after them
        keys.push_back("layer_0000_attention_" + std::to_string(1000 + i));
    for (std::size_t i = 0; i < keys.size(); ++i)
        CHECK(m.emplace(keys[i], static_cast<int>(i)).second);
    for (std::size_t i = 0; i < keys.size(); ++i)
        REQUIRE((m.find(keys[i]) != nullptr && *m.find(keys[i]) == static_cast<int>(i)));
    CHECK(m.find("layer_0000_attention_0999") == nullptr);
    CHECK(m.find("layer_0000_attention_") == nullptr);
    CHECK(m.find("layer_0000_attention_10000") == nullptr);
}
