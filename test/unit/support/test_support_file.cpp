// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

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
