// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/path_rules.hpp"

#include <catch2/catch.hpp>
#include <sys/stat.h>

using namespace skforge::package;

TEST_CASE("plain relative paths are accepted", "[package][path_rules]") {
    CHECK_FALSE(check_entry_path("a"));
    CHECK_FALSE(check_entry_path("ascend910b/AddCustom/AddCustom_7f1c.o"));
    CHECK_FALSE(check_entry_path("名前/カーネル.json"));
    CHECK_FALSE(check_entry_path("..a/b..")); // dots inside names are fine
}

TEST_CASE("rule: empty path", "[package][path_rules]") {
    CHECK(check_entry_path("") == "is empty");
}

TEST_CASE("rule: absolute path", "[package][path_rules]") {
    CHECK(check_entry_path("/etc/passwd") == "is absolute");
}

TEST_CASE("rule: dot-dot components", "[package][path_rules]") {
    CHECK(check_entry_path("../x") == "has a '..' component");
    CHECK(check_entry_path("a/../../x") == "has a '..' component");
    CHECK(check_entry_path("a/..") == "has a '..' component");
}

TEST_CASE("rule: dot components", "[package][path_rules]") {
    CHECK(check_entry_path("./a") == "has a '.' component");
    CHECK(check_entry_path("a/./b") == "has a '.' component");
}

TEST_CASE("rule: empty components", "[package][path_rules]") {
    CHECK(check_entry_path("a//b") == "has an empty component");
    CHECK(check_entry_path("a/") == "has an empty component");
}

TEST_CASE("rule: NUL byte", "[package][path_rules]") {
    CHECK(check_entry_path(std::string("a\0b", 3)) == "contains a NUL byte");
}

TEST_CASE("rule: control characters", "[package][path_rules]") {
    CHECK(check_entry_path("a\nb") == "contains a control character");
    CHECK(check_entry_path("a\x1b[31m") == "contains a control character");
    CHECK(check_entry_path("a\x7f") == "contains a control character");
}

TEST_CASE("rule: invalid UTF-8", "[package][path_rules]") {
    CHECK(check_entry_path("a\xff") == "is not valid UTF-8 (byte 1)");
    CHECK(check_entry_path("\xc0\xaf") == "is not valid UTF-8 (byte 0)");         // overlong '/'
    CHECK(check_entry_path("\xed\xa0\x80") == "is not valid UTF-8 (byte 0)");     // surrogate
    CHECK(check_entry_path("\xe2\x82") == "is not valid UTF-8 (byte 0)");         // truncated
    CHECK(check_entry_path("\xf4\x90\x80\x80") == "is not valid UTF-8 (byte 0)"); // > U+10FFFF
}

TEST_CASE("rule: component longer than 255 bytes", "[package][path_rules]") {
    CHECK_FALSE(check_entry_path(std::string(255, 'a')));
    CHECK(check_entry_path(std::string(256, 'a')) == "has a component longer than 255 bytes");
}

TEST_CASE("rule: path longer than 4096 bytes", "[package][path_rules]") {
    std::string ok;
    while (ok.size() + 201 <= 4096)
        ok += std::string(200, 'a') + "/";
    ok += "b";
    CHECK_FALSE(check_entry_path(ok));
    CHECK(check_entry_path(ok + std::string(4096, 'c')) == "is longer than 4096 bytes");
}

TEST_CASE("package names are one safe component", "[package][path_rules]") {
    CHECK_FALSE(check_package_name("moe_block_host"));
    CHECK_FALSE(check_package_name("pkg-1.2+b"));
    CHECK(check_package_name(""));
    CHECK(check_package_name(".hidden"));
    CHECK(check_package_name("-rf"));
    CHECK(check_package_name("a/b"));
    CHECK(check_package_name(".."));
    CHECK(check_package_name("a b"));
    CHECK(check_package_name("a'b"));
    CHECK(check_package_name(std::string(256, 'a')));
}

TEST_CASE("labels", "[package][path_rules]") {
    CHECK_FALSE(check_label("8.0.RC1~beta", false));
    CHECK(check_label("", false));
    CHECK_FALSE(check_label("", true));
    CHECK(check_label("1.0;rm", false));
}

TEST_CASE("rule: source modes", "[package][path_rules]") {
    CHECK_FALSE(check_source_mode(S_IFREG | 0644));
    CHECK_FALSE(check_source_mode(S_IFREG | 0700));
    CHECK(check_source_mode(S_IFREG | 04755) == "is setuid");
    CHECK(check_source_mode(S_IFREG | 02755) == "is setgid");
    CHECK(check_source_mode(S_IFDIR | 01755) == "is sticky");
    CHECK(check_source_mode(S_IFREG | 0664) == "is group-writable");
    CHECK(check_source_mode(S_IFREG | 0646) == "is world-writable");
}

TEST_CASE("modes are normalised to 0644 and 0755", "[package][path_rules]") {
    CHECK(normalized_mode(EntryType::file, 0600) == 0644);
    CHECK(normalized_mode(EntryType::file, 0700) == 0755);
    CHECK(normalized_mode(EntryType::directory, 0700) == 0755);
    CHECK(is_allowed_mode(0644));
    CHECK(is_allowed_mode(0755));
    CHECK_FALSE(is_allowed_mode(0777));
    CHECK_FALSE(is_allowed_mode(04755));
}

TEST_CASE("names the install tree keeps beside packages are not package names",
          "[package][path_rules]") {
    for (const char* name :
         {"config", "config.ini", "uninstall.sh", "version.info", "log", "static_kernel.lock"})
        CHECK_THAT(check_package_name(name).value_or(""), Catch::Contains("is reserved"));
    CHECK_FALSE(check_package_name("configs"));
    CHECK_FALSE(check_package_name("my_config.ini2"));
}

TEST_CASE("SoC directory names are lower-case families without dots", "[package][path_rules]") {
    for (const char* soc : {"ascend910b", "ascend910_93", "ascend950", "host"})
        CHECK_FALSE(check_soc_dir_name(soc));
    for (const char* soc : {"static_kernel.lock", "Ascend910B1", "", "a/b", "..", ".tmp"})
        CHECK(check_soc_dir_name(soc));
    CHECK(check_soc_dir_name(std::string(65, 'a')));
}

TEST_CASE("package paths are at most 32 components deep", "[package][path_rules]") {
    std::string path = "d";
    for (int i = 1; i < 32; ++i)
        path += "/d";
    CHECK_FALSE(check_entry_path(path));
    CHECK_THAT(check_entry_path(path + "/d").value_or(""),
               Catch::Contains("more than 32 components"));
}

TEST_CASE("rule: a package name with '.o', which CANN's runtime would cut every binPath at",
          "[package][path_rules]") {
    for (const char* name : {"my.ops", "a.o", "x.old_kernels", ".o"}) {
        INFO(name);
        auto why = check_kernel_package_name(name);
        REQUIRE(why);
        CHECK_THAT(*why, Catch::Contains("has '.o' in it: every binPath of the package (" +
                                         std::string(name) + "/<soc dir>/<OpType>/<kernel>.o)"));
    }
    for (const char* name : {"my_ops", "my.v2", "ops", "o", "kernels.O"})
        CHECK_FALSE(check_kernel_package_name(name));
    // Not a rule of the names already installed: check_package_name still accepts it.
    CHECK_FALSE(check_package_name("my.ops"));
}
