// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/layout.hpp"
#include "skforge/support/error.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <unistd.h>

using namespace skforge;
using namespace skforge::install;
namespace fs = std::filesystem;

TEST_CASE("a '~' the shell left unexpanded is a usage error that says why", "[install][layout]") {
    try {
        choose_install_path("~/toolkit");
        FAIL("expected a usage error");
    } catch (const support::Error& e) {
        CHECK(e.kind() == support::ErrorKind::usage);
        CHECK_THAT(e.what(), Catch::Contains("did not expand '~'") &&
                                 Catch::Contains("--install-path ~/x (two words)") &&
                                 Catch::Contains("./~/toolkit"));
    }
    CHECK(choose_install_path("./~/toolkit") == "./~/toolkit");
    CHECK(choose_install_path("/opt/x~") == "/opt/x~");
}

TEST_CASE("absolute_install_path joins a relative path without resolving it", "[install][layout]") {
    test::ScopedTempDir dir;
    auto cwd = fs::current_path();
    fs::current_path(dir.path());
    std::string here = fs::current_path().string();
    CHECK(absolute_install_path("latest", "/real/8.0") == here + "/latest");
    CHECK(absolute_install_path("./a//b/./latest/", "/r") == here + "/a/b/latest");
    CHECK(absolute_install_path("../latest", "/real/8.0") == "/real/8.0");
    CHECK(absolute_install_path(".", "/r") == here);
    fs::current_path(cwd);
    CHECK(absolute_install_path("/opt//ascend/./latest/", "/r") == "/opt/ascend/latest");
    CHECK(absolute_install_path("/", "/") == "/");
    CHECK(absolute_install_path("/opt/a/../b", "/opt/b") == "/opt/b");
}

TEST_CASE("modes: root installs for all, any other user as the run user", "[install][layout]") {
    Modes root{0755, true};
    CHECK(root.file(0644) == 0644);
    CHECK(root.file(0755) == 0755);
    CHECK(root.entry(true, 0755) == 0755);
    Modes run_user{0770, false};
    CHECK(run_user.file(0644) == 0640);
    CHECK(run_user.file(0755) == 0750);
    CHECK(run_user.entry(true, 0755) == 0770);
    auto mine = Modes::for_process(false);
    auto for_all = Modes::for_process(true);
    if (::geteuid() == 0) {
        CHECK(mine.dir == 0755);
        CHECK(for_all.dir == 0755);
    } else {
        CHECK(mine.dir == 0770);
        CHECK_FALSE(mine.for_others);
        CHECK(for_all.dir == 0775);
        CHECK(for_all.file(0644) == 0644);
    }
    // verify tells the scheme from the package directory's mode.
    CHECK(Modes::of_package_dir(040755)->for_others);
    CHECK_FALSE(Modes::of_package_dir(040770)->for_others);
    CHECK(Modes::of_package_dir(040775)->dir == 0775);
    CHECK_FALSE(Modes::of_package_dir(040700));
    CHECK_FALSE(Modes::of_package_dir(040777));
}
