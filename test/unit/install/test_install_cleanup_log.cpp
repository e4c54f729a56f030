// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/cleanup_log.hpp"

#include <catch2/catch.hpp>

using namespace skforge::install;

TEST_CASE("candidates are absolute paths ending in /uninstall.sh", "[install][cleanup_log]") {
    std::string log =
        "Installed.\nUninstall with: /opt/a/opp/static_kernel/ai_core/k1/uninstall.sh\n"
        "run '/opt/a/opp/static_kernel/ai_core/k2/uninstall.sh' later; again "
        "/opt/a/opp/static_kernel/ai_core/k1/uninstall.sh\n"
        "not this: relative/uninstall.sh nor /x/uninstall.shx\n";
    CHECK(uninstall_candidates(log) ==
          std::vector<std::string>{"/opt/a/opp/static_kernel/ai_core/k1/uninstall.sh",
                                   "/opt/a/opp/static_kernel/ai_core/k2/uninstall.sh"});
}

TEST_CASE("candidates: the longest path of a word, prefixes and joined words as a shell reads them",
          "[install][cleanup_log]") {
    CHECK(uninstall_candidates("x=/a/uninstall.sh/b/uninstall.sh;y") ==
          std::vector<std::string>{"/a/uninstall.sh/b/uninstall.sh"});
    CHECK(uninstall_candidates("see:/a/k/uninstall.sh.") == std::vector<std::string>{});
    CHECK(uninstall_candidates("(/a/k/uninstall.sh)") ==
          std::vector<std::string>{"/a/k/uninstall.sh"});
    CHECK(uninstall_candidates("/uninstall.sh //uninstall.sh") ==
          std::vector<std::string>{"//uninstall.sh"});
    CHECK(uninstall_candidates("").empty());
}

TEST_CASE("a log line of megabytes is scanned, not recursed into", "[install][cleanup_log]") {
    // std::regex overflowed the stack on a 300,000-character word (a CI log's base64 blob).
    std::string blob = "/" + std::string(3'000'000, 'a');
    CHECK(uninstall_candidates(blob + "/uninstall.sh\n") ==
          std::vector<std::string>{blob + "/uninstall.sh"});
    CHECK(uninstall_candidates(std::string(3'000'000, '/')).empty());
}

TEST_CASE("candidate text rules", "[install][cleanup_log]") {
    std::vector<std::string> stems = {"k1"};
    std::string stem;
    auto check = [&](const std::string& c) {
        return check_candidate_text(c, "/opt/a/", "/real/8.0", stems, stem);
    };
    CHECK(check("/opt/a/opp/static_kernel/ai_core/k1/uninstall.sh").empty());
    CHECK(stem == "k1");
    CHECK(check("/real/8.0/opp/static_kernel/ai_core/k1/uninstall.sh").empty());
    CHECK_THAT(check("/opt/a/opp/static_kernel/ai_core/k1/../k1/uninstall.sh"),
               Catch::Contains("'..'"));
    CHECK_FALSE(
        check("/opt/a/opp/static_kernel/ai_core/k2/uninstall.sh").empty()); // unrelated stem
    CHECK_FALSE(check("/opt/b/opp/static_kernel/ai_core/k1/uninstall.sh").empty());  // other root
    CHECK_FALSE(check("/opt/a/opp/static_kernel/ai_core/k1x/uninstall.sh").empty()); // look-alike
    CHECK_FALSE(check("/opt/a/opp/static_kernel/ai_core/k1/sub/uninstall.sh").empty());
    CHECK_FALSE(check("/opt/a//opp/static_kernel/ai_core/k1/uninstall.sh").empty());
    CHECK_FALSE(check("/opt/a/opp/static_kernel/ai_core/./k1/uninstall.sh").empty());
}

// Hidden from the default run: ctest runs it alone as unit.cleanup_log_scale with a TIMEOUT
// (test/unit/CMakeLists.txt). Each word's search once ran to the log's end and back to its
// start: 2 MB of "/x/noise" lines took 109 s and 10 MB of "noise" lines 223 s, so the 22 MB here
// would take hours; a scan that stays inside each word reads them in seconds under the sanitizers.
TEST_CASE("a log of megabytes of short words is scanned once", "[.cleanup_log_scale]") {
    std::string log;
    for (int i = 0; i < 1'000'000; ++i)
        log += "/x/noise noise\n";
    std::string tail;
    for (int i = 0; i < 100'000; ++i) // many distinct candidates, each kept once
        tail += "/a/k" + std::to_string(i % 50'000) + "/uninstall.sh\n";
    std::string words;
    for (int i = 0; i < 1'000'000; ++i) // no '/' after them: each search once ran to the end
        words += "noise\n";
    auto found = uninstall_candidates(log + tail + words);
    REQUIRE(found.size() == 50'000);
    CHECK(found.front() == "/a/k0/uninstall.sh");
    CHECK(found.back() == "/a/k49999/uninstall.sh");
}
