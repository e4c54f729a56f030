// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/compress.hpp"
#include "skforge/package/decompress.hpp"
#include "skforge/support/error.hpp"

#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <string>
#include <zlib.h>

using namespace skforge;
using namespace skforge::package;

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes sample(std::size_t size, unsigned seed) {
    std::mt19937 rng(seed);
    Bytes v(size);
    for (std::size_t i = 0; i < size; ++i)
        v[i] = static_cast<std::uint8_t>(i % 97 < 60 ? 'a' + (i % 13) : rng() & 0xff);
    return v;
}

Bytes random_bytes(std::size_t size, unsigned seed) {
    std::mt19937 rng(seed);
    Bytes v(size);
    for (auto& b : v)
        b = static_cast<std::uint8_t>(rng());
    return v;
}

Bytes cat(std::initializer_list<Bytes> parts) {
    Bytes out;
    for (const auto& p : parts)
        out.insert(out.end(), p.begin(), p.end());
    return out;
}

// A source over `in` that hands out at most `chunk` bytes a call, and `first` bytes on the first
// call when it is not 0 (so a read boundary can be put at any position).
ByteSource source_of(const Bytes& in, std::size_t chunk, std::size_t first = 0) {
    auto pos = std::make_shared<std::size_t>(0);
    return [&in, chunk, first, pos](std::span<std::uint8_t> buf) {
        std::size_t limit = *pos == 0 && first != 0 ? first : chunk;
        std::size_t n = std::min({buf.size(), limit, in.size() - *pos});
        if (n != 0)
            std::memcpy(buf.data(), in.data() + *pos, n);
        *pos += n;
        return n;
    };
}

Bytes decode_all(Compression codec, const Bytes& in, std::size_t chunk = SIZE_MAX,
                 std::size_t first = 0) {
    PayloadDecoder d(codec, source_of(in, chunk, first), "test.run");
    Bytes out;
    auto block = PayloadDecoder::make_block();
    while (d.decode(block)) {
        REQUIRE(block.size <= PayloadDecoder::k_block_size);
        out.insert(out.end(), block.bytes.get(), block.bytes.get() + block.size);
    }
    return out;
}

Bytes stream_all(Compression codec, const Bytes& in, Threading threading) {
    PayloadStream s(codec, source_of(in, 1u << 20), "test.run", threading);
    Bytes out;
    for (auto b = s.next(); !b.empty(); b = s.next())
        out.insert(out.end(), b.begin(), b.end());
    return out;
}

// The message of the integrity Error decoding `in` throws, or "accepted".
std::string refusal(Compression codec, const Bytes& in) {
    try {
        decode_all(codec, in);
    } catch (const support::Error& e) {
        CHECK(e.kind() == support::ErrorKind::integrity);
        CHECK_THAT(e.what(), Catch::StartsWith("test.run: "));
        return e.what();
    }
    return "accepted";
}

// One gzip member as the gzip tool writes it: a file name, a comment, an extra field and a
// header CRC (zlib's deflate with a gzip header).
Bytes zlib_gzip(const Bytes& data, int level) {
    z_stream zs{};
    REQUIRE(deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    gz_header h{};
    std::string name = "payload.tar", comment = "made by zlib";
    Bytes extra = {'S', 'K', 2, 0, 'x', 'y'};
    h.name = reinterpret_cast<Bytef*>(name.data());
    h.comment = reinterpret_cast<Bytef*>(comment.data());
    h.extra = extra.data();
    h.extra_len = static_cast<uInt>(extra.size());
    h.hcrc = 1;
    REQUIRE(deflateSetHeader(&zs, &h) == Z_OK);
    Bytes out(deflateBound(&zs, static_cast<uLong>(data.size())) + 64);
    zs.next_in = const_cast<Bytef*>(data.data());
    zs.avail_in = static_cast<uInt>(data.size());
    zs.next_out = out.data();
    zs.avail_out = static_cast<uInt>(out.size());
    REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return out;
}

struct Pieces {
    Bytes stream;
    std::vector<std::size_t> starts; ///< where each piece starts, then the end
    Bytes decoded;
    std::vector<std::size_t> decoded_at; ///< decoded bytes before each start
};

Pieces pieces(Compression codec, const std::vector<Bytes>& contents) {
    Pieces p;
    for (std::size_t i = 0; i < contents.size(); ++i) {
        // Alternately compressed and stored, as skc pack's first piece and the rest.
        Bytes piece = i % 2 == 1                   ? stored_piece(codec, contents[i])
                      : codec == Compression::gzip ? gzip_member(contents[i], 6)
                                                   : zstd_frame(contents[i], 3);
        p.starts.push_back(p.stream.size());
        p.decoded_at.push_back(p.decoded.size());
        p.stream.insert(p.stream.end(), piece.begin(), piece.end());
        p.decoded.insert(p.decoded.end(), contents[i].begin(), contents[i].end());
    }
    p.starts.push_back(p.stream.size());
    p.decoded_at.push_back(p.decoded.size());
    return p;
}

const std::vector<Bytes> k_small = {sample(300, 1), sample(200, 2), {}, sample(150, 3)};

// The index of the piece holding stream byte `pos`.
std::size_t piece_of(const Pieces& p, std::size_t pos) {
    std::size_t i = 0;
    while (p.starts[i + 1] <= pos)
        ++i;
    return i;
}

} // namespace

