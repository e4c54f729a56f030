// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/compress.hpp"

#include "skforge/support/error.hpp"

#include <algorithm>
#include <libdeflate.h>
#include <memory>
#include <thread>
#include <zstd.h>

namespace skforge::package {

// One worker's compressor, kept from piece to piece: libzstd's context and libdeflate's
// compressor allocate megabytes of tables, which a fresh one per 4 MiB piece would allocate and
// fault in again every time. Reusing them does not change the output.
class PieceEncoder {
  public:
    PieceEncoder(Compression codec, int level) : m_level(level) {
        if (codec == Compression::gzip) {
            // libdeflate rather than zlib: a whole buffer in memory is its case, and it deflates
            // such buffers about three times as fast as zlib at the same level, slightly smaller
            // (share/doc/benchmarks.md).
            m_deflate.reset(libdeflate_alloc_compressor(level));
            if (!m_deflate)
                throw support::Error("libdeflate: cannot start gzip compression at level " +
                                     std::to_string(level));
        } else {
            m_zstd.reset(ZSTD_createCCtx());
            if (!m_zstd)
                throw support::Error("zstd: cannot start compression");
        }
    }

    CompressedPiece encode(std::span<const std::uint8_t> data) {
        if (m_deflate) {
            std::size_t bound = libdeflate_gzip_compress_bound(m_deflate.get(), data.size());
            CompressedPiece out{std::make_unique_for_overwrite<std::uint8_t[]>(bound)};
            // libdeflate's gzip header has mtime 0 and no name, so the member is reproducible.
            out.size = libdeflate_gzip_compress(m_deflate.get(), data.data(), data.size(),
                                                out.bytes.get(), bound);
            if (out.size == 0)
                throw support::Error("libdeflate: gzip compression failed");
            return out;
        }
        std::size_t bound = ZSTD_compressBound(data.size());
        CompressedPiece out{std::make_unique_for_overwrite<std::uint8_t[]>(bound)};
        out.size = ZSTD_compressCCtx(m_zstd.get(), out.bytes.get(), bound, data.data(), data.size(),
                                     m_level);
        if (ZSTD_isError(out.size))
            throw support::Error(std::string("zstd: compression failed: ") +
                                 ZSTD_getErrorName(out.size));
        return out;
    }

  private:
    struct Free {
        void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
        void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
    };
    int m_level;
    std::unique_ptr<libdeflate_compressor, Free> m_deflate;
    std::unique_ptr<ZSTD_CCtx, Free> m_zstd;
};

namespace {

std::vector<std::uint8_t> to_vector(const CompressedPiece& p) {
    return {p.bytes.get(), p.bytes.get() + p.size};
}

} // namespace

std::vector<std::uint8_t> gzip_member(std::span<const std::uint8_t> data, int level) {
    return to_vector(PieceEncoder(Compression::gzip, level).encode(data));
}

std::vector<std::uint8_t> zstd_frame(std::span<const std::uint8_t> data, int level) {
    return to_vector(PieceEncoder(Compression::zstd, level).encode(data));
}

namespace {

// Largest block of each format: a deflate stored block's LEN is 16 bits (RFC 1951 3.2.4); a zstd
// block is at most 128 KiB, and at most the window, which a single-segment frame sets to its
// content size (RFC 8878 3.1.1.2).
constexpr std::size_t k_deflate_stored_max = 65535;
constexpr std::size_t k_zstd_block_max = 128u << 10;

std::size_t block_count(std::size_t n, std::size_t max) {
    return n == 0 ? 1 : (n + max - 1) / max;
}

void put_le(std::vector<std::uint8_t>& out, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i)
        out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// RFC 1952 member: ID1 ID2, CM=8 (deflate), no flags, MTIME 0, XFL 0, OS 255 (unknown, as
// libdeflate writes); stored blocks; CRC-32 and ISIZE.
std::vector<std::uint8_t> gzip_stored(std::span<const std::uint8_t> data) {
    std::vector<std::uint8_t> out{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
    out.reserve(stored_piece_size(Compression::gzip, data.size()));
    std::size_t off = 0;
    do {
        std::size_t n = std::min(data.size() - off, k_deflate_stored_max);
        bool last = off + n == data.size();
        out.push_back(last ? 1 : 0); // BFINAL, BTYPE 00, then aligned to the byte
        put_le(out, n, 2);
        put_le(out, ~n & 0xffff, 2);
        out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(off),
                   data.begin() + static_cast<std::ptrdiff_t>(off + n));
        off += n;
    } while (off < data.size());
    put_le(out, libdeflate_crc32(0, data.data(), data.size()), 4);
    put_le(out, data.size() & 0xffffffffu, 4);
    return out;
}

// RFC 8878 frame: magic, descriptor 0xE0 (8-byte content size, single segment, no checksum, no
// dictionary), the content size, raw blocks.
std::vector<std::uint8_t> zstd_stored(std::span<const std::uint8_t> data) {
    std::vector<std::uint8_t> out;
    out.reserve(stored_piece_size(Compression::zstd, data.size()));
    put_le(out, 0xFD2FB528u, 4);
    out.push_back(0xE0);
    put_le(out, data.size(), 8);
    std::size_t off = 0;
    do {
        std::size_t n = std::min(data.size() - off, k_zstd_block_max);
        bool last = off + n == data.size();
        put_le(out, (std::uint64_t(n) << 3) | (last ? 1 : 0), 3); // Block_Type 0: raw
        out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(off),
                   data.begin() + static_cast<std::ptrdiff_t>(off + n));
        off += n;
    } while (off < data.size());
    return out;
}

} // namespace

