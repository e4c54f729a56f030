// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/manifest.hpp"
#include "skforge/support/error.hpp"

#include <algorithm>
#include <catch2/catch.hpp>

using namespace skforge::package;
using skforge::support::Error;

namespace {

const std::string k_digest(64, 'a');

Manifest sample() {
    Manifest m;
    m.name = "pkg";
    m.version = "1.0";
    m.npu_arch = "dav-2201";
    m.soc_version = "Ascend910B1";
    m.toolchain = "skforge 0.1.0";
    m.inputs_digest = k_digest;
    m.entries = {{"dir", EntryType::directory, 0755, 0, ""},
                 {"dir/k.o", EntryType::file, 0644, 12, k_digest},
                 {"install.sh", EntryType::file, 0755, 3, k_digest}};
    return m;
}

std::string first_error(const Manifest& m) {
    auto errors = validate_manifest(m);
    return errors.empty() ? "" : errors.front();
}

} // namespace

TEST_CASE("a manifest round-trips through its JSON text", "[package][manifest]") {
    auto m = sample();
    CHECK(validate_manifest(m).empty());
    auto text = manifest_to_json(m);
    auto back = parse_manifest(text, "m.json");
    CHECK(manifest_to_json(back) == text);
    CHECK(back.unpacked_size() == 15);
    REQUIRE(back.find("dir/k.o") != nullptr);
    CHECK(back.find("dir/k.o")->size == 12);
    CHECK(back.find("nope") == nullptr);
}

TEST_CASE("manifest rule: entries sorted and unique", "[package][manifest]") {
    auto m = sample();
    m.entries.push_back(m.entries.back());
    CHECK(first_error(m) == "entry 'install.sh' is listed twice");
    m = sample();
    std::swap(m.entries[1], m.entries[2]);
    CHECK_THAT(first_error(m), Catch::Contains("out of order"));
}

TEST_CASE("manifest rule: parents are listed directories", "[package][manifest]") {
    auto m = sample();
    m.entries.erase(m.entries.begin());
    CHECK(first_error(m) ==
          "entry 'dir/k.o' has a parent that is not listed as a directory before it");
    m = sample();
    m.entries = {{"f", EntryType::file, 0644, 1, k_digest},
                 {"f/x", EntryType::file, 0644, 1, k_digest}};
    CHECK_THAT(first_error(m), Catch::Contains("parent that is not listed as a directory"));
}

TEST_CASE("manifest rule: modes and digests", "[package][manifest]") {
    auto m = sample();
    m.entries[1].mode = 0777;
    CHECK(first_error(m) == "entry 'dir/k.o' has a mode other than 0644 or 0755");
    m = sample();
    m.entries[1].sha256 = "xyz";
    CHECK(first_error(m) == "entry 'dir/k.o' needs a SHA-256 of 64 lower-case hex digits");
}

TEST_CASE("manifest rule: unsafe paths and names", "[package][manifest]") {
    auto m = sample();
    m.entries[0].path = "../dir";
    CHECK_THAT(first_error(m), Catch::Contains("has a '..' component"));
    m = sample();
    m.name = "../evil";
    CHECK_THAT(first_error(m), Catch::Contains("name '../evil'"));
    m = sample();
    m.entries.push_back({"manifest.json", EntryType::file, 0644, 1, k_digest});
    CHECK_THAT(first_error(m), Catch::Contains("reserved"));
}

TEST_CASE("manifest parsing reports the origin and every problem", "[package][manifest]") {
    auto text = manifest_to_json(sample());
    auto bad = text;
    bad.replace(bad.find("\"file\""), 6, "\"symlink\"");
    try {
        parse_manifest(bad, "pkg.run");
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK_THAT(e.what(), Catch::StartsWith("pkg.run: invalid manifest: "));
        CHECK_THAT(e.what(), Catch::Contains("type 'symlink'"));
    }
    CHECK_THROWS_WITH(parse_manifest("{", "x"), Catch::StartsWith("x: invalid manifest: "));
    CHECK_THROWS_WITH(parse_manifest("[]", "x"), Catch::Contains("not an object"));
    auto future = text;
    future.replace(future.find("\"format\": 1"), 11, "\"format\": 2");
    CHECK_THROWS_WITH(parse_manifest(future, "x"), Catch::Contains("format 2 is not supported"));
}

TEST_CASE("a manifest that writes a key twice or escaped is refused, naming the key and line",
          "[package][manifest]") {
    auto text = manifest_to_json(sample());
    auto sha = text.find("\"sha256\": ");
    REQUIRE(sha != std::string::npos);
    auto line_start = text.rfind('\n', sha) + 1;
    auto line = text.substr(line_start, text.find('\n', sha) + 1 - line_start);
    auto twice = text;
    twice.insert(line_start, line); // the same "sha256" line again, as the scripts read it
    // Reported at the second one: the line after the first.
    auto second =
        2 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(sha), '\n');
    CHECK_THROWS_WITH(parse_manifest(twice, "pkg.run"),
                      "pkg.run: invalid manifest: it repeats the key \"sha256\" in one object "
                      "(line " +
                          std::to_string(second) + ")");
    auto escaped = text;
    escaped.replace(escaped.find("\"version\""), 9, "\"versio\\u006e\"");
    CHECK_THROWS_WITH(parse_manifest(escaped, "x"),
                      Catch::Contains("writes the key \"versio\\u006e\" with a backslash escape"));
}
