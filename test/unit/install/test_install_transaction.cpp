// SPDX-License-Identifier: Apache-2.0
#include "craft.hpp"
#include "skforge/install/index.hpp"
#include "skforge/install/query.hpp"
#include "skforge/install/transaction.hpp"
#include "skforge/package/writer.hpp"
#include "skforge/support/error.hpp"
#include "snapshot.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <sys/stat.h>
#include <thread>

using namespace skforge;
using namespace skforge::install;
using test::RawEntry;
namespace fs = std::filesystem;

namespace {

struct Fixture {
    test::ScopedTempDir dir;
    support::NullLog log;
    Policy policy;

    std::string root() const { return dir / "root"; }
    std::string ai() const { return dir / "root/opp/static_kernel/ai_core"; }

    Fixture() { fs::create_directories(root()); }

    // A package made by skc pack from a small tree; `extra` varies its content.
    std::string packed(const std::string& name, const std::string& extra = "") {
        std::string src = dir / ("src-" + name + extra);
        test::write_text(src + "/soc/Add/add.o", "kernel " + name + extra);
        test::write_text(src + "/config/soc/binary_info_config.json",
                         R"({"Add":{"staticList":[{"simplifiedKey":"Add/1","binPath":")" + name +
                             R"(/soc/Add/add.o"}]}})");
        fs::create_directories(dir / "out");
        package::PackOptions o{src, dir / ("out/" + name + ".run"), extra.empty() ? "1" : "2", "",
                               ""};
        package::pack(o);
        return o.output;
    }

    void run(const std::string& run_path, InstallMode mode = InstallMode::install) {
        auto pkg = verify_package(run_path, policy);
        auto tree = InstallTree::open(root(), Create::yes);
        TreeLock lock(*tree, LockMode::exclusive);
        recover(*tree, log);
        install_package(*tree, pkg, mode, policy, log);
    }

    // Installing `run_path` must fail with `message` and leave the whole tree as it was.
    void expect_refused(const std::string& run_path, const std::string& message) {
        auto before = test::snapshot(dir.path());
        try {
            run(run_path);
            FAIL("installed " << run_path);
        } catch (const support::Error& e) {
            CHECK_THAT(e.what(), Catch::Contains(message));
        }
        CHECK(test::snapshot(dir.path()) == before);
    }
};

} // namespace

TEST_CASE("install places files, config.ini and the index; reinstall is a no-op",
          "[install][transaction]") {
    Fixture f;
    f.run(f.packed("k1"));
    CHECK(test::read_text(f.ai() + "/k1/soc/Add/add.o") == "kernel k1");
    CHECK(fs::exists(f.ai() + "/k1/manifest.json"));
    CHECK(test::read_text(f.ai() + "/config.ini").find("install_order=k1\n") != std::string::npos);
    CHECK_THAT(test::read_text(f.ai() + "/config/soc/binary_info_config.json"),
               Catch::Contains("k1/soc/Add/add.o"));
    CHECK((fs::status(f.ai() + "/k1").permissions() & fs::perms::all) ==
          static_cast<fs::perms>(0755));
    auto before = test::snapshot(f.dir.path());
    f.run(f.dir / "out/k1.run");
    CHECK(test::snapshot(f.dir.path()) == before);
}

TEST_CASE("a different version needs upgrade; upgrade replaces; uninstall restores the index",
          "[install][transaction]") {
    Fixture f;
    f.run(f.packed("base"));
    f.run(f.packed("k1"));
    CHECK_THAT(test::read_text(f.ai() + "/config/soc/binary_info_config.json"),
               Catch::Contains("k1/soc/Add/add.o"));
    auto v2 = f.packed("k1", "v2");
    f.expect_refused(v2, "use 'skinstall upgrade'");
    f.run(v2, InstallMode::upgrade);
    CHECK(test::read_text(f.ai() + "/k1/soc/Add/add.o") == "kernel k1v2");
    CHECK_FALSE(fs::exists(f.ai() + "/.skforge-stage-k1"));
    auto tree = InstallTree::open(f.root(), Create::no);
    uninstall_package(*tree, "k1", Force::no, f.log);
    CHECK_FALSE(fs::exists(f.ai() + "/k1"));
    CHECK_THAT(test::read_text(f.ai() + "/config/soc/binary_info_config.json"),
               Catch::Contains("base/soc/Add/add.o"));
    CHECK(tree->install_order() == std::vector<std::string>{"base"});
}

