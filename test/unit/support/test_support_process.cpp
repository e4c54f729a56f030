// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/error.hpp"
#include "skforge/support/process.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

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
