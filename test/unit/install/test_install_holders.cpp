// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/holders.hpp"

#include <catch2/catch.hpp>
#include <unistd.h>

using namespace skforge::install;

namespace {

// This process, which is alive, and one that is not (pid 1's start time is not 1 past boot's).
Holder self() {
    return {::getpid(), process_start_time(::getpid()).value()};
}
Holder dead() {
    return {::getpid(), process_start_time(::getpid()).value() + 1};
}

} // namespace

TEST_CASE("the holders record renders sorted by name and parses back", "[install][holders]") {
    HoldRecords r;
    r["pb"] = {true, {{12, 345}}};
    r["pa"] = {false, {{7, 8}, {9, 10}}};
    r["pc"] = {false, {}};
    std::string text = render_holds(r);
    CHECK(text == "# skforge: who holds each static-kernel package (installer.md, \"Lifecycle\")\n"
                  "pa held 7:8 9:10\npb persistent 12:345\npc held\n");
    CHECK(parse_holds(text) == r);
}

TEST_CASE("lines that are not holder lines are skipped", "[install][holders]") {
    auto r = parse_holds("# c\n../x held 1:2\npa maybe 1:2\npb held 1:2 x 0:3 4:y\n\n");
    REQUIRE(r.size() == 1);
    CHECK(r.at("pb") == HoldRecord{false, {{1, 2}}});
}

TEST_CASE("a reused pid is not the holder: the start time must match", "[install][holders]") {
    CHECK(holder_alive(self()));
    CHECK_FALSE(holder_alive(dead()));
    CHECK_FALSE(process_start_time(0));
}

TEST_CASE("an install's record: held for a process, persistent for an operator",
          "[install][holders]") {
    // A new package installed for a process is held by it.
    CHECK(hold_after_install(std::nullopt, false, self()) == HoldRecord{false, {self()}});
    // An operator's install of a new package needs no line.
    CHECK_FALSE(hold_after_install(std::nullopt, false, std::nullopt));
    // A package installed before holders existed is persistent; a process's install records it.
    CHECK(hold_after_install(std::nullopt, true, self()) == HoldRecord{true, {self()}});
    // A second process adds itself; dead holders are dropped.
    HoldRecord held{false, {dead()}};
    CHECK(hold_after_install(held, true, self()) == HoldRecord{false, {self()}});
    // An operator's install of a held package makes it persistent and keeps its live holders.
    CHECK(hold_after_install(HoldRecord{false, {self()}}, true, std::nullopt) ==
          HoldRecord{true, {self()}});
    // A line left by a package no longer installed says nothing about a new install.
    CHECK(hold_after_install(HoldRecord{true, {self()}}, false, dead()) ==
          HoldRecord{false, {dead()}});
}

TEST_CASE("only a held package whose holders are all gone is collected", "[install][holders]") {
    CHECK_FALSE(collectable(std::nullopt)); // persistent: no line
    CHECK_FALSE(collectable(HoldRecord{true, {}}));
    CHECK_FALSE(collectable(HoldRecord{false, {self(), dead()}}));
    CHECK(collectable(HoldRecord{false, {dead()}}));
    CHECK(collectable(HoldRecord{false, {}}));
}

TEST_CASE("the --holder value takes PID, PID:START or 0", "[install][holders]") {
    CHECK(parse_holder_option(std::to_string(::getpid()), true) == self());
    CHECK(parse_holder_option("7:8", true) == Holder{7, 8});
    CHECK_FALSE(parse_holder_option("0", false));
    CHECK_THROWS_WITH(parse_holder_option("x", false),
                      Catch::Contains("give a process id (PID or PID:START), or 0"));
}