TEST_CASE("gzip members and zstd frames decode as one stream, whatever the read sizes",
          "[package][decompress]") {
    for (auto codec : {Compression::gzip, Compression::zstd}) {
        INFO(compression_name(codec));
        auto p = pieces(codec, k_small);
        for (std::size_t chunk :
             {std::size_t(1), std::size_t(2), std::size_t(7), std::size_t(100), SIZE_MAX})
            CHECK(decode_all(codec, p.stream, chunk) == p.decoded);
        // A read boundary at every position of the stream.
        for (std::size_t first = 1; first < p.stream.size(); ++first) {
            INFO("first read " << first);
            REQUIRE(decode_all(codec, p.stream, SIZE_MAX, first) == p.decoded);
        }
    }
}

TEST_CASE("an empty payload decodes to nothing", "[package][decompress]") {
    for (auto codec : {Compression::gzip, Compression::zstd}) {
        INFO(compression_name(codec));
        CHECK(decode_all(codec, {}).empty());
        CHECK(stream_all(codec, {}, Threading::caller).empty());
        CHECK(stream_all(codec, {}, Threading::own_thread).empty());
        // Only empty pieces: the decoder yields empty blocks, the stream none.
        Bytes empties = cat({stored_piece(codec, {}),
                             codec == Compression::gzip ? gzip_member({}, 1) : zstd_frame({}, 1)});
        CHECK(decode_all(codec, empties).empty());
        CHECK(stream_all(codec, empties, Threading::own_thread).empty());
    }
}

TEST_CASE("a payload cut at any position inside a member or frame is refused as truncated",
          "[package][decompress]") {
    for (auto codec : {Compression::gzip, Compression::zstd}) {
        INFO(compression_name(codec));
        auto p = pieces(codec, k_small);
        for (std::size_t cut = 0; cut < p.stream.size(); ++cut) {
            INFO("cut at " << cut);
            Bytes in(p.stream.begin(), p.stream.begin() + static_cast<std::ptrdiff_t>(cut));
            std::size_t i = piece_of(p, cut);
            std::size_t into = cut - p.starts[i];
            Bytes prefix(p.decoded.begin(),
                         p.decoded.begin() + static_cast<std::ptrdiff_t>(p.decoded_at[i]));
            if (into == 0) { // a cut between pieces leaves a shorter valid payload
                REQUIRE(decode_all(codec, in) == prefix);
            } else if (codec == Compression::gzip && into == 1 && i > 0) {
                // One byte after a member does not start one (1f 8b): trailing bytes, ignored.
                REQUIRE(decode_all(codec, in) == prefix);
            } else if (codec == Compression::gzip && into == 1) {
                REQUIRE_THAT(refusal(codec, in), Catch::Contains("is not gzip data"));
            } else {
                REQUIRE_THAT(refusal(codec, in),
                             Catch::Contains(" at payload byte " + std::to_string(p.starts[i]) +
                                             " (truncated)"));
            }
        }
    }
}

