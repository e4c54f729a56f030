// SPDX-License-Identifier: Apache-2.0
// What skinstall shows, as JSON values and text lines, from a real installed tree.
#include "skforge/install/history.hpp"
#include "skforge/install/report.hpp"
#include "skforge/install/transaction.hpp"
#include "skforge/package/writer.hpp"
#include "skforge/support/error.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <filesystem>

using namespace skforge;
using namespace skforge::install;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Two packages with a kernel for the same key: `b`, installed last, hides `a`'s.
struct Tree {
    test::ScopedTempDir dir;
    support::NullLog log;
    Policy policy;

    std::string root() const { return dir / "root"; }
    std::string ai() const { return dir / "root/opp/static_kernel/ai_core"; }

    std::string packed(const std::string& name) {
        std::string src = dir / ("src-" + name);
        test::write_text(src + "/soc/Add/add.o", "kernel " + name);
        test::write_text(src + "/config/soc/binary_info_config.json",
                         R"({"Add":{"staticList":[{"simplifiedKey":"Add/1","binPath":")" + name +
                             R"(/soc/Add/add.o"}]}})");
        fs::create_directories(dir / "out");
        package::PackOptions o{src, dir / ("out/" + name + ".run"), "1.0", "dav-2201",
                               "Ascend910B1"};
        package::pack(o);
        return o.output;
    }

    InstallResult install(const std::string& name) {
        auto pkg = verify_package(packed(name), policy);
        auto tree = InstallTree::open(root(), Create::yes);
        TreeLock lock(*tree, LockMode::exclusive);
        return install_package(*tree, pkg, InstallMode::install, policy, log);
    }

    InstallTree open() const { return *InstallTree::open(root(), Create::no); }

    Tree() {
        fs::create_directories(root());
        install("a");
        install("b");
    }
};

} // namespace

TEST_CASE("list: packages in install order with their labels; a damaged one with its fix",
          "[install][report]") {
    Tree t;
    auto tree = t.open();
    json p = report::packages(tree);
    REQUIRE(p.size() == 2);
    CHECK(p[0]["name"] == "a");
    CHECK(p[1]["status"] == "installed");
    CHECK(p[1]["npu_arch"] == "dav-2201");
    CHECK(p[1]["path"] == tree.shown() + "/b");
    auto text = report::packages_text(p);
    REQUIRE(text.size() == 2);
    CHECK_THAT(text[0], Catch::StartsWith("a  ") && Catch::Contains(" 1.0 ") &&
                            Catch::Contains("Ascend910B1") && Catch::EndsWith(" bytes"));
    fs::remove(t.ai() + "/a/manifest.json");
    p = report::packages(tree);
    CHECK(p[0]["status"] == "damaged");
    text = report::packages_text(p);
    CHECK_THAT(text[0], Catch::Contains("DAMAGED: "));
    CHECK_THAT(text[1], Catch::Contains("skinstall repair a --from a.run"));
    CHECK(report::packages_text(json::array()) ==
          report::Lines{"no static-kernel packages installed"});
}

TEST_CASE("conflicts and shadows: the later install wins and names whom it hides",
          "[install][report]") {
    Tree t;
    auto tree = t.open();
    std::vector<std::string> skipped;
    json c = report::conflicts(tree, skipped);
    CHECK(skipped.empty());
    REQUIRE(c.size() == 1);
    CHECK(c[0]["winner"] == "b");
    CHECK(c[0]["binPath"] == "b/soc/Add/add.o");
    CHECK(c[0]["hidden"][0]["package"] == "a");
    CHECK(report::conflicts_text(c) == report::Lines{"soc Add Add/1: b wins, hiding a"});
    json s = report::shadows(tree, {"b"});
    CHECK(report::shadow_lines(s) ==
          report::Lines{"b's kernel for Add/1 (Add on soc) hides the one from a"});
    CHECK(report::shadows(tree, {"a"}).empty());
    json results = json::array({{{"name", "a"}}, {{"name", "b"}}});
    report::attach_shadows(results, s);
    CHECK(results[0]["shadows"].empty());
    CHECK(results[1]["shadows"].size() == 1);
}