std::size_t stored_piece_size(Compression codec, std::size_t n) {
    if (codec == Compression::gzip)
        return 10 + 5 * block_count(n, k_deflate_stored_max) + n + 8;
    return 4 + 1 + 8 + 3 * block_count(n, k_zstd_block_max) + n;
}

std::vector<std::uint8_t> stored_piece(Compression codec, std::span<const std::uint8_t> data) {
    auto out = codec == Compression::gzip ? gzip_stored(data) : zstd_stored(data);
    if (out.size() != stored_piece_size(codec, data.size()))
        throw support::Error("internal error: a stored piece has an unexpected size");
    return out;
}

ParallelCompressor::ParallelCompressor(Compression codec, int level, ByteSink sink,
                                       unsigned threads)
    : m_sink(std::move(sink)) {
    if (threads == 0)
        threads = std::max(1u, std::thread::hardware_concurrency());
    m_max_in_flight = 2 * threads;
    m_chunk.reserve(k_chunk_size);
    for (unsigned i = 0; i < threads; ++i)
        m_encoders.push_back(std::make_unique<PieceEncoder>(codec, level));
    for (auto& e : m_encoders)
        m_workers.emplace_back([this, &e] { run_worker(*e); });
}

ParallelCompressor::~ParallelCompressor() {
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    m_workers.clear(); // each finishes the queue first
}

void ParallelCompressor::run_worker(PieceEncoder& encoder) {
    for (;;) {
        std::packaged_task<CompressedPiece(PieceEncoder&)> task;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
            if (m_queue.empty())
                return;
            task = std::move(m_queue.front());
            m_queue.pop_front();
        }
        task(encoder);
    }
}

void ParallelCompressor::write(std::span<const std::uint8_t> data) {
    while (!data.empty()) {
        std::size_t take = std::min(data.size(), k_chunk_size - m_chunk.size());
        m_chunk.insert(m_chunk.end(), data.begin(),
                       data.begin() + static_cast<std::ptrdiff_t>(take));
        data = data.subspan(take);
        if (m_chunk.size() == k_chunk_size)
            submit();
    }
}

void ParallelCompressor::submit() {
    if (m_in_flight.size() >= m_max_in_flight)
        drain_one();
    std::packaged_task<CompressedPiece(PieceEncoder&)> task(
        [chunk = std::move(m_chunk)](PieceEncoder& e) { return e.encode(chunk); });
    m_in_flight.push_back(task.get_future());
    {
        std::lock_guard lock(m_mutex);
        m_queue.push_back(std::move(task));
    }
    m_wake.notify_one();
    m_chunk = {};
    m_chunk.reserve(k_chunk_size);
}

void ParallelCompressor::drain_one() {
    auto piece = m_in_flight.front().get();
    m_in_flight.pop_front();
    m_sink({piece.bytes.get(), piece.size});
}

void ParallelCompressor::finish() {
    if (!m_chunk.empty())
        submit();
    while (!m_in_flight.empty())
        drain_one();
}

} // namespace skforge::package
