// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/compress.hpp"

#include <catch2/catch.hpp>
#include <memory>
#include <random>
#include <zlib.h>
#include <zstd.h>

using namespace skforge::package;

namespace {

std::vector<std::uint8_t> compress(const std::vector<std::uint8_t>& input, unsigned threads,
                                   std::size_t piece, Compression codec = Compression::gzip) {
    std::vector<std::uint8_t> out;
    ParallelCompressor gz(
        codec, codec == Compression::gzip ? 6 : 3,
        [&](std::span<const std::uint8_t> b) { out.insert(out.end(), b.begin(), b.end()); },
        threads);
    for (std::size_t off = 0; off < input.size(); off += piece)
        gz.write(std::span(input).subspan(off, std::min(piece, input.size() - off)));
    gz.finish();
    return out;
}

// Decompresses every member of a multi-member gzip stream, as gzip -d does.
std::vector<std::uint8_t> gunzip_all(const std::vector<std::uint8_t>& in) {
    std::vector<std::uint8_t> out;
    std::size_t pos = 0;
    while (pos < in.size()) {
        z_stream zs{};
        REQUIRE(inflateInit2(&zs, 15 + 16) == Z_OK);
        zs.next_in = const_cast<Bytef*>(in.data() + pos);
        zs.avail_in = static_cast<uInt>(in.size() - pos);
        std::vector<std::uint8_t> buf(1 << 16);
        int rc;
        do {
            zs.next_out = buf.data();
            zs.avail_out = static_cast<uInt>(buf.size());
            rc = inflate(&zs, Z_NO_FLUSH);
            REQUIRE((rc == Z_OK || rc == Z_STREAM_END));
            out.insert(out.end(), buf.data(), buf.data() + (buf.size() - zs.avail_out));
        } while (rc != Z_STREAM_END);
        pos += zs.total_in;
        inflateEnd(&zs);
    }
    return out;
}

// Decompresses a stream of concatenated zstd frames, as zstd -d does.
std::vector<std::uint8_t> unzstd_all(const std::vector<std::uint8_t>& in) {
    std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> d(ZSTD_createDCtx(), ZSTD_freeDCtx);
    std::vector<std::uint8_t> out, buf(1 << 16);
    ZSTD_inBuffer ib{in.data(), in.size(), 0};
    while (ib.pos < ib.size) {
        ZSTD_outBuffer ob{buf.data(), buf.size(), 0};
        std::size_t rc = ZSTD_decompressStream(d.get(), &ob, &ib);
        REQUIRE(!ZSTD_isError(rc));
        out.insert(out.end(), buf.data(), buf.data() + ob.pos);
    }
    return out;
}

std::size_t zstd_frames(const std::vector<std::uint8_t>& in) {
    std::size_t n = 0;
    for (std::size_t pos = 0; pos < in.size(); ++n) {
        std::size_t size = ZSTD_findFrameCompressedSize(in.data() + pos, in.size() - pos);
        REQUIRE(!ZSTD_isError(size));
        pos += size;
    }
    return n;
}

std::vector<std::uint8_t> sample_input(std::size_t size) {
    std::mt19937 rng(42);
    std::vector<std::uint8_t> v(size);
    for (std::size_t i = 0; i < size; ++i)
        v[i] = static_cast<std::uint8_t>(i % 251 < 200 ? 'a' + (i % 7) : rng() & 0xff);
    return v;
}

} // namespace

TEST_CASE("parallel gzip output does not depend on threads or write sizes", "[package][compress]") {
    auto input = sample_input(ParallelCompressor::k_chunk_size * 2 + 12345);
    auto one = compress(input, 1, 1 << 20);
    CHECK(compress(input, 4, 777) == one);
    CHECK(compress(input, 2, input.size()) == one);
}

TEST_CASE("parallel gzip output decompresses to the input", "[package][compress]") {
    for (std::size_t size : {std::size_t(0), std::size_t(1), ParallelCompressor::k_chunk_size,
                             ParallelCompressor::k_chunk_size * 3 + 1}) {
        auto input = sample_input(size);
        auto packed = compress(input, 2, 65536);
        CHECK(gunzip_all(packed) == input);
    }
}

TEST_CASE("gzip members carry no time stamp or name", "[package][compress]") {
    auto m = gzip_member(sample_input(100), 6);
    REQUIRE(m.size() > 10);
    CHECK(m[0] == 0x1f);
    CHECK(m[1] == 0x8b);
    CHECK((m[3] & 0x08) == 0); // FNAME
    CHECK(m[4] == 0);
    CHECK(m[5] == 0);
    CHECK(m[6] == 0);
    CHECK(m[7] == 0);
}

TEST_CASE("parallel zstd: one frame per 4 MiB, the same bytes whatever the threads, decodes back",
          "[package][compress]") {
    auto input = sample_input(ParallelCompressor::k_chunk_size * 2 + 999);
    auto one = compress(input, 1, 1 << 20, Compression::zstd);
    CHECK(compress(input, 4, 4099, Compression::zstd) == one);
    CHECK(zstd_frames(one) == 3);
    CHECK(unzstd_all(one) == input);
    CHECK(unzstd_all(compress({}, 2, 1, Compression::zstd)).empty());
}

TEST_CASE("compression levels out of the codec's range are refused with the level named",
          "[package][compress]") {
    CHECK_THROWS_WITH(gzip_member(sample_input(10), 13), Catch::Contains("level 13"));
}

TEST_CASE("a stored piece has the size stored_piece_size says, decodes back, and a compressed "
          "stream may follow it",
          "[package][compress]") {
    // Sizes around both formats' block limits: 65535 (deflate stored) and 128 KiB (zstd raw).
    for (std::size_t size :
         {std::size_t(0), std::size_t(1), std::size_t(65535), std::size_t(65536),
          std::size_t(131072), std::size_t(131073), std::size_t(3 * 65535 + 7)}) {
        auto input = sample_input(size);
        auto tail = sample_input(5000);
        for (auto codec : {Compression::gzip, Compression::zstd}) {
            INFO(compression_name(codec) << ", " << size << " bytes");
            auto piece = stored_piece(codec, input);
            CHECK(piece.size() == stored_piece_size(codec, size));
            auto stream = piece;
            auto rest = compress(tail, 2, 4096, codec);
            stream.insert(stream.end(), rest.begin(), rest.end());
            auto want = input;
            want.insert(want.end(), tail.begin(), tail.end());
            CHECK((codec == Compression::gzip ? gunzip_all(stream) : unzstd_all(stream)) == want);
        }
    }
    // What a stored piece costs over the data: a few bytes per 64 or 128 KiB.
    CHECK(stored_piece_size(Compression::gzip, 100000) == 100000 + 10 + 2 * 5 + 8);
    CHECK(stored_piece_size(Compression::zstd, 100000) == 100000 + 13 + 3);
}
