// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/hex.hpp"
#include "skforge/support/sha256.hpp"

#include <catch2/catch.hpp>

using namespace skforge::support;

TEST_CASE("sha256 of known vectors", "[support][sha256]") {
    CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("sha256 streaming equals one-shot", "[support][sha256]") {
    std::string text(100000, 'x');
    Sha256 h;
    h.update(std::string_view(text).substr(0, 12345));
    h.update(std::string_view(text).substr(12345));
    CHECK(digest_hex(h.finish()) == sha256_hex(text));
}

TEST_CASE("hex round trip and rejection", "[support][hex]") {
    std::vector<std::uint8_t> bytes = {0x00, 0x7f, 0xff, 0x10};
    CHECK(to_hex(bytes) == "007fff10");
    CHECK(from_hex("007fff10") == bytes);
    CHECK_FALSE(from_hex("0"));
    CHECK_FALSE(from_hex("0G"));
    CHECK_FALSE(from_hex("AB")); // upper case is not canonical
    CHECK(is_lower_hex("ab12", 4));
    CHECK_FALSE(is_lower_hex("ab12", 5));
}