TEST_CASE("a changed byte in a gzip member is refused, naming the member",
          "[package][decompress]") {
    auto p = pieces(Compression::gzip, k_small);
    for (std::size_t pos = 0; pos < p.stream.size(); ++pos) {
        INFO("byte " << pos);
        Bytes in = p.stream;
        in[pos] ^= 0x01;
        std::size_t i = piece_of(p, pos);
        std::size_t into = pos - p.starts[i];
        std::size_t from_end = p.starts[i + 1] - pos;
        std::string why = refusal(Compression::gzip, in);
        if (into < 2 && i == 0) {
            CHECK_THAT(why, Catch::Contains("is not gzip data"));
        } else if (into < 2) { // no longer a member's magic: the rest is trailing bytes
            CHECK(decode_all(Compression::gzip, in) ==
                  Bytes(p.decoded.begin(),
                        p.decoded.begin() + static_cast<std::ptrdiff_t>(p.decoded_at[i])));
        } else if (into >= 4 && into < 10) { // MTIME, XFL, OS: not checked by any reader
            CHECK(decode_all(Compression::gzip, in) == p.decoded);
        } else if (into == 3 || (into >= 4 && into < 10)) {
            // FTEXT (bit 0 of FLG), MTIME, XFL, OS: hints no reader checks.
            CHECK(decode_all(Compression::gzip, in) == p.decoded);
        } else if (from_end <= 8) { // CRC-32 and ISIZE: always checked (libarchive did not)
            CHECK_THAT(why, Catch::Contains("the gzip member at payload byte " +
                                            std::to_string(p.starts[i]) + " is corrupt"));
        } else { // the method, the deflate data (bit 0 of a byte is never padding)
            CHECK_THAT(why, Catch::Contains(" at payload byte " + std::to_string(p.starts[i])));
        }
    }
}

TEST_CASE("gzip: trailing bytes after the last member are ignored, as gzip -d does; other "
          "payloads are refused",
          "[package][decompress]") {
    auto p = pieces(Compression::gzip, k_small);
    std::string text = "not a member";
    Bytes garbage(text.begin(), text.end());
    CHECK(decode_all(Compression::gzip, cat({p.stream, garbage})) == p.decoded);
    CHECK(decode_all(Compression::gzip, cat({p.stream, Bytes(10240, 0)})) == p.decoded);
    CHECK_THAT(refusal(Compression::gzip, cat({garbage, p.stream})),
               Catch::Contains("is not gzip data"));
    // What starts like a member must be one.
    Bytes fake = cat({Bytes{0x1f, 0x8b}, garbage});
    CHECK_THAT(refusal(Compression::gzip, cat({p.stream, fake})),
               Catch::Contains("the gzip member at payload byte " +
                               std::to_string(p.stream.size()) + " is corrupt"));
}

TEST_CASE("gzip: a member larger than a block, or with a name, comment and extra field, is "
          "streamed",
          "[package][decompress]") {
    Bytes big = sample(PayloadDecoder::k_block_size * 2 + 12345, 7);
    Bytes noise = random_bytes(PayloadDecoder::k_block_size + (200u << 10), 8);
    Bytes small = sample(5000, 9);
    Bytes in =
        cat({zlib_gzip(small, 6), zlib_gzip(big, 1), gzip_member(noise, 1), gzip_member(small, 1)});
    Bytes want = cat({small, big, noise, small});
    CHECK(decode_all(Compression::gzip, in) == want);
    CHECK(decode_all(Compression::gzip, in, 4099) == want);
    CHECK(stream_all(Compression::gzip, in, Threading::own_thread) == want);
    // The streamed path checks as much as the whole-member one.
    Bytes one = zlib_gzip(big, 1);
    Bytes bad = one;
    bad[bad.size() - 6] ^= 0x20; // CRC-32
    CHECK_THAT(refusal(Compression::gzip, bad),
               Catch::Contains("the gzip member at payload byte 0 is corrupt (incorrect data "
                               "check)"));
    Bytes cut(one.begin(), one.begin() + static_cast<std::ptrdiff_t>(one.size() / 2));
    CHECK_THAT(refusal(Compression::gzip, cut),
               Catch::Contains("ends inside the gzip member at payload byte 0 (truncated)"));
    Bytes after = cat({gzip_member(small, 1), one});
    after.resize(after.size() - 1);
    CHECK_THAT(refusal(Compression::gzip, after),
               Catch::Contains("gzip member at payload byte " +
                               std::to_string(gzip_member(small, 1).size()) + " (truncated)"));
}

