// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/history.hpp"
#include "skforge/support/error.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace skforge;
using namespace skforge::install;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

InstallTree open_tree(const test::ScopedTempDir& dir) {
    fs::create_directories(dir / "root");
    return std::move(*InstallTree::open(dir / "root", Create::yes));
}

struct Tree {
    test::ScopedTempDir dir;
    InstallTree tree = open_tree(dir);
    std::string log_path() const {
        return dir / "root/opp/static_kernel/ai_core/log/skinstall.log";
    }
};

void append_raw(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::app | std::ios::binary) << text;
}

} // namespace

TEST_CASE("history: damaged and foreign lines are kept as text, the rest is read",
          "[install][history]") {
    Tree t;
    append_history(t.tree,
                   {history_line("skinstall install a.run", "a", "", "1", "installed", "ok")});
    append_raw(t.log_path(),
               "{\"unreadable\": 1}\n[1]\nbad \xff line\n{\"time\":\"t\",\"action\":2}\n");
    append_history(t.tree,
                   {history_line("skinstall uninstall a", "a", "1", "", "uninstalled", "ok")});
    auto h = read_history(t.tree);
    REQUIRE(h.size() == 6);
    CHECK(h[0].readable());
    CHECK(h[0].line["action"] == "installed");
    CHECK_FALSE(h[1].readable());
    CHECK(h[1].as_json() == json{{"unreadable", "{\"unreadable\": 1}"}});
    CHECK(h[2].text == "[1]");
    CHECK(h[3].text == "bad \xff line");
    CHECK_FALSE(h[4].readable()); // "action" is not a string
    CHECK(h[5].line["action"] == "uninstalled");
}

TEST_CASE("history: text that is not UTF-8 is written replaced, never refused",
          "[install][history]") {
    Tree t;
    REQUIRE_NOTHROW(
        append_history(t.tree, {history_line("skinstall install /x\xff.run --install-path /r\xfe",
                                             "a", "", "1", "installed", "ok")}));
    auto h = read_history(t.tree);
    REQUIRE(h.size() == 1);
    REQUIRE(h[0].readable());
    CHECK(h[0].line["command"] ==
          "skinstall install /x\xef\xbf\xbd.run --install-path /r\xef\xbf\xbd");
}

TEST_CASE("the --log-file option: each refusal and its reason", "[install][history]") {
    test::ScopedTempDir dir;
    fs::create_directories(dir / "logs");
    fs::create_symlink(dir / "logs/real.log", dir / "logs/link.log");
    append_raw(dir / "logs/site.log", "");
    CHECK(log_file_problem("") == "is empty");
    CHECK(log_file_problem(dir / "logs/") == "ends in '/': name a file");
    CHECK(log_file_problem(dir / "logs") == "is a directory: name a file");
    CHECK_THAT(*log_file_problem(dir / "logs/link.log"), Catch::Contains("symbolic link"));
    CHECK_THAT(*log_file_problem(dir / "none/x.log"), Catch::Contains("not an existing directory"));
    CHECK(log_file_problem("/dev/null") == "is not a regular file");
    CHECK_FALSE(log_file_problem(dir / "logs/site.log"));
    CHECK_FALSE(log_file_problem(dir / "logs/new.log"));
}