TEST_CASE("uninstall refuses changed files without force and keeps files it did not install",
          "[install][transaction]") {
    Fixture f;
    f.run(f.packed("k1"));
    test::write_text(f.ai() + "/k1/soc/Add/add.o", "tampered");
    test::write_text(f.ai() + "/k1/soc/user-notes.txt", "mine");
    auto tree = InstallTree::open(f.root(), Create::no);
    auto before = test::snapshot(f.dir.path());
    CHECK_THROWS_WITH(uninstall_package(*tree, "k1", Force::no, f.log),
                      Catch::Contains("soc/Add/add.o (changed size"));
    CHECK(test::snapshot(f.dir.path()) == before);
    uninstall_package(*tree, "k1", Force::yes, f.log);
    CHECK_FALSE(fs::exists(f.ai() + "/k1/soc/Add/add.o"));
    CHECK(test::read_text(f.ai() + "/k1/soc/user-notes.txt") == "mine");
    CHECK(tree->install_order().empty());
}

TEST_CASE("uninstall never follows a symlink planted in the package", "[install][transaction]") {
    Fixture f;
    f.run(f.packed("k1"));
    test::write_text(f.dir / "victim/add.o", "precious");
    fs::remove_all(f.ai() + "/k1/soc/Add");
    fs::create_directory_symlink(f.dir / "victim", f.ai() + "/k1/soc/Add");
    auto tree = InstallTree::open(f.root(), Create::no);
    CHECK_THROWS_WITH(uninstall_package(*tree, "k1", Force::no, f.log), Catch::Contains("changed"));
    uninstall_package(*tree, "k1", Force::yes, f.log);
    CHECK(test::read_text(f.dir / "victim/add.o") == "precious");
}

TEST_CASE("hostile payloads are refused and the tree is unchanged", "[install][adversarial]") {
    Fixture f;
    f.run(f.packed("base"));
    std::string k = "kernel";
    auto m = test::make_manifest("bad", {test::file_entry("a", k)});
    auto text = package::manifest_to_json(m);
    auto craft = [&](std::vector<RawEntry> entries) {
        return test::craft_run(f.dir / "out", m, text, entries);
    };
    f.expect_refused(craft({{"../a", AE_IFREG, 0644, k}}), "'../a' path has a '..' component");
    f.expect_refused(craft({{"a/../../x", AE_IFREG, 0644, k}}), "has a '..' component");
    f.expect_refused(craft({{"/etc/a", AE_IFREG, 0644, k}}), "is absolute");
    f.expect_refused(craft({{"a", AE_IFLNK, 0777, "", "/etc/passwd"}}), "symbolic link entry");
    f.expect_refused(craft({{"a", AE_IFREG, 0644, "", "manifest.json", true}}), "hard link entry");
    f.expect_refused(craft({{"a", AE_IFCHR, 0644}}), "character device entry");
    f.expect_refused(craft({{"a", AE_IFBLK, 0644}}), "block device entry");
    f.expect_refused(craft({{"a", AE_IFIFO, 0644}}), "FIFO entry");
    f.expect_refused(craft({{"a", AE_IFREG, 04755, k}}), "has mode 04755");
    f.expect_refused(craft({{"a", AE_IFREG, 02755, k}}), "has mode 02755");
    f.expect_refused(craft({{"a", AE_IFREG, 0646, k}}), "has mode 0646");
    f.expect_refused(craft({{"a", AE_IFREG, 0644, "kernex"}}),
                     "does not match its manifest SHA-256");
    f.expect_refused(craft({{"a", AE_IFREG, 0644, "kern"}}), "size other than");
    f.expect_refused(craft({{"a", AE_IFREG, 0644, k}, {"a", AE_IFREG, 0644, k}}), "appears twice");
    f.expect_refused(craft({{"a", AE_IFREG, 0644, k}, {"b", AE_IFREG, 0644, k}}),
                     "'b' is not in the manifest");
    f.expect_refused(craft({}), "lists 'a' but the payload lacks it");
    f.expect_refused(craft({{"a\x01", AE_IFREG, 0644, k}}), "control character");
    f.expect_refused(craft({{"a\xff", AE_IFREG, 0644, k}}), "not valid UTF-8");
    f.expect_refused(craft({{std::string(256, 'n'), AE_IFREG, 0644, k}}),
                     "component longer than 255");
    std::string deep;
    while (deep.size() < 4100)
        deep += std::string(200, 'd') + "/";
    f.expect_refused(craft({{deep + "x", AE_IFREG, 0644, k}}), "longer than 4096");
}

