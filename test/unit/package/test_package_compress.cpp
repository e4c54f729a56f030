#include "skforge/package/compress.hpp"

#include <catch2/catch.hpp>
#include <random>
#include <zlib.h>

using namespace skforge::package;

namespace {

std::vector<std::uint8_t> compress(const std::vector<std::uint8_t>& input, unsigned threads,
                                   std::size_t piece) {
    std::vector<std::uint8_t> out;
    ParallelGzip gz(
        6, [&](std::span<const std::uint8_t> b) { out.insert(out.end(), b.begin(), b.end()); },
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

std::vector<std::uint8_t> sample_input(std::size_t size) {
    std::mt19937 rng(42);
    std::vector<std::uint8_t> v(size);
    for (std::size_t i = 0; i < size; ++i)
        v[i] = static_cast<std::uint8_t>(i % 251 < 200 ? 'a' + (i % 7) : rng() & 0xff);
    return v;
}

} // namespace

TEST_CASE("parallel gzip output does not depend on threads or write sizes", "[package][compress]") {
    auto input = sample_input(ParallelGzip::k_chunk_size * 2 + 12345);
    auto one = compress(input, 1, 1 << 20);
    CHECK(compress(input, 4, 777) == one);
    CHECK(compress(input, 2, input.size()) == one);
}

TEST_CASE("parallel gzip output decompresses to the input", "[package][compress]") {
    for (std::size_t size : {std::size_t(0), std::size_t(1), ParallelGzip::k_chunk_size,
                             ParallelGzip::k_chunk_size * 3 + 1}) {
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
