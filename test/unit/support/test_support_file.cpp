// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/json.hpp"
#include "skforge/support/sha256.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace skforge;

TEST_CASE("a file's text shared, read or mapped, is the file's bytes", "[support][file]") {
    test::ScopedTempDir dir;
    // Below and above the size from which files are mapped, with a NUL and no final newline.
    for (std::size_t size : {std::size_t{0}, std::size_t{100}, std::size_t{3} << 20}) {
        INFO("size " << size);
        std::string bytes(size, 'x');
        for (std::size_t i = 0; i < size; ++i)
            bytes[i] = static_cast<char>('a' + i % 23);
        if (size > 10)
            bytes[7] = '\0';
        test::write_text(dir / "f", bytes);
        auto text = support::read_file_shared(dir / "f");
        REQUIRE(text);
        CHECK(*text == bytes);
        CHECK(*text == support::read_file(dir / "f"));
        // The view outlives every other owner of it.
        auto copy = text;
        text.reset();
        CHECK(copy->size() == size);
        CHECK(*copy == bytes);
    }
    CHECK(*support::share_text("abc") == "abc");
}

TEST_CASE("a missing file is an error that names it", "[support][file]") {
    test::ScopedTempDir dir;
    CHECK_THROWS_WITH(support::read_file_shared(dir / "none.yaml"),
                      Catch::Contains(dir / "none.yaml"));
}

TEST_CASE("files that are not regular are refused at once, never read", "[support][file]") {
    test::ScopedTempDir dir;
    REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
    // Opening a FIFO without O_NONBLOCK waits for a writer: this would never return.
    CHECK_THROWS_WITH(support::read_file(dir / "fifo"),
                      Catch::Contains(dir / "fifo") &&
                          Catch::Contains("a FIFO, not a regular file"));
    CHECK_THROWS_WITH(support::read_file_shared(dir / "fifo"), Catch::Contains("a FIFO"));
    CHECK_THROWS_WITH(support::sha256_file(dir / "fifo", 100), Catch::Contains("a FIFO"));
    // /dev/zero never ends: it is refused before the first byte, not read until memory runs out.
    CHECK_THROWS_WITH(support::read_file("/dev/zero"),
                      Catch::Contains("'/dev/zero': a character device, not a regular file"));
    CHECK_THROWS_WITH(support::sha256_file("/dev/zero", UINT64_MAX),
                      Catch::Contains("a character device"));
    CHECK_THROWS_WITH(support::read_file(dir.path()), Catch::Contains("a directory"));
}

TEST_CASE("a file is read within its limit; a link only where following is allowed",
          "[support][file]") {
    test::ScopedTempDir dir;
    test::write_text(dir / "f", std::string(1000, 'x'));
    CHECK(support::read_file(dir / "f", {1000}).size() == 1000);
    CHECK_THROWS_WITH(support::read_file(dir / "f", {999}),
                      Catch::Contains(dir / "f") && Catch::Contains("limit of 999 bytes"));
    CHECK(support::sha256_file(dir / "f", 1000).size == 1000);
    CHECK_THROWS_WITH(support::sha256_file(dir / "f", 999), Catch::Contains("limit of 999"));
    REQUIRE(::symlink("f", (dir / "link").c_str()) == 0);
    CHECK(support::read_file(dir / "link").size() == 1000);
    CHECK_THROWS_WITH(support::read_file(dir / "link", {1000, support::Follow::no}),
                      Catch::Contains(dir / "link") && Catch::Contains("symbolic link"));
    support::UniqueFd d(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    CHECK(support::read_file_at(d.get(), "f", "shown/f").size() == 1000);
    CHECK_THROWS_WITH(support::read_file_at(d.get(), "none", "shown/none"),
                      Catch::Contains("shown/none"));
}

TEST_CASE("JSON values are taken only as what they are, within range", "[support][json]") {
    using support::json_get;
    auto j = nlohmann::json::parse(R"({"u": 5, "neg": -1, "big": 1e30, "frac": 1.5,
        "huge": 18446744073709551615, "s": "x", "b": true, "o": {}})");
    CHECK(json_get<std::uint64_t>(j, "u") == 5u);
    CHECK_FALSE(json_get<std::uint64_t>(j, "neg"));
    CHECK_FALSE(json_get<std::uint64_t>(j, "big")); // was a cast with undefined behaviour
    CHECK_FALSE(json_get<std::uint64_t>(j, "frac"));
    CHECK(json_get<std::uint64_t>(j, "huge") == UINT64_MAX);
    CHECK_FALSE(json_get<std::int64_t>(j, "huge"));
    CHECK(json_get<std::int64_t>(j, "neg") == -1);
    CHECK_FALSE(json_get<std::uint64_t>(j, "s"));
    CHECK_FALSE(json_get<std::string>(j, "u"));
    CHECK(json_get<std::string>(j, "s") == "x");
    CHECK(json_get<bool>(j, "b") == true);
    CHECK(json_get<double>(j, "big") == 1e30);
    CHECK_FALSE(json_get<std::string>(j, "missing"));
    CHECK_FALSE(json_get<std::string>(nlohmann::json::array(), "s"));
    CHECK(support::json_member(j, "o", nlohmann::json::value_t::object) != nullptr);
    CHECK(support::json_member(j, "s", nlohmann::json::value_t::object) == nullptr);
    CHECK(support::parse_json("{").is_discarded());
    CHECK(support::parse_json(std::string(100, '[')).is_discarded());
}

TEST_CASE("JSON is written with invalid UTF-8 replaced, never a failure", "[support][json]") {
    nlohmann::json j = {{"name", std::string("a\xff"
                                             "b")}};
    CHECK_THROWS(j.dump()); // what nlohmann does by default
    CHECK(support::dump_json(j) == "{\"name\":\"a\xEF\xBF\xBD"
                                   "b\"}");
}