TEST_CASE("a directory entry then a file of the same name is refused", "[install][adversarial]") {
    Fixture f;
    f.run(f.packed("base"));
    std::string k = "kernel";
    auto m = test::make_manifest("dup", {{"d", package::EntryType::directory, 0755, 0, ""}});
    auto run = test::craft_run(f.dir / "out", m, package::manifest_to_json(m),
                               {{"d", AE_IFDIR, 0755}, {"d", AE_IFREG, 0644, k}});
    f.expect_refused(run, "'d' ");
}

TEST_CASE("an unsafe manifest name is refused", "[install][adversarial]") {
    Fixture f;
    f.run(f.packed("base"));
    auto m = test::make_manifest("okname", {});
    auto text = package::manifest_to_json(m);
    text.replace(text.find("\"okname\""), 8, "\"../etc\"");
    f.expect_refused(test::craft_run(f.dir / "out", m, text, {}), "name '../etc'");
}

TEST_CASE("truncated, appended and bit-flipped packages are refused", "[install][adversarial]") {
    Fixture f;
    f.run(f.packed("base"));
    auto good = f.packed("k1");
    auto bytes = test::read_text(good);
    test::write_text(good, bytes.substr(0, bytes.size() - 1));
    f.expect_refused(good, "truncated");
    test::write_text(good, bytes + "x");
    f.expect_refused(good, "unexpected bytes after the declared end");
    auto flipped = bytes;
    flipped[flipped.size() - 30] = static_cast<char>(flipped[flipped.size() - 30] ^ 0x10);
    test::write_text(good, flipped);
    f.expect_refused(good, "payload SHA-256 mismatch");
    // The name comes from the package, not the file: a renamed copy installs as k1.
    fs::rename(f.dir / "out/k1.run", f.dir / "out/renamed.run");
    test::write_text(f.dir / "out/renamed.run", bytes);
    f.run(f.dir / "out/renamed.run");
    CHECK(fs::is_regular_file(f.ai() + "/k1/soc/Add/add.o"));
}

TEST_CASE("signature policy", "[install][adversarial]") {
    Fixture f;
    f.run(f.packed("base"));
    auto key = package::Key::generate(f.dir / "key");
    auto other = package::Key::generate(f.dir / "other");
    f.policy.require_signature = true;
    f.policy.trusted = {package::Key::load_public(f.dir / "key.pub.pem")};
    f.expect_refused(f.packed("unsigned1"), "not signed");
    std::string src = f.dir / "src-s";
    test::write_text(src + "/x", "x");
    package::PackOptions o{src, f.dir / "out/s.run", "1", "", ""};
    o.sign_key = f.dir / "other.pem";
    package::pack(o);
    f.expect_refused(o.output, "not trusted");
    o.sign_key = f.dir / "key.pem";
    package::pack(o);
    auto bytes = test::read_text(o.output);
    bytes[40] = static_cast<char>(bytes[40] ^ 1); // inside the stub's comment
    test::write_text(f.dir / "out/s.run", bytes);
    f.expect_refused(o.output, "signature does not match");
    package::pack(o);
    f.run(o.output);
    CHECK(fs::exists(f.ai() + "/s/x"));
    (void)key;
    (void)other;
}

