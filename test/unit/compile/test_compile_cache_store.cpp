// SPDX-License-Identifier: Apache-2.0
#include "temp_dir.hpp"

#include "skforge/compile/cache_store.hpp"
#include "skforge/package/writer.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/sha256.hpp"

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace skforge;
using namespace skforge::compile;
namespace fs = std::filesystem;

namespace {

// A real .run named `name` in `dir`, whose kernel holds `payload`.
std::string make_run(const test::ScopedTempDir& dir, const std::string& name,
                     const std::string& payload) {
    test::write_text(dir / ("src-" + name + "/soc/Add/add.json"), "{\"kernelName\":\"add\"}\n");
    test::write_text(dir / ("src-" + name + "/soc/Add/add.o"), payload);
    std::string run = dir / (name + ".run");
    package::PackOptions o{dir / ("src-" + name), run, "1.0", "dav-2201", "Ascend910B1"};
    package::pack(o);
    return run;
}

std::string key_of(const std::string& text) {
    return support::sha256_hex(text);
}

std::string entry_run(const std::string& cache, const std::string& key) {
    return cache + "/" + key.substr(0, 2) + "/" + key + ".run";
}

// Every file under `dir` whose name starts with a dot (temporaries of writers).
std::vector<std::string> temporaries(const std::string& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.path().filename().string().starts_with("."))
            out.push_back(e.path().string());
    return out;
}

// A store whose clock the test sets.
struct Clocked {
    std::int64_t t = 1000;
    CacheStore store;
    Clocked(const std::string& dir, std::optional<std::uint64_t> max)
        : store({dir, max, CacheOpen::create, [this] { return t; }}) {}
};

} // namespace

TEST_CASE("sizes are bytes or digits with K, M, G or T", "[compile][cache]") {
    CHECK(parse_size("4096") == 4096u);
    CHECK(parse_size("10G") == 10ull << 30);
    CHECK(parse_size("512MiB") == 512ull << 20);
    CHECK(parse_size("3k") == 3072u);
    CHECK(parse_size("2TB") == 2ull << 40);
    for (const char* bad : {"", "G", "10X", "-1", "10GG", "1.5G", "99999999999T"})
        CHECK_FALSE(parse_size(bad));
}

TEST_CASE("an entry inserted is fetched byte for byte; an unknown key misses", "[compile][cache]") {
    test::ScopedTempDir dir;
    std::string run = make_run(dir, "a", std::string(50000, 'a'));
    CacheStore store({dir / "cache", std::nullopt, CacheOpen::create, {}});
    const std::string key = key_of("a");
    store.insert(key, run);

    auto e = store.entries();
    REQUIRE(e.size() == 1);
    CHECK(e[0].key == key);
    CHECK(e[0].sha256 == support::sha256_hex(test::read_text(run)));
    CHECK(e[0].size == fs::file_size(run));
    CHECK(fs::is_regular_file(entry_run(dir / "cache", key)));

    // Not being able to write the destination is not the entry's fault.
    CHECK_THROWS_WITH(store.fetch(key, dir / "out/a.run"), Catch::Contains(dir / "out/a.run"));
    CHECK(store.entries().size() == 1);
    fs::create_directories(dir / "out");
    CHECK(store.fetch(key, dir / "out/a.run").outcome == FetchOutcome::hit);
    CHECK(test::read_text(dir / "out/a.run") == test::read_text(run));
    CHECK(store.fetch(key_of("b"), dir / "out/b.run").outcome == FetchOutcome::miss);
    CHECK_FALSE(fs::exists(dir / "out/b.run"));
    auto s = store.stats();
    CHECK(s.entries == 1);
    CHECK(s.hits == 1);
    CHECK(s.misses == 1);
    CHECK(temporaries(dir / "cache").empty());
    CHECK(temporaries(dir / "out").empty());
}

