// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/signature.hpp"
#include "skforge/support/error.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <sys/stat.h>

using namespace skforge;
using namespace skforge::package;

TEST_CASE("keygen writes a private key 0600 and a public key", "[package][signature]") {
    test::ScopedTempDir dir;
    auto key = Key::generate(dir / "k");
    struct stat st {};
    REQUIRE(::stat((dir / "k.pem").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    auto priv = Key::load_private(dir / "k.pem");
    auto pub = Key::load_public(dir / "k.pub.pem");
    CHECK(priv.key_id() == key.key_id());
    CHECK(pub.key_id() == key.key_id());
    CHECK(key.key_id().size() == 64);
}

TEST_CASE("signatures verify only for the signing key and message", "[package][signature]") {
    test::ScopedTempDir dir;
    auto a = Key::generate(dir / "a");
    auto b = Key::generate(dir / "b");
    support::Digest d{};
    d[0] = 1;
    auto msg = signed_message(d);
    auto sig = a.sign(msg);
    CHECK(Key::load_public(dir / "a.pub.pem").verify(msg, sig));
    CHECK_FALSE(Key::load_public(dir / "b.pub.pem").verify(msg, sig));
    d[0] = 2;
    CHECK_FALSE(a.verify(signed_message(d), sig));
    (void)b;
}

TEST_CASE("trailer round-trips and rejects damage", "[package][signature]") {
    Trailer t{std::string(64, 'c'), {}};
    t.signature[5] = 0xab;
    auto text = render_trailer(t);
    CHECK(text.size() == trailer_size());
    CHECK(trailer_size() == 242); // share/doc/run-format.md states this size
    auto back = parse_trailer(text, "x.run");
    CHECK(back.key_id == t.key_id);
    CHECK(back.signature == t.signature);
    auto bad = text;
    bad[3] = 'X';
    CHECK_THROWS_WITH(parse_trailer(bad, "x.run"), Catch::Contains("malformed signature trailer"));
    CHECK_THROWS(parse_trailer(text.substr(1), "x.run"));
}

TEST_CASE("non-Ed25519 and unreadable keys are refused with their path", "[package][signature]") {
    test::ScopedTempDir dir;
    test::write_text(dir / "junk.pem", "not a key");
    CHECK_THROWS_WITH(Key::load_private(dir / "junk.pem"), Catch::Contains("junk.pem"));
    CHECK_THROWS_WITH(Key::load_public(dir / "missing.pem"), Catch::Contains("missing.pem"));
}
