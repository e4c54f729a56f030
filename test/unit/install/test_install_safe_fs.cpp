#include "skforge/install/safe_fs.hpp"
#include "skforge/support/error.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <filesystem>

using namespace skforge;
using namespace skforge::install;
namespace fs = std::filesystem;

namespace {
Dir open_root(const std::string& path) {
    return Dir{support::open_read(path), path};
}
} // namespace

TEST_CASE("open_beneath opens plain paths and reports missing ones as empty",
          "[install][safe_fs]") {
    test::ScopedTempDir dir;
    test::write_text(dir / "a/b/c.txt", "x");
    auto root = open_root(dir.path());
    CHECK(open_beneath(root, "a/b/c.txt", O_RDONLY));
    CHECK_FALSE(open_beneath(root, "a/b/missing", O_RDONLY));
    CHECK_FALSE(open_beneath(root, "missing/c.txt", O_RDONLY));
}

TEST_CASE("open_beneath refuses a symlink anywhere, naming it", "[install][safe_fs]") {
    test::ScopedTempDir dir;
    test::write_text(dir / "outside/secret", "s");
    fs::create_directories(dir / "root/a");
    fs::create_directory_symlink(dir / "outside", dir / "root/a/link");
    fs::create_symlink(dir / "outside/secret", dir / "root/final");
    auto root = open_root(dir / "root");
    CHECK_THROWS_WITH(open_beneath(root, "a/link/secret", O_RDONLY),
                      Catch::Contains("root/a/link' is a symbolic link") ||
                          Catch::Contains("root/a/link': it is a symbolic link"));
    CHECK_THROWS_WITH(open_beneath(root, "final", O_RDONLY),
                      Catch::Contains("final': it is a symbolic link"));
    CHECK_THROWS_WITH(open_beneath(root, "a/link/new", O_WRONLY | O_CREAT, 0644),
                      Catch::Contains("symbolic link"));
    CHECK_FALSE(fs::exists(dir / "outside/new"));
}

TEST_CASE("open_beneath refuses to leave its directory", "[install][safe_fs]") {
    test::ScopedTempDir dir;
    test::write_text(dir / "secret", "s");
    fs::create_directories(dir / "root");
    auto root = open_root(dir / "root");
    CHECK_THROWS(open_beneath(root, "../secret", O_RDONLY));
}

TEST_CASE("remove_tree removes links, never their targets", "[install][safe_fs]") {
    test::ScopedTempDir dir;
    test::write_text(dir / "outside/keep", "k");
    test::write_text(dir / "root/victim/file", "f");
    fs::create_directory_symlink(dir / "outside", dir / "root/victim/link");
    auto root = open_root(dir / "root");
    remove_tree(root, "victim");
    CHECK_FALSE(fs::exists(fs::symlink_status(dir / "root/victim")));
    CHECK(test::read_text(dir / "outside/keep") == "k");
}

TEST_CASE("write_file_at replaces whole files and refuses to write through a symlink",
          "[install][safe_fs]") {
    test::ScopedTempDir dir;
    fs::create_directories(dir / "root");
    test::write_text(dir / "target", "t");
    fs::create_symlink(dir / "target", dir / "root/config.ini");
    auto root = open_root(dir / "root");
    CHECK_THROWS_WITH(write_file_at(root, "config.ini", "x", 0644),
                      Catch::Contains("symbolic link"));
    CHECK(test::read_text(dir / "target") == "t");
    write_file_at(root, "other", "hello", 0640);
    CHECK(test::read_text(dir / "root/other") == "hello");
    CHECK((fs::status(dir / "root/other").permissions() & fs::perms::all) ==
          (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
    CHECK(list_dir(root) == std::vector<std::string>{"config.ini", "other"});
}
