// SPDX-License-Identifier: Apache-2.0
// What skrun prints of a package's runs: the JSON document and the lines on stdout and stderr.
#include "skforge/runtime/report.hpp"

#include <algorithm>
#include <catch2/catch.hpp>

using namespace skforge::runtime;

namespace {

RunReport fused_only() {
    RunReport r{"demo", "moe", "host:4", "random", 7, 12, 3, 10};
    r.fused = {3, 1.25, 1.0};
    return r;
}

RunReport compared(std::vector<Difference> first, std::vector<Difference> last) {
    RunReport r = fused_only();
    r.unfused = Timing{12, 5.0, 4.5};
    Comparison c;
    c.compared = 4;
    c.first = std::move(first);
    c.last = std::move(last);
    for (const char* t : {"a", "b", "c", "d"}) {
        auto has = [&](const std::vector<Difference>& list) {
            return std::any_of(list.begin(), list.end(),
                               [&](const Difference& d) { return d.tensor == t; });
        };
        if (has(c.first) || has(c.last))
            ++c.differing;
    }
    r.comparison = c;
    return r;
}

} // namespace

TEST_CASE("skrun's report of a fused run alone", "[runtime][report]") {
    const RunReport r = fused_only();
    const auto j = report_json(r);
    CHECK(j["package"] == "demo");
    CHECK(j["graph"] == "moe");
    CHECK(j["device"] == "host:4");
    CHECK(j["workers"] == 4);
    CHECK(j["operators"] == 12);
    CHECK(j["superkernels"] == 3);
    CHECK(j["iterations"] == 10);
    CHECK(j["fused"] == nlohmann::json{{"launches", 3}, {"median_ms", 1.25}, {"min_ms", 1.0}});
    CHECK_FALSE(j.contains("unfused"));
    CHECK_FALSE(j.contains("identical"));
    CHECK(
        report_text(r) ==
        std::vector<std::string>{
            "demo: graph moe, 12 operators, 3 SuperKernels, 4 workers, inputs random (seed 7)",
            "  fused:        3 launches per run,     1.250 ms per run (median of 10, min 1.000)"});
    CHECK(report_differences(r).empty());
}

TEST_CASE("skrun's report names the device and the input directory as given", "[runtime][report]") {
    RunReport r = fused_only();
    r.device = "npu:1";
    r.inputs = "/data/in";
    CHECK(report_text(r)[0] ==
          "demo: graph moe, 12 operators, 3 SuperKernels, npu:1, inputs /data/in");
    CHECK_FALSE(report_json(r).contains("workers"));
}

TEST_CASE("skrun's report of a comparison where every output is identical", "[runtime][report]") {
    const RunReport r = compared({}, {});
    const auto j = report_json(r);
    CHECK(j["unfused"]["launches"] == 12);
    CHECK(j["speedup"] == 4.0);
    CHECK(j["compared"] == 4);
    CHECK(j["identical"] == true);
    CHECK(j["differences"].empty());
    const auto text = report_text(r);
    REQUIRE(text.size() == 5);
    CHECK(text[2] ==
          "  op-by-op:    12 launches per run,     5.000 ms per run (median of 10, min 4.500)");
    CHECK(text[3] == "  speedup:   4.00x fused");
    CHECK(text[4] == "  compare:   4 tensors bitwise identical (first and last run)");
    CHECK(report_differences(r).empty());
}

TEST_CASE("skrun's report of differences: the first run's, then the last run's in other tensors",
          "[runtime][report]") {
    // "a" differs after both runs (reported once, for run 1); "b" only after the last (run 11:
    // a fused run that read what an earlier run left behind is right only from the second on, and
    // one that differs only later is reported with the run it was seen after).
    const RunReport r = compared({{"a", 16, 4}}, {{"a", 16, 4}, {"b", 0, 64}});
    const auto j = report_json(r);
    CHECK(j["identical"] == false);
    REQUIRE(j["differences"].size() == 2);
    CHECK(j["differences"][0] ==
          nlohmann::json{{"tensor", "a"}, {"run", 1}, {"first_byte", 16}, {"differing_bytes", 4}});
    CHECK(j["differences"][1]["tensor"] == "b");
    CHECK(j["differences"][1]["run"] == 11);
    CHECK(j["first_run_differences"].size() == 1);
    CHECK(j["last_run_differences"].size() == 2);
    CHECK(report_text(r).back() == "  compare:   2 of 4 tensors DIFFER");
    CHECK(report_differences(r) ==
          std::vector<std::string>{
              "skrun: a differs fused vs op-by-op after run 1: 4 bytes, first at byte 16",
              "skrun: b differs fused vs op-by-op after run 11: 64 bytes, first at byte 0"});
    // A speedup is 0 when the fused run took no measurable time, never a division by zero.
    RunReport instant = r;
    instant.fused.median_ms = 0;
    CHECK(report_json(instant)["speedup"] == 0.0);
}