TEST_CASE("a damaged entry is reported, removed, and the destination left alone",
          "[compile][cache]") {
    test::ScopedTempDir dir;
    std::string run = make_run(dir, "a", std::string(50000, 'a'));
    CacheStore store({dir / "cache", std::nullopt, CacheOpen::create, {}});
    const std::string key = key_of("a");
    store.insert(key, run);
    test::write_text(dir / "out/a.run", "the earlier file");

    SECTION("a flipped byte fails the SHA-256") {
        std::string bytes = test::read_text(entry_run(dir / "cache", key));
        bytes[bytes.size() / 2] ^= 1;
        test::write_text(entry_run(dir / "cache", key), bytes);
        auto r = store.fetch(key, dir / "out/a.run");
        CHECK(r.outcome == FetchOutcome::corrupt);
        CHECK_THAT(r.problem,
                   Catch::Contains(entry_run(dir / "cache", key)) && Catch::Contains("SHA-256"));
    }
    SECTION("metadata that agrees with a .run that is not a package fails the reader") {
        std::string junk(4096, 'x');
        test::write_text(entry_run(dir / "cache", key), junk);
        std::string meta = dir / "cache" + "/" + key.substr(0, 2) + "/" + key + ".json";
        test::write_text(meta, "{\"key\":\"" + key + "\",\"sha256\":\"" +
                                   support::sha256_hex(junk) +
                                   "\",\"size\":4096,\"created\":1,\"last_used\":1}");
        auto r = store.fetch(key, dir / "out/a.run");
        CHECK(r.outcome == FetchOutcome::corrupt);
        CHECK_THAT(r.problem, !Catch::Contains("SHA-256"));
    }
    CHECK(test::read_text(dir / "out/a.run") == "the earlier file");
    CHECK(store.entries().empty());
    CHECK(store.stats().corrupt == 1);
    CHECK(store.fetch(key, dir / "out/a.run").outcome == FetchOutcome::miss);
}

TEST_CASE("metadata with numbers out of range is a damaged entry, not a conversion",
          "[compile][cache]") {
    test::ScopedTempDir dir;
    std::string run = make_run(dir, "a", "a");
    CacheStore store({dir / "cache", std::nullopt, CacheOpen::create, {}});
    const std::string key = key_of("a");
    store.insert(key, run);
    std::string meta = dir / "cache" + "/" + key.substr(0, 2) + "/" + key + ".json";
    const std::string sha = store.entries().at(0).sha256;
    for (const char* size : {"1e30", "-5", "1.5", "\"12\""}) {
        INFO(size);
        test::write_text(meta, "{\"key\":\"" + key + "\",\"sha256\":\"" + sha +
                                   "\",\"size\":" + size + ",\"created\":1,\"last_used\":1}");
        auto r = store.verify(VerifyFix::report);
        REQUIRE(r.problems.size() == 1);
        CHECK(r.problems[0].path == meta);
        CHECK(r.problems[0].reason ==
              "malformed metadata: \"size\" is missing or not an integer in range");
    }
    auto r = store.fetch(key, dir / "out.run");
    CHECK(r.outcome == FetchOutcome::corrupt);
    CHECK_THAT(r.problem, Catch::Contains("\"size\""));
    CHECK_FALSE(fs::exists(dir / "out.run"));
}

TEST_CASE("a shard that is a symbolic link is never followed: not read, not written, reported",
          "[compile][cache]") {
    test::ScopedTempDir dir;
    std::string run = make_run(dir, "a", "a");
    const std::string key = key_of("a");
    CacheStore store({dir / "cache", std::nullopt, CacheOpen::create, {}});
    fs::create_directories(dir / "elsewhere");
    fs::create_directory_symlink(dir / "elsewhere", dir / "cache" + "/" + key.substr(0, 2));
    CHECK_THROWS_WITH(store.insert(key, run), Catch::Contains("is a symbolic link"));
    CHECK_THROWS_WITH(store.fetch(key, dir / "out.run"), Catch::Contains("is a symbolic link"));
    CHECK(fs::is_empty(dir / "elsewhere"));
    auto v = store.verify(VerifyFix::report);
    REQUIRE(v.problems.size() == 1);
    CHECK(v.problems[0].path == dir / "cache" + "/" + key.substr(0, 2));
    store.verify(VerifyFix::remove); // removes the link, never what it points to
    CHECK_FALSE(fs::is_symlink(dir / "cache" + "/" + key.substr(0, 2)));
    CHECK(fs::is_directory(dir / "elsewhere"));
    store.insert(key, run);
    CHECK(store.fetch(key, dir / "out.run").outcome == FetchOutcome::hit);
    CHECK(fs::is_empty(dir / "elsewhere"));
}