TEST_CASE("verify: a changed file is one problem line; a file nobody owns is the tree's",
          "[install][report]") {
    Tree t;
    auto tree = t.open();
    auto ok = report::verify_package(tree, "a", true, nullptr);
    CHECK(ok.problems == 0);
    CHECK(ok.lines.empty());
    CHECK(ok.result["ok"] == true);
    CHECK(ok.files == ok.result["files"].get<std::size_t>());
    test::write_text(t.ai() + "/a/soc/Add/add.o", "tampered");
    auto bad = report::verify_package(tree, "a", true, nullptr);
    CHECK(bad.problems == 1);
    REQUIRE(bad.lines.size() == 1);
    CHECK_THAT(bad.lines[0], Catch::StartsWith("a: soc/Add/add.o: "));
    CHECK(bad.result["problems"][0]["path"] == "soc/Add/add.o");
    CHECK_THROWS_AS(report::verify_package(tree, "nothere", false, nullptr), support::Error);
    CHECK(report::verify_tree(tree).result.is_null());
    test::write_text(t.ai() + "/stray.txt", "x");
    auto extra = report::verify_tree(tree);
    CHECK(extra.problems == 1);
    CHECK(extra.lines ==
          report::Lines{"tree: stray.txt: unexpected: not a file skforge keeps here"});
    CHECK(report::verify_summary(2, 7, 1) == "verified 2 package(s), 7 entries: 1 problem(s)");
}

TEST_CASE("files and info: what a package holds and which of its kernels the runtime loads",
          "[install][report]") {
    Tree t;
    auto tree = t.open();
    auto pd = classify_package_dir(tree, "a", true);
    REQUIRE(pd.manifest);
    json f = report::files(tree, "a", *pd.manifest);
    auto lines = report::files_text(f);
    CHECK(lines.front() == tree.shown() + "/a");
    CHECK(lines.back() == tree.shown() + "/a/manifest.json");
    CHECK(std::find(lines.begin(), lines.end(), tree.shown() + "/a/soc/Add/add.o") != lines.end());
    CHECK(f["files"].size() == pd.manifest->entries.size());
    json i = report::info(tree, "a", *pd.manifest);
    CHECK(i["kernels"][0]["winner"] == "b");
    auto text = report::info_text(i);
    CHECK(text[0] == "Name:           a");
    CHECK(text[4] == "CANN:           not recorded (the package names no CANN release; installed "
                     "without a check)");
    CHECK(text[6] == "Signature:      unsigned");
    CHECK(text.back() == "  soc Add Add/1: a/soc/Add/add.o (hidden by b)");
}

TEST_CASE("owner's key uses and the dry run's lines", "[install][report]") {
    KeyUse u{"soc", "Add", "Add/1", {{"a", "a/x.o"}, {"b", "b/x.o"}}};
    json k = report::key_use(u);
    CHECK(k["winner"] == "b");
    CHECK(report::key_uses_text(json::array({k})) ==
          report::Lines{"  soc Add Add/1: b wins (b/x.o); hides a"});
    json results =
        json::array({report::install_result({"a", "2", "1", InstallOutcome::upgraded}),
                     report::install_result({"b", "1", "", InstallOutcome::already_installed}),
                     report::uninstall_result({"c", "3", "uninstalled"})});
    auto lines = report::dry_run_lines(results);
    CHECK(lines == report::Lines{"would upgrade a 2",
                                 "would leave b 1 as it is (already installed)",
                                 "would uninstall c 3"});
    CHECK(results[2]["dry_run"] == true);
    CHECK(results[1]["changed"] == false);
}