TEST_CASE("symlinks planted under ai_core are refused with their path", "[install][adversarial]") {
    Fixture f;
    f.run(f.packed("base"));
    auto run = f.packed("k1");
    fs::create_directories(f.dir / "victim");
    SECTION("at the package path") {
        fs::create_directory_symlink(f.dir / "victim", f.ai() + "/k1");
        f.expect_refused(run, "ai_core/k1': it is a symbolic link");
    }
    SECTION("at config/") {
        fs::rename(f.ai() + "/config", f.dir / "victim/config");
        fs::create_directory_symlink(f.dir / "victim/config", f.ai() + "/config");
        f.expect_refused(run, "ai_core/config': it is a symbolic link");
    }
    SECTION("in the middle of the path") {
        fs::rename(f.root() + "/opp/static_kernel", f.dir / "victim/static_kernel");
        fs::create_directory_symlink(f.dir / "victim/static_kernel",
                                     f.root() + "/opp/static_kernel");
        f.expect_refused(run, "opp/static_kernel': it is a symbolic link");
    }
    SECTION("at the lock") {
        fs::remove(f.ai() + "/config/static_kernel.lock");
        fs::create_symlink(f.dir / "victim/lock", f.ai() + "/config/static_kernel.lock");
        f.expect_refused(run, "static_kernel.lock': it is a symbolic link");
        CHECK_FALSE(fs::exists(f.dir / "victim/lock"));
    }
    SECTION("at config.ini") {
        fs::rename(f.ai() + "/config.ini", f.dir / "victim/config.ini");
        fs::create_symlink(f.dir / "victim/config.ini", f.ai() + "/config.ini");
        f.expect_refused(run, "config.ini");
    }
    CHECK((fs::is_empty(f.dir / "victim") || !fs::exists(f.dir / "victim/k1")));
}

TEST_CASE("the install root itself may be a symlink", "[install][transaction]") {
    Fixture f;
    fs::create_directories(f.dir / "8.0");
    fs::create_directory_symlink(f.dir / "8.0", f.dir / "latest");
    auto pkg = verify_package(f.packed("k1"), f.policy);
    auto tree = InstallTree::open(f.dir / "latest", Create::yes);
    TreeLock lock(*tree, LockMode::exclusive);
    install_package(*tree, pkg, InstallMode::install, f.policy, f.log);
    CHECK(fs::exists(f.dir / "8.0/opp/static_kernel/ai_core/k1/soc/Add/add.o"));
}

TEST_CASE("a racing symlink swap never lets a write land outside", "[install][adversarial]") {
    Fixture f;
    f.run(f.packed("base"));
    std::string src = f.dir / "src-many";
    for (int i = 0; i < 200; ++i)
        test::write_text(src + "/d/sub" + std::to_string(i % 4) + "/f" + std::to_string(i),
                         std::string(2000, 'x'));
    package::PackOptions o{src, f.dir / "out/many.run", "1", "", ""};
    package::pack(o);
    fs::create_directories(f.dir / "outside");
    std::atomic<bool> stop{false};
    std::string stage_d = f.ai() + "/.skforge-stage-many/d";
    std::jthread attacker([&] {
        std::error_code ec;
        while (!stop) {
            if (fs::is_directory(fs::symlink_status(stage_d, ec))) {
                fs::rename(stage_d, f.dir / "moved", ec);
                fs::create_directory_symlink(f.dir / "outside", stage_d, ec);
            }
            std::this_thread::yield();
        }
    });
    for (int round = 0; round < 5; ++round) {
        try {
            f.run(o.output);
            auto tree = InstallTree::open(f.root(), Create::no);
            uninstall_package(*tree, "many", Force::yes, f.log);
        } catch (const support::Error& e) {
            CHECK_THAT(e.what(), Catch::Contains("symbolic link") || Catch::Contains("vanished") ||
                                     Catch::Contains("cannot"));
        }
        std::error_code ec;
        fs::remove_all(f.dir / "moved", ec);
    }
    stop = true;
    attacker.join();
    CHECK(fs::is_empty(f.dir / "outside"));
}

