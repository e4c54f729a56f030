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

TEST_CASE("the CANN line of a release text is major.minor; anything else names none",
          "[package][cann_stamp]") {
    CHECK(cann_line("9.1.0") == "9.1");
    CHECK(cann_line("9.0.1") == "9.0");
    CHECK(cann_line("9.2.RC1") == "9.2");
    CHECK(cann_line("8.5.0-beta.1") == "8.5");
    CHECK(cann_line("9.1") == "9.1");
    CHECK(cann_line("09.01.0") == "9.1");
    for (const char* bad : {"", "9", "9.", ".1", "x.1", "9.x", "9 .1", "9.1/../x", "9.1\n"})
        CHECK_FALSE(cann_line(bad));
    CHECK_FALSE(cann_line(std::string(65, '9')));
}

TEST_CASE("a stamped manifest round-trips; a bad stamp is refused naming the field",
          "[package][cann_stamp]") {
    auto m = sample();
    m.cann = CannStamp{"9.1.0", StampSource::toolkit, 24u, 48u};
    auto text = manifest_to_json(m);
    CHECK(text.find("\"line\": \"9.1\"") != std::string::npos);
    auto back = parse_manifest(text, "m.json");
    REQUIRE(back.cann);
    CHECK(back.cann->version == "9.1.0");
    CHECK(back.cann->source == StampSource::toolkit);
    CHECK(back.cann->cube_cores == 24u);
    CHECK(back.cann->vector_cores == 48u);
    CHECK(manifest_to_json(back) == text);
    // an unstamped manifest reads as one without a stamp (older packages)
    CHECK_FALSE(parse_manifest(manifest_to_json(sample()), "m.json").cann);
    auto refused = [&](const std::string& from, const std::string& to) {
        std::string t = text;
        t.replace(t.find(from), from.size(), to);
        try {
            parse_manifest(t, "m.json");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK_THAT(refused("\"line\": \"9.1\"", "\"line\": \"9.2\""),
               Catch::Contains("m.json: invalid manifest: cann.line '9.2' is not the line of "
                               "cann.version '9.1.0' (9.1)"));
    CHECK_THAT(refused("\"version\": \"9.1.0\"", "\"version\": \"nine\""),
               Catch::Contains("cann.version 'nine' is not a CANN version"));
    CHECK_THAT(refused("\"from\": \"toolkit\"", "\"from\": \"guess\""),
               Catch::Contains("cann.from 'guess' is not toolkit or option"));
    CHECK_THAT(refused("\"cube_core_cnt\": 24", "\"cube_core_cnt\": 0"),
               Catch::Contains("cann.cube_core_cnt is not a core count"));
    CHECK_THAT(refused("\"cube_core_cnt\": 24", "\"cube_core_cnt\": \"24\""),
               Catch::Contains("cann.cube_core_cnt is not a core count"));
}

TEST_CASE("cann_mismatch compares lines, naming both releases", "[package][cann_stamp]") {
    CannStamp s{"9.1.0", StampSource::option, {}, {}};
    CHECK_FALSE(cann_mismatch(s, "9.1.3"));
    CHECK_FALSE(cann_mismatch(s, "9.1"));
    CHECK_FALSE(cann_mismatch(s, "unknown")); // a host release that names no line is not checked
    auto why = cann_mismatch(s, "9.2.RC1");
    REQUIRE(why);
    CHECK(*why ==
          "built for CANN 9.1.0 (line 9.1), and the toolkit here is CANN 9.2.RC1 (line 9.2)");
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