TEST_CASE("a history line is one line whatever its fields hold", "[install][report]") {
    json l = {{"time", "2026-12-02T00:00:00Z"},
              {"user", "root"},
              {"action", "upgrade"},
              {"package", "k\n2026-12-02T00:00:01Z root uninstall everything"},
              {"old_version", "1"},
              {"new_version", "2"},
              {"result", "ok"},
              {"command", "skinstall upgrade k.run"}};
    std::string text = report::history_text(l);
    CHECK(text.find('\n') == std::string::npos);
    CHECK_THAT(text, Catch::StartsWith("2026-12-02T00:00:00Z root upgrade k") &&
                         Catch::Contains(" 1 -> 2 ok  [skinstall upgrade k.run]"));
    l.erase("old_version");
    l.erase("package");
    CHECK_THAT(report::history_text(l), Catch::Contains("upgrade - 2 ok"));
}

TEST_CASE("verify --fix: what was fixed and what is left, as text, JSON and history lines",
          "[install][report][fix]") {
    FixReport r;
    r.fixed.push_back({"", "config/soc/binary_info_config.json", "stale index",
                       "missing; rebuilt from the installed packages", ""});
    r.fixed.push_back({"a", "soc/Add/add.o", "changed content", "restored from /w/a.run", ""});
    r.left.push_back({"b", "soc/Mul/mul.o", "missing", "cannot restore it: the .run is gone",
                      "skinstall repair b --from X.run"});
    r.rebuilt = {"config/soc/binary_info_config.json"};
    r.repaired.push_back({"a", "1.0", "/w/a.run", 1});
    r.packages = 2;
    auto lines = report::fix_lines(r);
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] == "tree: config/soc/binary_info_config.json: stale index: fixed: missing; "
                      "rebuilt from the installed packages");
    CHECK(lines[1] == "a: soc/Add/add.o: changed content: fixed: restored from /w/a.run");
    CHECK(lines[2] == "b: soc/Mul/mul.o: missing: left: cannot restore it: the .run is gone; fix: "
                      "skinstall repair b --from X.run");
    CHECK(report::fix_summary(r) == "verified and fixed 2 package(s): 2 problem(s) fixed, 1 left");
    json j = report::fix_result(r);
    CHECK_FALSE(j["ok"].get<bool>());
    CHECK(j["left"][0]["fix"] == "skinstall repair b --from X.run");
    CHECK_FALSE(j["fixed"][0].contains("fix"));
    CHECK(j["repaired"][0]["entries"] == 1);
    auto h = report::fix_history(r, "skinstall verify --fix");
    REQUIRE(h.size() == 2);
    CHECK(h[0]["action"] == "fixed");
    CHECK(h[0]["detail"] == "rebuilt config/soc/binary_info_config.json");
    CHECK(h[1]["action"] == "repaired");
    CHECK(h[1]["package"] == "a");
    CHECK(h[1]["detail"] == "restored 1 differing entry from /w/a.run");
    r.dry_run = true;
    CHECK(report::fix_history(r, "x").empty());
    CHECK(report::fix_lines(r)[1] ==
          "a: soc/Add/add.o: changed content: would fix: restored from /w/a.run");
    CHECK(report::fix_summary(r) == "checked 2 package(s): 2 problem(s) would be fixed, 1 left");
}

TEST_CASE("verify --fix rebuilds a deleted global index and restores an edited file in place",
          "[install][report][fix]") {
    Tree t;
    std::string idx = t.ai() + "/config/soc/binary_info_config.json";
    std::string good = test::read_text(idx);
    fs::remove(idx);
    test::write_text(t.ai() + "/a/soc/Add/add.o", "edited");
    auto tree = t.open();
    FixReport r;
    {
        TreeLock lock(tree, LockMode::exclusive);
        FixRequest rq;
        rq.act = Act::dry_run;
        r = fix_tree(tree, rq, t.log);
        CHECK_FALSE(fs::exists(idx));
        CHECK(r.left.empty());
        rq.act = Act::yes;
        r = fix_tree(tree, rq, t.log);
    }
    CHECK(r.left.empty());
    CHECK(test::read_text(idx) == good);
    CHECK(test::read_text(t.ai() + "/a/soc/Add/add.o") == "kernel a");
    CHECK(tree.install_order() == std::vector<std::string>{"a", "b"});
    REQUIRE(r.repaired.size() == 1);
    CHECK(r.repaired[0].name == "a");
}
