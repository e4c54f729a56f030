// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/error.hpp"
#include "skforge/support/safe_path.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <filesystem>

using namespace skforge;
using support::check_name_component;
using support::check_relative_path;
using support::path_beneath;

namespace fs = std::filesystem;

TEST_CASE("name rule: names of the vendor's kinds are one component", "[support][safe_path]") {
    for (const char* ok : {"AddCustom", "MoeGatingTopK_5c21", "te_add_1a2b_kernel0", "sk1",
                           "scope_0_part2_moe", "Ascend910B1", "pkg-1.2+b", "_x", "a..b"})
        CHECK_FALSE(check_name_component(ok));
}

TEST_CASE("name rule: each refusal and its reason", "[support][safe_path]") {
    CHECK(check_name_component("") == "is empty");
    CHECK(check_name_component(std::string(255, 'a')) == std::nullopt);
    CHECK(check_name_component(std::string(256, 'a')) == "is longer than 255 bytes");
    CHECK(check_name_component("../../../../ESC") == "contains '/'");
    CHECK(check_name_component("../../x/OPT") == "contains '/'");
    CHECK(check_name_component("a/b") == "contains '/'");
    CHECK(check_name_component("/abs") == "contains '/'");
    CHECK(check_name_component(std::string("a\0b", 3)) == "contains a NUL byte");
    CHECK(check_name_component("..") == "is '.' or '..'");
    CHECK(check_name_component(".") == "is '.' or '..'");
    CHECK(check_name_component(".hidden") == "must start with a letter, digit or '_'");
    CHECK(check_name_component("-rf") == "must start with a letter, digit or '_'");
    CHECK(check_name_component("+x") == "must start with a letter, digit or '_'");
    for (const char* bad : {"a b", "a'b", "a\\b", "a\nb", "a$b", "a*", "名前"})
        CHECK(check_name_component(bad) == "may contain only letters, digits and '._+-'");
}

TEST_CASE("relative path rule: each refusal and its reason", "[support][safe_path]") {
    CHECK_FALSE(check_relative_path("host/SuperKernel/sk1.json"));
    CHECK_FALSE(check_relative_path("..a/b.."));
    CHECK(check_relative_path("") == "is empty");
    CHECK(check_relative_path("/etc/passwd") == "is absolute");
    CHECK(check_relative_path(std::string("a\0b", 3)) == "contains a NUL byte");
    CHECK(check_relative_path("a//b") == "has an empty component");
    CHECK(check_relative_path("a/") == "has an empty component");
    CHECK(check_relative_path("gen/../../../../ESC.cpp") == "has a '..' component");
    CHECK(check_relative_path("..") == "has a '..' component");
    CHECK(check_relative_path("a/./b") == "has a '.' component");
    CHECK(check_relative_path("a/" + std::string(256, 'c')) ==
          "has a component longer than 255 bytes");
}

TEST_CASE("path_beneath: a plain relative path is joined to its base", "[support][safe_path]") {
    test::ScopedTempDir dir;
    CHECK(path_beneath(dir.path(), "host/Add/Add_host.json") == dir / "host/Add/Add_host.json");
    CHECK(support::checked_beneath(dir.path(), "obj/k.o") == "obj/k.o");
    // Checking creates nothing.
    CHECK(fs::is_empty(dir.path()));
    // A link that stays inside the base is followed like a directory.
    fs::create_directories(dir / "real");
    fs::create_directory_symlink("real", dir / "inside");
    CHECK(path_beneath(dir.path(), "inside/x.o") == dir / "inside/x.o");
}

TEST_CASE("path_beneath: each refusal names the path and the reason", "[support][safe_path]") {
    test::ScopedTempDir dir;
    auto refused = [&](const std::string& rel, const std::string& why) {
        INFO(rel);
        CHECK_THROWS_AS(path_beneath(dir.path(), rel), support::Error);
        CHECK_THROWS_WITH(path_beneath(dir.path(), rel),
                          Catch::Contains(dir.path()) && Catch::Contains(why));
    };
    refused("gen/../../../../ESC.cpp", "'gen/../../../../ESC.cpp' under");
    refused("gen/../../../../ESC.cpp", "has a '..' component");
    refused("/etc/passwd", "is absolute");
    refused("host//x.json", "has an empty component");
    refused("", "is empty");
    refused(std::string("a\0b", 3), "contains a NUL byte");
    refused("./x", "has a '.' component");
}

TEST_CASE("path_beneath: a symbolic link leading out of the base is refused",
          "[support][safe_path]") {
    test::ScopedTempDir outside, dir;
    fs::create_directories(dir / "stage/host");
    fs::create_directory_symlink(outside.path(), dir / "stage/host/Add");
    fs::create_symlink(outside / "victim", dir / "stage/k.o");  // dangling, outside
    fs::create_symlink("../../elsewhere", dir / "stage/rel.o"); // dangling, relative
    fs::create_symlink(outside.path(), dir / "stage/up");
    const std::string base = dir / "stage";
    CHECK_THROWS_WITH(path_beneath(base, "host/Add/Add_host.json"),
                      Catch::Contains(dir / "stage/host/Add") &&
                          Catch::Contains("symbolic link leading out of"));
    CHECK_THROWS_WITH(path_beneath(base, "k.o"), Catch::Contains("symbolic link"));
    CHECK_THROWS_WITH(path_beneath(base, "rel.o"), Catch::Contains("symbolic link"));
    CHECK_THROWS_WITH(path_beneath(base, "up"), Catch::Contains("symbolic link"));
    CHECK(fs::is_empty(outside.path()));
}
