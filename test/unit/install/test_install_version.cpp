// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/version.hpp"

#include <catch2/catch.hpp>

using skforge::install::compare_versions;

TEST_CASE("versions compare as dpkg orders them", "[install]") {
    // Each is older than the next (dpkg --compare-versions a lt b).
    const char* ascending[] = {"0.9~rc1", "0.9",     "0.9a", "0.9.1", "1.2.0~beta", "1.2.0",
                               "1.2.0-1", "1.2.0-2", "1.9",  "1.10",  "1:0.1"};
    for (std::size_t i = 0; i + 1 < std::size(ascending); ++i) {
        INFO(ascending[i] << " < " << ascending[i + 1]);
        CHECK(compare_versions(ascending[i], ascending[i + 1]) < 0);
        CHECK(compare_versions(ascending[i + 1], ascending[i]) > 0);
    }
}

TEST_CASE("leading zeros and equal versions compare equal", "[install]") {
    CHECK(compare_versions("1.01", "1.1") == 0);
    CHECK(compare_versions("1.2.3", "1.2.3") == 0);
    CHECK(compare_versions("0:1.0", "1.0") == 0);
}