TEST_CASE("counters that are not counts are warned about and start at zero", "[compile][cache]") {
    test::ScopedTempDir dir;
    std::vector<std::string> warnings;
    CacheStoreOptions o{dir / "cache", std::nullopt, CacheOpen::create, {}, {}};
    o.warn = [&](const std::string& m) { warnings.push_back(m); };
    CacheStore store(o);
    test::write_text(dir / "cache/stats.json", R"({"hits": "many", "misses": 1e30, "corrupt": 2})");
    auto s = store.stats();
    CHECK(s.hits == 0);
    CHECK(s.misses == 0);
    CHECK(s.corrupt == 2);
    REQUIRE(warnings.size() == 2);
    CHECK_THAT(warnings[0], Catch::Contains(dir / "cache/stats.json") &&
                                Catch::Contains("\"hits\" is \"many\", not a count"));
    warnings.clear();
    CHECK(store.fetch(key_of("x"), dir / "out.run").outcome == FetchOutcome::miss);
    CHECK(store.stats().misses == 1);
    test::write_text(dir / "cache/stats.json", "[1]");
    CHECK(store.stats().hits == 0);
    CHECK_THAT(warnings.back(), Catch::Contains("is not a JSON object"));
}

TEST_CASE("eviction removes the least recently used entries first", "[compile][cache]") {
    test::ScopedTempDir dir;
    std::string a = make_run(dir, "a", std::string(20000, 'a'));
    std::string b = make_run(dir, "b", std::string(20000, 'b'));
    std::string c = make_run(dir, "c", std::string(20000, 'c'));
    // Room for two of the three (the packages differ in size by a few bytes at most).
    const auto limit = fs::file_size(a) + fs::file_size(b) + fs::file_size(c) / 2;
    Clocked s(dir / "cache", limit);
    s.t = 1;
    CHECK(s.store.insert(key_of("a"), a).removed == 0);
    s.t = 2;
    CHECK(s.store.insert(key_of("b"), b).removed == 0);
    s.t = 3;
    fs::create_directories(dir / "out");
    REQUIRE(s.store.fetch(key_of("a"), dir / "out/a.run").outcome == FetchOutcome::hit);
    s.t = 4;
    auto evicted = s.store.insert(key_of("c"), c);
    CHECK(evicted.removed == 1);
    std::vector<std::string> keys;
    for (const auto& e : s.store.entries())
        keys.push_back(e.key);
    std::vector<std::string> expected = {key_of("a"), key_of("c")};
    std::sort(expected.begin(), expected.end());
    CHECK(keys == expected); // b, unused since t=2, went first
    CHECK(s.store.stats().total_size <= limit);
}

TEST_CASE("clean removes entries older than asked, down to max size, or all", "[compile][cache]") {
    test::ScopedTempDir dir;
    std::string a = make_run(dir, "a", std::string(20000, 'a'));
    std::string b = make_run(dir, "b", std::string(20000, 'b'));
    Clocked s(dir / "cache", std::nullopt);
    s.t = 0;
    s.store.insert(key_of("a"), a);
    s.t = 10 * 86400000LL;
    s.store.insert(key_of("b"), b);
    s.t = 12 * 86400000LL;
    auto r = s.store.clean({5 * 86400000LL, false});
    CHECK(r.removed == 1);
    REQUIRE(s.store.entries().size() == 1);
    CHECK(s.store.entries()[0].key == key_of("b"));
    CHECK_THROWS_WITH(s.store.clean({std::nullopt, true}), Catch::Contains("no max_size"));
    CHECK(s.store.clean({}).removed == 1);
    CHECK(s.store.entries().empty());
}

TEST_CASE("config.json sets max_size; a bad one is refused naming the file", "[compile][cache]") {
    test::ScopedTempDir dir;
    test::write_text(dir / "cache/config.json", "{\"max_size\": \"10G\"}");
    CHECK(CacheStore({dir / "cache", std::nullopt, CacheOpen::existing, {}}).max_size() ==
          10ull << 30);
    CHECK(CacheStore({dir / "cache", 5u, CacheOpen::existing, {}}).max_size() == 5u);
    test::write_text(dir / "cache/config.json", "{\"max_size\": \"ten\"}");
    CHECK_THROWS_WITH(CacheStore({dir / "cache", std::nullopt, CacheOpen::existing, {}}),
                      Catch::Contains(dir / "cache/config.json") && Catch::Contains("ten"));
    CHECK_THROWS_WITH(CacheStore({dir / "none", std::nullopt, CacheOpen::existing, {}}),
                      Catch::Contains(dir / "none"));
}