TEST_CASE("recover rolls back a stage left without a journal", "[install][transaction]") {
    Fixture f;
    f.run(f.packed("base"));
    auto before = test::snapshot(f.dir.path());
    fs::create_directories(f.ai() + "/.skforge-stage-k9/junk");
    test::write_text(f.ai() + "/.config.ini.tmp.12345", "partial");
    auto tree = InstallTree::open(f.root(), Create::no);
    CHECK_THAT(recover(*tree, f.log), Catch::Contains("removed the leftover '.skforge-stage-k9'"));
    CHECK(test::snapshot(f.dir.path()) == before);
    CHECK(recover(*tree, f.log) == "nothing to recover");
}

namespace {

// A package tree with one kernel and `index` as its index, packed by skc pack's library, or
// crafted (`crafted`) so the index reaches the installer unchecked by pack.
std::string with_index(Fixture& f, const std::string& name, const std::string& index) {
    std::string k = "kernel";
    auto m = test::make_manifest(name,
                                 {{"config", package::EntryType::directory, 0755, 0, ""},
                                  {"config/soc", package::EntryType::directory, 0755, 0, ""},
                                  test::file_entry("config/soc/binary_info_config.json", index),
                                  {"soc", package::EntryType::directory, 0755, 0, ""},
                                  test::file_entry("soc/add.o", k)},
                                 {{"config/soc/binary_info_config.json", index}});
    return test::craft_run(f.dir / "out", m, package::manifest_to_json(m),
                           {{"config", AE_IFDIR, 0755},
                            {"config/soc", AE_IFDIR, 0755},
                            {"config/soc/binary_info_config.json", AE_IFREG, 0644, index},
                            {"soc", AE_IFDIR, 0755},
                            {"soc/add.o", AE_IFREG, 0644, k}});
}

} // namespace

TEST_CASE("index entries that leave their package are refused before anything is written",
          "[install][adversarial][index]") {
    Fixture f;
    fs::create_directories(f.dir / "out");
    f.run(f.packed("base"));
    auto entry = [](const std::string& bin) {
        return R"({"Add":{"staticList":[{"simplifiedKey":"Add/x","binPath":")" + bin + R"("}]}})";
    };
    f.expect_refused(with_index(f, "evil", entry("../../../../etc/shadow")),
                     "binPath '../../../../etc/shadow' has a '..' component");
    f.expect_refused(with_index(f, "evil", entry("base/soc/Add/add.o")),
                     "is outside the package (it must start with 'evil/')");
    f.expect_refused(with_index(f, "evil", entry("evil/../base/soc/Add/add.o")),
                     "has a '..' component");
    f.expect_refused(with_index(f, "evil", entry("/etc/shadow")), "is absolute");
    f.expect_refused(with_index(f, "evil", entry("evil/soc/missing.o")), "names no file");
    f.expect_refused(with_index(f, "evil", entry("evil/soc")), "names no file");
    f.expect_refused(with_index(f, "evil", R"({"Add":{"binaryList":[]}})"), "uses binaryList");
    // The same entry pointing at the package's own file is accepted.
    f.run(with_index(f, "good", entry("good/soc/add.o")));
    CHECK_THAT(test::read_text(f.ai() + "/config/soc/binary_info_config.json"),
               Catch::Contains("good/soc/add.o"));
}

TEST_CASE("a deeply nested index is refused with its path and later commands still work",
          "[install][adversarial][index]") {
    Fixture f;
    fs::create_directories(f.dir / "out");
    f.run(f.packed("base"));
    std::string deep = std::string(100000, '[') + std::string(100000, ']');
    f.expect_refused(with_index(f, "deep", R"({"Add":{"x":)" + deep + "}}"),
                     "binary_info_config.json' nests arrays and objects more than 64 deep");
    auto tree = InstallTree::open(f.root(), Create::no);
    CHECK(recover(*tree, f.log) == "nothing to recover");
    CHECK(check_tree(*tree).empty());
}

