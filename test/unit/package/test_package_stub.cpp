// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/stub.hpp"
#include "skforge/support/error.hpp"

#include <catch2/catch.hpp>

using namespace skforge::package;

namespace {
StubHeader sample() {
    StubHeader h;
    h.name = "pkg";
    h.version = "1.0";
    h.npu_arch = "dav-2201";
    h.soc_version = "Ascend910B1";
    h.toolchain = "skforge 0.1.0";
    h.compression = Compression::zstd;
    h.file_count = 7;
    h.unpacked_size = 123456;
    h.payload_size = 999;
    h.payload_sha256 = std::string(64, 'b');
    h.trailer_size = 0;
    return h;
}
} // namespace

TEST_CASE("stub header round-trips", "[package][stub]") {
    auto h = sample();
    auto stub = render_stub(h);
    auto back = parse_stub(stub, "x.run");
    CHECK(back.name == "pkg");
    CHECK(back.version == "1.0");
    CHECK(back.npu_arch == "dav-2201");
    CHECK(back.soc_version == "Ascend910B1");
    CHECK(back.compression == Compression::zstd);
    CHECK(back.file_count == 7);
    CHECK(back.unpacked_size == 123456);
    CHECK(back.payload_offset == stub.size());
    CHECK(back.payload_size == 999);
    CHECK(back.payload_sha256 == h.payload_sha256);
    CHECK(render_stub(back) == stub);
}

TEST_CASE("stub size depends only on the labels", "[package][stub]") {
    auto a = sample();
    auto b = sample();
    b.payload_size = 12345678901234ull;
    b.file_count = 1;
    CHECK(stub_size(a) == stub_size(b));
    CHECK(render_stub(a).size() == stub_size(a));
    b.name = "a_longer_name";
    CHECK(stub_size(b) == stub_size(a) + 10);
}

TEST_CASE("stub parsing refuses what is not a skforge package", "[package][stub]") {
    CHECK_THROWS_WITH(parse_stub("\x7f"
                                 "ELF",
                                 "x.run"),
                      Catch::Contains("does not start with"));
    CHECK_THROWS_WITH(parse_stub("#!/bin/sh\necho hi\n", "x.run"),
                      Catch::Contains("no skforge header"));
    auto stub = render_stub(sample());
    auto evil = stub;
    evil.replace(evil.find("SKF_NAME='pkg'"), 14, "SKF_NAME='../x'");
    CHECK_THROWS_WITH(parse_stub(evil, "x.run"), Catch::Contains("package name '../x'"));
    auto future = stub;
    future.replace(future.find("SKF_FORMAT=2"), 12, "SKF_FORMAT=9");
    CHECK_THROWS_WITH(parse_stub(future, "x.run"), Catch::Contains("format 9 is not supported"));
    auto old = stub;
    old.replace(old.find("SKF_FORMAT=2"), 12, "SKF_FORMAT=1");
    CHECK_THROWS_WITH(parse_stub(old, "x.run"), Catch::Contains("rebuild the package"));
    auto bad_digest = stub;
    bad_digest.replace(bad_digest.find("SKF_INSTALL_SH_SHA256=") + 22, 1, "X");
    CHECK_THROWS_WITH(parse_stub(bad_digest, "x.run"), Catch::Contains("not 64 lower-case hex"));
    auto dup = stub;
    dup.insert(dup.find("# end of header\n"), "SKF_NAME='pkg'\n");
    CHECK_THROWS_WITH(parse_stub(dup, "x.run"), Catch::Contains("appears twice"));
}