TEST_CASE("threads inserting and fetching at once leave one whole entry per key",
          "[compile][cache]") {
    test::ScopedTempDir dir;
    std::vector<std::string> runs = {make_run(dir, "a", std::string(200000, 'a')),
                                     make_run(dir, "b", std::string(200000, 'b'))};
    CacheStore store({dir / "cache", std::nullopt, CacheOpen::create, {}});
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int i = 0; i < 8; ++i)
        threads.emplace_back([&, i] {
            try {
                std::string k = i % 2 ? "b" : "a";
                store.insert(key_of(k), runs[static_cast<std::size_t>(i % 2)]);
                std::string out = dir / ("out" + std::to_string(i));
                fs::create_directories(out);
                if (store.fetch(key_of(k), out + "/x.run").outcome != FetchOutcome::hit ||
                    test::read_text(out + "/x.run") !=
                        test::read_text(runs[static_cast<std::size_t>(i % 2)]))
                    ++failures;
            } catch (const std::exception&) {
                ++failures;
            }
        });
    for (auto& t : threads)
        t.join();
    CHECK(failures == 0);
    CHECK(store.entries().size() == 2);
    auto v = store.verify(VerifyFix::report);
    CHECK(v.checked == 2);
    CHECK(v.problems.empty());
    CHECK(temporaries(dir / "cache").empty());
    CHECK(store.stats().hits == 8);
}

TEST_CASE("processes inserting into one store at once leave one whole entry", "[compile][cache]") {
    test::ScopedTempDir dir;
    std::string run = make_run(dir, "a", std::string(300000, 'a'));
    const std::string cache = dir / "cache";
    CacheStore({cache, std::nullopt, CacheOpen::create, {}});
    std::vector<pid_t> children;
    for (int i = 0; i < 8; ++i) {
        pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            int rc = 1;
            try {
                CacheStore store({cache, std::nullopt, CacheOpen::existing, {}});
                store.insert(key_of("a"), run);
                std::string out = dir / ("out" + std::to_string(i) + ".run");
                rc = store.fetch(key_of("a"), out).outcome == FetchOutcome::hit ? 0 : 1;
            } catch (...) {
            }
            ::_exit(rc);
        }
        children.push_back(pid);
    }
    for (pid_t pid : children) {
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    }
    CacheStore store({cache, std::nullopt, CacheOpen::existing, {}});
    CHECK(store.entries().size() == 1);
    CHECK(store.verify(VerifyFix::report).problems.empty());
    CHECK(store.stats().hits == 8);
    for (int i = 0; i < 8; ++i)
        CHECK(test::read_text(dir / ("out" + std::to_string(i) + ".run")) == test::read_text(run));
    CHECK(temporaries(cache).empty());
}

#ifdef SKFORGE_FAULT_INJECTION
// Run only by the test below, in a child process: inserts and is killed at a fault point.
TEST_CASE("cache insert child", "[.cache_insert_child]") {
    const char* cache = std::getenv("SKFORGE_TEST_CACHE");
    const char* run = std::getenv("SKFORGE_TEST_RUN");
    REQUIRE(cache != nullptr);
    REQUIRE(run != nullptr);
    CacheStore({cache, std::nullopt, CacheOpen::existing, {}}).insert(key_of("a"), run);
}

TEST_CASE("a writer killed at any step of an insert leaves no visible entry", "[compile][cache]") {
    test::ScopedTempDir dir;
    std::string run = make_run(dir, "a", std::string(50000, 'a'));
    const std::string cache = dir / "cache";
    // Steps 1 and 2 come before the metadata is written; step 3 after.
    for (int step = 1; step <= 3; ++step) {
        CAPTURE(step);
        fs::remove_all(cache);
        CacheStore({cache, std::nullopt, CacheOpen::create, {}});
        pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            ::setenv("SKFORGE_FAULT_AT", std::to_string(step).c_str(), 1);
            ::setenv("SKFORGE_TEST_CACHE", cache.c_str(), 1);
            ::setenv("SKFORGE_TEST_RUN", run.c_str(), 1);
            ::execl("/proc/self/exe", "skforge_unit_tests", "[.cache_insert_child]", nullptr);
            ::_exit(127);
        }
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        REQUIRE(WIFEXITED(status));
        REQUIRE(WEXITSTATUS(status) == 99); // killed at the fault point
        CacheStore store({cache, std::nullopt, CacheOpen::existing, {}});
        fs::create_directories(dir / "out");
        auto outcome = store.fetch(key_of("a"), dir / "out/a.run").outcome;
        if (step < 3) {
            CHECK(outcome == FetchOutcome::miss);
            CHECK(store.entries().empty());
            // The next writer completes the entry.
            store.insert(key_of("a"), run);
            REQUIRE(store.fetch(key_of("a"), dir / "out/a.run").outcome == FetchOutcome::hit);
        } else {
            CHECK(outcome == FetchOutcome::hit);
        }
        CHECK(test::read_text(dir / "out/a.run") == test::read_text(run));
        CHECK(store.entries().size() == 1);
        fs::remove(dir / "out/a.run");
    }
}
#endif