TEST_CASE("zstd: a corrupt frame or trailing bytes are refused, naming the frame",
          "[package][decompress]") {
    auto p = pieces(Compression::zstd, k_small);
    auto at = [&](std::size_t i) { return "payload byte " + std::to_string(p.starts[i]); };
    Bytes bad_magic = p.stream;
    bad_magic[p.starts[2]] ^= 0x01;
    CHECK_THAT(refusal(Compression::zstd, bad_magic),
               Catch::Contains("the zstd frame at " + at(2) + " is corrupt"));
    // The stored frame's first block header (after magic, descriptor, 8-byte size): block
    // type 3 is reserved.
    Bytes reserved = p.stream;
    reserved[p.starts[1] + 13] |= 0x06;
    CHECK_THAT(refusal(Compression::zstd, reserved),
               Catch::Contains("the zstd frame at " + at(1) + " is corrupt"));
    std::string text = "not a frame";
    Bytes garbage(text.begin(), text.end());
    CHECK_THAT(refusal(Compression::zstd, cat({p.stream, garbage})),
               Catch::Contains("the zstd frame at payload byte " + std::to_string(p.stream.size()) +
                               " is corrupt"));
    CHECK_THAT(refusal(Compression::zstd, garbage),
               Catch::Contains("the zstd frame at payload byte 0 is corrupt"));
}

TEST_CASE("a payload stream gives the decoder's blocks in order, then its error, on its own "
          "thread or the caller's",
          "[package][decompress]") {
    for (auto codec : {Compression::gzip, Compression::zstd}) {
        for (auto threading : {Threading::caller, Threading::own_thread}) {
            INFO(compression_name(codec) << (threading == Threading::caller ? " caller" : ""));
            std::vector<Bytes> blocks;
            for (unsigned i = 0; i < 6; ++i)
                blocks.push_back(sample(PayloadDecoder::k_block_size - i, 20 + i));
            auto p = pieces(codec, blocks);
            CHECK(stream_all(codec, p.stream, threading) == p.decoded);
            Bytes bad = p.stream;
            bad[p.starts[4] + 1] ^= 0x01; // the fifth piece's magic
            PayloadStream s(codec, source_of(bad, 1u << 20), "test.run", threading);
            Bytes got;
            std::string error;
            try {
                for (auto b = s.next(); !b.empty(); b = s.next())
                    got.insert(got.end(), b.begin(), b.end());
            } catch (const support::Error& e) {
                error = e.what();
            }
            CHECK(got == Bytes(p.decoded.begin(),
                               p.decoded.begin() + static_cast<std::ptrdiff_t>(p.decoded_at[4])));
            if (codec == Compression::gzip) // a broken magic after a member: trailing bytes
                CHECK(error.empty());
            else
                CHECK_THAT(error, Catch::Contains("frame at payload byte " +
                                                  std::to_string(p.starts[4]) + " is corrupt"));
            // Once failed, it stays failed.
            if (!error.empty())
                CHECK_THROWS_WITH(s.next(), Catch::Contains("is corrupt"));
        }
    }
}

TEST_CASE("a payload stream abandoned early stops its thread; after stop() the source is the "
          "caller's",
          "[package][decompress]") {
    std::vector<Bytes> blocks; // incompressible: each member takes a block's size of input
    for (unsigned i = 0; i < 12; ++i)
        blocks.push_back(random_bytes(PayloadDecoder::k_block_size, 40 + i));
    auto p = pieces(Compression::gzip, blocks);
    {
        // Never read: the thread fills its blocks and waits; the destructor must end it.
        PayloadStream s(Compression::gzip, source_of(p.stream, 1u << 20), "test.run",
                        Threading::own_thread);
    }
    std::size_t read = 0;
    auto pos = std::make_shared<std::size_t>(0);
    ByteSource counted = [&, pos](std::span<std::uint8_t> buf) {
        std::size_t n = std::min(buf.size(), p.stream.size() - *pos);
        if (n != 0)
            std::memcpy(buf.data(), p.stream.data() + *pos, n);
        *pos += n;
        read += n;
        return n;
    };
    PayloadStream s(Compression::gzip, counted, "test.run", Threading::own_thread);
    auto first = s.next();
    CHECK(Bytes(first.begin(), first.end()) == blocks[0]);
    s.stop();
    // At most the blocks ahead, the one being decoded and one input window were read.
    std::size_t bound =
        (PayloadStream::k_blocks_ahead + 2) * (PayloadDecoder::k_block_size + 4096) +
        PayloadDecoder::k_block_size + (64u << 10);
    CHECK(read <= bound);
    CHECK(read < p.stream.size());
    std::size_t before = read;
    CHECK(s.next().empty()); // stopped: nothing more, and the source is not read again
    CHECK(read == before);
}
