// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/query.hpp"
#include "skforge/support/error.hpp"

#include <catch2/catch.hpp>

using namespace skforge;
using namespace skforge::install;

TEST_CASE("names from a command line follow the manifest's rule", "[install][query]") {
    for (const char* bad : {"victim/../other", "..", ".", "", "-x", "a b", "config.ini", "log"})
        CHECK_THROWS_WITH(require_package_name(bad), Catch::Contains("is not a package name"));
    try {
        require_package_name("a/\x1b[2J");
        FAIL("accepted");
    } catch (const support::Error& e) {
        CHECK(e.kind() == support::ErrorKind::usage);
        CHECK_THAT(e.what(), Catch::StartsWith("'a/?[2J' is not a package name: it contains '/'"));
    }
    CHECK_NOTHROW(require_package_name("decoder_dav-2201.v1+x"));
}
