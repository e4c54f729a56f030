// SPDX-License-Identifier: Apache-2.0
#include "skforge/kernel/soc.hpp"
#include "skforge/support/error.hpp"

#include <catch2/catch.hpp>

using namespace skforge::kernel;
using skforge::support::Error;
using skforge::support::ErrorKind;

namespace {
std::string refusal(std::string_view soc, std::string_view arch) {
    try {
        target_soc_dir(soc, arch);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}
} // namespace

TEST_CASE("SoC names map to the directory the runtime reads", "[kernel][soc]") {
    // asc-devkit SOC_TO_SHORT_SOC_MAP / opbase socOpMap rows.
    for (auto soc : {"Ascend910B1", "Ascend910B2", "Ascend910B2C", "Ascend910B3", "Ascend910B4",
                     "Ascend910B4-1"})
        CHECK(soc_dir(soc) == "ascend910b");
    for (auto soc : {"Ascend910_9391", "Ascend910_9381", "Ascend910_9372", "Ascend910_9392",
                     "Ascend910_9382", "Ascend910_9362"})
        CHECK(soc_dir(soc) == "ascend910_93");
    for (auto soc : {"Ascend950PR_9599", "Ascend950PR_9589", "Ascend950DT_9591", "Ascend950"})
        CHECK(soc_dir(soc) == "ascend950");
    CHECK(soc_dir("Ascend910A") == "ascend910");
    CHECK(soc_dir("Ascend910B") == "ascend910"); // a first-generation part, not the 910B family
    CHECK(soc_dir("Ascend310P3") == "ascend310p");
    CHECK(soc_dir("Ascend310B4") == "ascend310b");
}

TEST_CASE("SoC names match without regard to case, and only whole names", "[kernel][soc]") {
    CHECK(soc_dir("ascend910b1") == "ascend910b");
    CHECK(soc_dir("ASCEND910_9391") == "ascend910_93");
    CHECK(soc_dir("ascend950pr_958A") == "ascend950");
    CHECK_FALSE(soc_dir("Ascend910B9"));
    CHECK_FALSE(soc_dir("Ascend910B1x"));
    CHECK_FALSE(soc_dir("Ascend910_95"));
    CHECK_FALSE(soc_dir(""));
}

TEST_CASE("a target's SoC directory must be a family its architecture compiles for",
          "[kernel][soc]") {
    CHECK(target_soc_dir("Ascend910B1", "dav-2201") == "ascend910b");
    CHECK(target_soc_dir("Ascend910_9391", "dav-2201") == "ascend910_93");
    CHECK(target_soc_dir("Ascend950PR_9599", "dav-3510") == "ascend950");
    CHECK(target_soc_dir("whatever", "host") == "host");
    CHECK_THAT(refusal("Ascend910B1", "dav-3510"),
               Catch::Contains("SoC 'Ascend910B1' belongs to CANN's ascend910b family, which "
                               "dav-3510 does not compile for") &&
                   Catch::Contains("Ascend950PR_"));
    CHECK_THAT(refusal("Ascend910B", "dav-2201"),
               Catch::Contains("ascend910 family") && Catch::Contains("Ascend910B1..B4"));
    CHECK_THAT(refusal("Ascend910B9", "dav-2201"),
               Catch::Contains("SoC 'Ascend910B9' is not one skforge knows CANN's directory for"));
    try {
        target_soc_dir("Ascend910B1", "dav-9999");
        FAIL("no refusal");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::usage);
        CHECK_THAT(e.what(), Catch::Contains("unsupported NPU architecture 'dav-9999'"));
    }
}

TEST_CASE("each architecture's default SoC is one it compiles for", "[kernel][soc]") {
    CHECK(default_soc("dav-3510") == "Ascend950PR_9599");
    CHECK(target_soc_dir(default_soc("dav-2201"), "dav-2201") == "ascend910_93");
    CHECK(target_soc_dir(default_soc("dav-3510"), "dav-3510") == "ascend950");
}
