// SPDX-License-Identifier: Apache-2.0
// What skc compile and skc cache show, as JSON values and text lines.
#include "skforge/compile/report.hpp"

#include <catch2/catch.hpp>

using namespace skforge;
using namespace skforge::compile;
using nlohmann::json;

TEST_CASE(
    "compile's result: empty paths are null, and the cache says hit, miss, disabled or unused",
    "[compile][report]") {
    CompileResult r;
    r.run_path = "out/g_host.run";
    r.name = "g_host";
    r.version = "1.0.0";
    r.npu_arch = "host";
    r.soc = "host";
    r.operators = 5;
    r.superkernels = 2;
    r.compile_log = "out/g_host_compile_log/g_host_compile_succ.log";
    auto j = report::compile_result(r, true);
    CHECK(j == json{{"run", "out/g_host.run"},
                    {"sources_dir", nullptr},
                    {"name", "g_host"},
                    {"version", "1.0.0"},
                    {"npu_arch", "host"},
                    {"soc", "host"},
                    {"cann_version", nullptr},
                    {"cache", "miss"},
                    {"operators", 5},
                    {"superkernels", 2},
                    {"compile_log", "out/g_host_compile_log/g_host_compile_succ.log"}});
    CHECK(report::compile_result(r, false)["cache"] == "disabled");
    r.cache_hit = true;
    CHECK(report::compile_result(r, true)["cache"] == "hit");
    r.run_path.clear();
    r.sources_dir = "out/g_sources";
    r.cann_version = "9.0";
    j = report::compile_result(r, true);
    CHECK(j["cache"] == "unused");
    CHECK(j["run"].is_null());
    CHECK(j["sources_dir"] == "out/g_sources");
    CHECK(j["cann_version"] == "9.0");
}

TEST_CASE("cache stats: counters as numbers, sizes for people, no limit as unlimited",
          "[compile][report]") {
    CacheStats s;
    s.entries = 3;
    s.total_size = 3u << 20;
    s.hits = 10;
    s.misses = 4;
    s.corrupt = 1;
    auto j = report::cache_stats("/c", s);
    CHECK(j == json{{"dir", "/c"},
                    {"entries", 3},
                    {"total_size", 3u << 20},
                    {"max_size", nullptr},
                    {"hits", 10},
                    {"misses", 4},
                    {"corrupt_removed", 1}});
    CHECK(report::cache_stats_text(j) ==
          report::Lines{"cache directory  /c", "entries          3",
                        "total size       " + format_size(3u << 20), "max size         unlimited",
                        "hits             10", "misses           4", "corrupt removed  1"});
    s.max_size = 10ull << 30;
    j = report::cache_stats("/c", s);
    CHECK(j["max_size"] == 10ull << 30);
    CHECK(report::cache_stats_text(j)[3] == "max size         " + format_size(10ull << 30));
}

TEST_CASE("cache clean: what was removed, its size and the leftovers", "[compile][report]") {
    auto j = report::cache_clean("/c", {2, 2048, 1});
    CHECK(j == json{{"dir", "/c"},
                    {"removed", 2},
                    {"removed_size", 2048},
                    {"leftovers_removed", 1},
                    {"op_map_removed", 0},
                    {"op_files_removed", 0},
                    {"op_files_size", 0},
                    {"op_locks_removed", 0},
                    {"op_locks_in_use", 0}});
    CHECK(report::cache_clean_text(j) ==
          report::Lines{"removed 2 entries (" + format_size(2048) +
                        ") and 1 leftovers of interrupted writers from /c"});
    // With the op_compiler front end's files: a second line.
    j = report::cache_clean("/c", {1, 10, 0, 3, 4, 4096, 2, 1});
    CHECK(report::cache_clean_text(j).at(1) == "op_compiler: removed 3 op map lines, 4 op files (" +
                                                   format_size(4096) +
                                                   ") and 2 key locks; 1 key locks in use kept");
}

TEST_CASE("cache verify: each problem with its path made one line; ok only when none is left",
          "[compile][report]") {
    VerifyResult r;
    r.checked = 4;
    auto clean = report::cache_verify("/c", r, VerifyFix::report);
    CHECK(clean == json{{"dir", "/c"}, {"checked", 4}, {"problems", json::array()}, {"ok", true}});
    CHECK(report::cache_verify_text(clean) == report::Lines{"/c: 4 entries checked, 0 problem(s)"});

    r.problems.push_back({"/c/ab/x\n.run", "SHA-256 mismatch", false});
    auto bad = report::cache_verify("/c", r, VerifyFix::report);
    CHECK(bad["ok"] == false);
    CHECK(bad["problems"] ==
          json::array(
              {{{"path", "/c/ab/x\n.run"}, {"reason", "SHA-256 mismatch"}, {"removed", false}}}));
    // A newline in a path cannot forge a line of the report.
    CHECK(report::cache_verify_text(bad) ==
          report::Lines{"/c/ab/x?.run: SHA-256 mismatch", "/c: 4 entries checked, 1 problem(s)"});

    r.problems[0].removed = true;
    auto fixed = report::cache_verify("/c", r, VerifyFix::remove);
    CHECK(fixed["ok"] == true);
    CHECK(report::cache_verify_text(fixed) ==
          report::Lines{"/c/ab/x?.run: SHA-256 mismatch (removed)",
                        "/c: 4 entries checked, 1 problem(s), removed"});
}
