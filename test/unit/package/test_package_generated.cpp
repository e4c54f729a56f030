// SPDX-License-Identifier: Apache-2.0
#include "craft.hpp"
#include "skforge/package/generated.hpp"
#include "skforge/package/reader.hpp"

#include <catch2/catch.hpp>

using namespace skforge;
using namespace skforge::package;

TEST_CASE("generated scripts are a function of the manifest's entry list", "[package][generated]") {
    auto m = test::make_manifest("pkg", {test::file_entry("a", "k")});
    CHECK(check_generated_files(m).empty());
    auto changed = m;
    for (auto& e : changed.entries)
        if (e.path == "install.sh")
            e = test::file_entry("install.sh", "#!/bin/sh\nexit 0\n", 0755);
    REQUIRE(check_generated_files(changed).size() == 1);
    CHECK_THAT(check_generated_files(changed)[0], Catch::Contains("install.sh differs"));
    // Another entry list renders other scripts, so a script cannot be moved between packages.
    auto other = test::make_manifest("pkg", {test::file_entry("b", "k")});
    CHECK(render_generated_files(other)[0].text != render_generated_files(m)[0].text);
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
