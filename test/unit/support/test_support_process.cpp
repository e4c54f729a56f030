// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/error.hpp"
#include "skforge/support/process.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

using namespace skforge;

TEST_CASE("process: exit status and both output streams, in the given directory",
          "[support][process]") {
    test::ScopedTempDir dir;
    auto r = support::run_process({"sh", "-c", "echo out; echo err >&2; pwd; exit 3"}, dir.path());
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.output, Catch::Contains("out\n"));
    CHECK_THAT(r.output, Catch::Contains("err\n"));
    CHECK_THAT(r.output, Catch::Contains(dir.path()));
    // stdin is /dev/null: a child that reads it sees end of file at once.
    CHECK(support::run_process({"sh", "-c", "cat; echo done"}).output == "done\n");
    // A signal is reported as 128 + its number.
    CHECK(support::run_process({"sh", "-c", "kill -9 $$"}).exit_code == 128 + 9);
}

TEST_CASE("process: a program that does not exist is an error naming it", "[support][process]") {
    CHECK_THROWS_WITH(support::run_process({"skforge-no-such-program"}),
                      Catch::Contains("cannot run 'skforge-no-such-program': No such file"));
    CHECK_THROWS_AS(support::run_process({}), support::Error);
    CHECK_THROWS_WITH(support::run_process({"/nonexistent/skforge-tool"}),
                      Catch::Contains("cannot run '/nonexistent/skforge-tool'"));
}

TEST_CASE("process: on_path finds programs as the spawn searches PATH", "[support][process]") {
    test::ScopedTempDir dir;
    test::write_text(dir / "bin/tool", "#!/bin/sh\necho tool-ran\n");
    test::write_text(dir / "bin/plain", "not executable");
    std::filesystem::permissions(dir / "bin/tool", std::filesystem::perms(0755));
    std::filesystem::create_directories(dir / "bin/adir");
    struct RestorePath {
        std::string saved = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
        ~RestorePath() { ::setenv("PATH", saved.c_str(), 1); }
    } restore;
    ::setenv("PATH", (dir.path() + "/nowhere:" + dir.path() + "/bin:/usr/bin:/bin").c_str(), 1);
    CHECK(support::on_path("tool"));
    CHECK(support::run_process({"tool"}).output == "tool-ran\n");
    CHECK_FALSE(support::on_path("plain")); // not executable
    CHECK_FALSE(support::on_path("adir"));  // a directory
    CHECK_FALSE(support::on_path("skforge-no-such-program"));
    CHECK_FALSE(support::on_path(""));
    CHECK(support::on_path(dir / "bin/tool"));
    CHECK_FALSE(support::on_path(dir / "bin/plain"));
}

TEST_CASE("process: command lines are quoted for sh where needed", "[support][process]") {
    CHECK(support::command_line({"c++", "-O2", "-DX=1", "a/b.cpp"}) == "c++ -O2 -DX=1 a/b.cpp");
    CHECK(support::command_line({"echo", "two words", "it's", ""}) ==
          "echo 'two words' 'it'\\''s' ''");
    // What it prints runs as the same command.
    auto r = support::run_process(
        {"sh", "-c", "printf '%s|' " + support::command_line({"two words", "it's"})});
    CHECK(r.output == "two words|it's|");
}