TEST_CASE("several packages are one transaction up to the commit", "[install][transaction]") {
    Fixture f;
    fs::create_directories(f.dir / "out");
    f.run(f.packed("base"));
    auto good = f.packed("good");
    auto bad = with_index(f, "bad", R"({"Add":{"staticList":[{"binPath":"../x"}]}})");
    auto before = test::snapshot(f.dir.path());
    std::vector<VerifiedPackage> pkgs = {verify_package(good, f.policy),
                                         verify_package(bad, f.policy)};
    auto tree = InstallTree::open(f.root(), Create::yes);
    CHECK_THROWS_WITH(install_packages(*tree, pkgs, InstallMode::install, f.policy, f.log),
                      Catch::Contains("binPath '../x'"));
    CHECK(test::snapshot(f.dir.path()) == before);
    pkgs.pop_back();
    pkgs.push_back(verify_package(good, f.policy));
    CHECK_THROWS_WITH(install_packages(*tree, pkgs, InstallMode::install, f.policy, f.log),
                      Catch::Contains("are both package 'good'"));
    pkgs.pop_back();
    install_packages(*tree, pkgs, InstallMode::install, f.policy, f.log);
    CHECK(tree->install_order() == std::vector<std::string>{"base", "good"});
}

TEST_CASE("recover removes temporaries anywhere skforge writes and verify reports them",
          "[install][recover]") {
    Fixture f;
    f.run(f.packed("k1"));
    test::write_text(f.ai() + "/config/soc/.binary_info_config.json.tmp.4242", "{");
    test::write_text(f.ai() + "/config/.x.tmp.7", "");
    test::write_text(f.ai() + "/.config.ini.tmp.99", "");
    test::write_text(f.ai() + "/config/soc/planted", "");
    auto tree = InstallTree::open(f.root(), Create::no);
    std::vector<std::string> found;
    for (const auto& p : check_tree(*tree))
        found.push_back(p.path);
    std::sort(found.begin(), found.end());
    CHECK(found == std::vector<std::string>{".config.ini.tmp.99", "config/.x.tmp.7",
                                            "config/soc/.binary_info_config.json.tmp.4242",
                                            "config/soc/planted"});
    {
        TreeLock lock(*tree, LockMode::exclusive);
        CHECK_THAT(recover(*tree, f.log), Catch::Contains("config/soc/.binary_info_config"));
    }
    REQUIRE(check_tree(*tree).size() == 1);
    CHECK(check_tree(*tree)[0].path == "config/soc/planted");
}

TEST_CASE("a FIFO in place of config.ini or the journal is refused, never waited on",
          "[install][adversarial]") {
    Fixture f;
    f.run(f.packed("k1"));
    for (const char* name : {"config.ini", ".skforge-journal"}) {
        std::string path = f.ai() + "/" + name;
        fs::remove(path);
        REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
        auto tree = InstallTree::open(f.root(), Create::no);
        TreeLock lock(*tree, LockMode::exclusive);
        CHECK_THROWS_WITH(recover(*tree, f.log), Catch::Contains("not a regular file"));
        fs::remove(path);
        if (std::string(name) == "config.ini")
            tree->write_install_order({"k1"});
    }
}

TEST_CASE("an edited install script is refused by the installer", "[install][adversarial]") {
    Fixture f;
    fs::create_directories(f.dir / "out");
    std::string k = "kernel";
    auto m = test::make_manifest("trojan", {test::file_entry("a", k)});
    std::string evil = "#!/bin/sh\nrm -rf /\n";
    for (auto& e : m.entries)
        if (e.path == "uninstall.sh")
            e = test::file_entry("uninstall.sh", evil, 0755);
    auto run = test::craft_run(f.dir / "out", m, package::manifest_to_json(m),
                               {{"a", AE_IFREG, 0644, k}, {"uninstall.sh", AE_IFREG, 0755, evil}});
    f.expect_refused(run, "uninstall.sh differs from the script skforge generates");
}

TEST_CASE("a trusted key alone requires a signature", "[install][adversarial]") {
    Fixture f;
    auto unsigned_run = f.packed("k1");
    f.policy.trusted.push_back(package::Key::generate(f.dir / "trusted"));
    f.expect_refused(unsigned_run, "not signed, and a signature by a trusted key is required");
}

