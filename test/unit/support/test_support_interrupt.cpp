// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/atomic_file.hpp"
#include "skforge/support/interrupt.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

using namespace skforge;
namespace fs = std::filesystem;

namespace {
// The pid of a child that has ended and been reaped.
pid_t dead_pid() {
    pid_t pid = ::fork();
    if (pid == 0)
        ::_exit(0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return pid;
}
} // namespace

TEST_CASE("temporary names carry the pid of their process", "[support][interrupt]") {
    pid_t pid = 0;
    CHECK(support::is_temporary_name(".k.run.tmp.4242.AbC123", pid));
    CHECK(pid == 4242);
    CHECK(support::is_temporary_name(".skc-build.17.x9Y8z7", pid));
    CHECK(pid == 17);
    CHECK(support::is_temporary_name(".k.run.tmp.4242.AbC123", pid, "k.run"));
    CHECK_FALSE(support::is_temporary_name(".k.run.tmp.4242.AbC123", pid, "j.run"));
    CHECK_FALSE(support::is_temporary_name(".kk.run.tmp.4242.AbC123", pid, "k.run"));
    // Not ours: no pid, old names without one, other programs' files, a bad suffix.
    CHECK_FALSE(support::is_temporary_name(".k.run.tmp.AbC123", pid));
    CHECK_FALSE(support::is_temporary_name("k.run.tmp.42.AbC123", pid));
    CHECK_FALSE(support::is_temporary_name(".skc-build.AbC123", pid));
    CHECK_FALSE(support::is_temporary_name(".tmp.42.AbC123", pid));
    CHECK_FALSE(support::is_temporary_name(".k.run.tmp.42.AbC12", pid));
    CHECK_FALSE(support::is_temporary_name(".k.run.tmp.42.AbC1-3", pid));
    CHECK_FALSE(support::is_temporary_name(".k.run.tmp.0.AbC123", pid));
    CHECK_FALSE(support::is_temporary_name(".k.run.tmp.12345678901.AbC123", pid));
}

TEST_CASE("AtomicFile names its temporary with this process's pid", "[support][interrupt]") {
    test::ScopedTempDir dir;
    support::AtomicFile f(dir / "k.run", 0644);
    pid_t pid = 0;
    CHECK(support::is_temporary_name(support::base_name(f.temp_path()), pid, "k.run"));
    CHECK(pid == ::getpid());
}

TEST_CASE("stale temporaries of dead processes are removed, a live one's kept",
          "[support][interrupt]") {
    test::ScopedTempDir dir;
    const std::string dead = std::to_string(dead_pid());
    const std::string live = std::to_string(::getppid()); // our parent is alive
    test::write_text(dir / (".k.run.tmp." + dead + ".AbC123"), "partial");
    test::write_text(dir / (".k.run.tmp." + live + ".AbC123"), "partial");
    test::write_text(dir / (".skc-build." + dead + ".XyZ789/obj/a.o"), "object");
    test::write_text(dir / (".k.run.tmp." + support::temp_tag() + ".AbC123"), "ours");
    test::write_text(dir / "k.run", "the package");
    SECTION("only those of one file") {
        CHECK(support::remove_stale_temporaries(dir.path(), "k.run") == 1);
        CHECK(fs::exists(dir / (".skc-build." + dead + ".XyZ789")));
    }
    SECTION("every kind") {
        CHECK(support::remove_stale_temporaries(dir.path()) == 2);
        CHECK_FALSE(fs::exists(dir / (".skc-build." + dead + ".XyZ789")));
    }
    CHECK_FALSE(fs::exists(dir / (".k.run.tmp." + dead + ".AbC123")));
    CHECK(fs::exists(dir / (".k.run.tmp." + live + ".AbC123")));
    CHECK(fs::exists(dir / (".k.run.tmp." + support::temp_tag() + ".AbC123")));
    CHECK(fs::exists(dir / "k.run"));
    CHECK(support::remove_stale_temporaries(dir / "missing") == 0);
}
