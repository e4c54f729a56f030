// SPDX-License-Identifier: Apache-2.0
#include "craft.hpp"
#include "skforge/package/generated.hpp"
#include "skforge/package/reader.hpp"
#include "skforge/support/sha256.hpp"

#include <catch2/catch.hpp>

using namespace skforge;
using namespace skforge::package;

TEST_CASE("generated scripts are a function of the manifest's entry list", "[package][generated]") {
    auto m = test::make_manifest("pkg", {test::file_entry("a", "k")});
    CHECK(check_generated_files(m, "").empty());
    auto changed = m;
    for (auto& e : changed.entries)
        if (e.path == "install.sh")
            e = test::file_entry("install.sh", "#!/bin/sh\nexit 0\n", 0755);
    REQUIRE(check_generated_files(changed, "").size() == 1);
    CHECK_THAT(check_generated_files(changed, "")[0], Catch::Contains("install.sh differs"));
    // Another entry list renders other scripts, so a script cannot be moved between packages.
    auto other = test::make_manifest("pkg", {test::file_entry("b", "k")});
    CHECK(render_generated_files(other, "")[0].text != render_generated_files(m, "")[0].text);
}

TEST_CASE("install.sh carries its index files' entries as the index merge reads them",
          "[package][generated][records]") {
    std::string index = "{\"Add\": {\"staticList\": [\n"
                        "  {\"binPath\": \"pkg/soc/a.o\", \"simplifiedKey\": \"k \\\"1\"},\n"
                        "  {\"binPath\": \"pkg/soc/a.o\", \"n\": [1, 2e3]}]},\n"
                        " \"Abs\": {\"staticList\": []}}\n";
    std::vector<ManifestEntry> entries = {
        {"config", EntryType::directory, 0755, 0, ""},
        {"config/soc", EntryType::directory, 0755, 0, ""},
        test::file_entry("config/soc/binary_info_config.json", index),
        {"soc", EntryType::directory, 0755, 0, ""},
        test::file_entry("soc/a.o", "k")};
    IndexTexts texts = {{"config/soc/binary_info_config.json", index}};
    auto m = test::make_manifest("pkg", entries, texts);
    auto records = index_records(m, texts);
    // A section line with the file's digest, then OpTypes in byte order, entries as written
    // without the whitespace outside strings, each with the key a later package replaces it by.
    CHECK(records ==
          "\034soc\t" + support::sha256_hex(index) +
              "\nAdd\tk:\"k \\\"1\"\t{\"binPath\":\"pkg/soc/a.o\",\"simplifiedKey\":\"k "
              "\\\"1\"}\nAdd\tp:\"pkg/soc/a.o\"\t{\"binPath\":\"pkg/soc/a.o\",\"n\":[1,2e3]}");
    auto install = render_generated_files(m, records)[0];
    REQUIRE(install.path == "install.sh");
    CHECK(records_in_install_sh(install.text) == records);
    CHECK(check_generated_files(m, records).empty());
    CHECK_FALSE(index_records_problem(m, texts, records));
    // Records that are not the files' are caught where the files are read, and the script with
    // them is not the one rendered for the records it was checked with.
    std::string other = records;
    other.replace(other.find("k:"), 2, "p:");
    CHECK(index_records_problem(m, texts, other));
    CHECK_FALSE(check_generated_files(m, other).empty());
    // An index skinstall refuses (a binPath outside the package) gets no records: the scripts
    // read it and refuse it in skinstall's words.
    IndexTexts bad = {{"config/soc/binary_info_config.json",
                       "{\"Add\":{\"staticList\":[{\"binPath\":\"x/a.o\"}]}}"}};
    CHECK(index_records(m, bad).empty());
    CHECK(index_records(m, {}).empty());
}

TEST_CASE("one signature policy: named keys require a valid signature", "[package][signature]") {
    using S = SignatureState;
    CHECK_FALSE(signature_refusal(S::unsigned_package, false, false));
    CHECK_FALSE(signature_refusal(S::not_checked, false, false));
    CHECK_FALSE(signature_refusal(S::verified, true, true));
    CHECK(signature_refusal(S::unsigned_package, true, false));
    CHECK(signature_refusal(S::unsigned_package, false, true));
    CHECK(signature_refusal(S::not_checked, false, true));
    CHECK(signature_refusal(S::untrusted, true, false));
    CHECK(signature_refusal(S::invalid, false, false));
}