TEST_CASE("a package whose index can no longer be read does not block the others",
          "[install][index]") {
    struct Collect final : support::Log {
        std::vector<std::string> warnings;
        void info(const std::string&) override {}
        void warn(const std::string& m) override { warnings.push_back(m); }
    };
    Fixture f;
    f.run(f.packed("old"));
    f.run(f.packed("k2"));
    // What an older skforge left: the dynamic-kernel format.
    test::write_text(f.ai() + "/old/config/soc/binary_info_config.json",
                     R"({"Add":{"binaryList":[{"binPath":"soc/Add/add.o"}]}})");
    Collect log;
    auto pkg = verify_package(f.packed("k3"), f.policy);
    auto tree = InstallTree::open(f.root(), Create::no);
    TreeLock lock(*tree, LockMode::exclusive);
    install_package(*tree, pkg, InstallMode::install, f.policy, log);
    REQUIRE(log.warnings.size() == 1);
    CHECK_THAT(log.warnings[0], Catch::Contains("package old contributes no kernels"));
    CHECK_THAT(log.warnings[0], Catch::Contains("uses binaryList"));
    CHECK_THAT(log.warnings[0], Catch::Contains("skinstall upgrade --reinstall old.run"));
    auto index = test::read_text(f.ai() + "/config/soc/binary_info_config.json");
    CHECK_THAT(index, Catch::Contains("k3/soc/Add/add.o"));
    CHECK_THAT(index, !Catch::Contains("old/soc"));
    CHECK(tree->install_order() == std::vector<std::string>{"old", "k2", "k3"});
    // And it can still be removed.
    uninstall_package(*tree, "old", Force::yes, log);
    CHECK(tree->install_order() == std::vector<std::string>{"k2", "k3"});
}

TEST_CASE("installed, damaged, left-behind and foreign directories are told apart",
          "[install][transaction]") {
    Fixture f;
    f.run(f.packed("k1"));
    f.run(f.packed("k2"));
    auto tree = InstallTree::open(f.root(), Create::no);
    CHECK(classify_package_dir(*tree, "k1", true).state == DirState::installed);
    CHECK(classify_package_dir(*tree, "nope", false).state == DirState::absent);
    test::write_text(f.ai() + "/k1/manifest.json", "{ broken");
    auto damaged = classify_package_dir(*tree, "k1", false); // its manifest.json says it is ours
    CHECK(damaged.state == DirState::damaged);
    CHECK_THAT(damaged.why, Catch::Contains("k1/manifest.json"));
    test::write_text(f.ai() + "/theirs/file", "x");
    CHECK(classify_package_dir(*tree, "theirs", false).state == DirState::foreign);
    CHECK(classify_package_dir(*tree, "theirs", true).state == DirState::damaged);
    test::write_text(f.ai() + "/k2/soc/notes.txt", "mine");
    {
        TreeLock lock(*tree, LockMode::exclusive);
        CHECK(uninstall_package(*tree, "k2", Force::no, f.log).action == "uninstalled");
    }
    auto left = classify_package_dir(*tree, "k2", false);
    CHECK(left.state == DirState::left_behind);
    CHECK_THAT(left.why, Catch::Contains("left behind") && Catch::Contains("soc/notes.txt"));
    TreeLock lock(*tree, LockMode::exclusive);
    CHECK_THROWS_WITH(uninstall_package(*tree, "k2", Force::no, f.log),
                      Catch::Contains("uninstall --force k2"));
    CHECK(uninstall_package(*tree, "k2", Force::yes, f.log).action == "removed");
    CHECK_FALSE(fs::exists(f.ai() + "/k2"));
    CHECK(uninstall_package(*tree, "k1", Force::yes, f.log).action == "removed");
    CHECK_THROWS_WITH(uninstall_package(*tree, "theirs", Force::yes, f.log),
                      Catch::Contains("not installed by skforge"));
    CHECK(fs::exists(f.ai() + "/theirs/file"));
}
