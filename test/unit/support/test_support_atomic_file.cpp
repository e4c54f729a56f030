// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/atomic_file.hpp"
#include "skforge/support/error.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>

using namespace skforge;
namespace fs = std::filesystem;

namespace {
std::size_t entries_in(const std::string& dir) {
    return static_cast<std::size_t>(
        std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}
} // namespace

TEST_CASE("AtomicFile without commit leaves nothing behind", "[support][atomic_file]") {
    test::ScopedTempDir dir;
    test::write_text(dir / "target", "old");
    {
        support::AtomicFile f(dir / "target", 0644);
        f.write("new content");
        CHECK(entries_in(dir.path()) == 2); // target + temporary
    }
    CHECK(entries_in(dir.path()) == 1);
    CHECK(test::read_text(dir / "target") == "old");
}

TEST_CASE("AtomicFile commit replaces the target with the given mode", "[support][atomic_file]") {
    test::ScopedTempDir dir;
    test::write_text(dir / "target", "old");
    support::AtomicFile f(dir / "target", 0600);
    f.write("new content");
    f.commit();
    CHECK(test::read_text(dir / "target") == "new content");
    struct stat st {};
    REQUIRE(::stat((dir / "target").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0600);
    CHECK(entries_in(dir.path()) == 1);
}

TEST_CASE("AtomicFile commit without fsync still replaces the target whole, with its mode",
          "[support][atomic_file]") {
    test::ScopedTempDir dir;
    test::write_text(dir / "target", "old");
    support::AtomicFile f(dir / "target", 0640);
    f.write("new content");
    f.commit(support::AtomicFile::Durability::none);
    CHECK(test::read_text(dir / "target") == "new content");
    struct stat st {};
    REQUIRE(::stat((dir / "target").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0640);
    CHECK(entries_in(dir.path()) == 1);
}

TEST_CASE("AtomicFile in a missing directory names the path", "[support][atomic_file]") {
    test::ScopedTempDir dir;
    try {
        support::AtomicFile f(dir / "missing/target", 0644);
        FAIL("expected an error");
    } catch (const support::Error& e) {
        CHECK_THAT(e.what(), Catch::Contains("missing/target"));
        CHECK_THAT(e.what(), Catch::Contains("the directory '" + (dir / "missing") +
                                             "' does not exist (No such file or directory)"));
    }
}

TEST_CASE("AtomicFile in a directory handle writes there even when the path becomes a link",
          "[support][atomic_file]") {
    test::ScopedTempDir dir;
    fs::create_directories(dir / "real");
    fs::create_directories(dir / "elsewhere");
    support::UniqueFd d(::open((dir / "real").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(d);
    {
        support::AtomicFile f(d.get(), dir / "real", "x.json", 0644);
        f.write("{}");
        // The directory's path now leads elsewhere: the handle still names the real one.
        fs::rename(dir / "real", dir / "moved");
        fs::create_directory_symlink(dir / "elsewhere", dir / "real");
        f.commit();
    }
    CHECK(test::read_text(dir / "moved/x.json") == "{}");
    CHECK(entries_in(dir / "elsewhere") == 0);
    CHECK(entries_in(dir / "moved") == 1);
}

TEST_CASE("AtomicFile writes a file whose name leaves no room for a temporary suffix",
          "[support][atomic_file]") {
    test::ScopedTempDir dir;
    const std::string name(255, 'n');
    support::AtomicFile f(dir / name, 0644);
    CHECK(support::base_name(f.temp_path()).size() <= 255);
    f.write("long");
    f.commit();
    CHECK(test::read_text(dir / name) == "long");
    CHECK(entries_in(dir.path()) == 1);
}
