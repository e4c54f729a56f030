#include "skforge/package/compress.hpp"

#include "skforge/support/error.hpp"

#include <algorithm>
#include <libdeflate.h>
#include <memory>
#include <thread>
#include <zstd.h>

namespace skforge::package {

// libdeflate rather than zlib: a whole buffer in memory is its case, and it deflates such buffers
// about three times as fast as zlib at the same level, slightly smaller (share/doc/benchmarks.md).
std::vector<std::uint8_t> gzip_member(std::span<const std::uint8_t> data, int level) {
    struct Free {
        void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
    };
    std::unique_ptr<libdeflate_compressor, Free> c(libdeflate_alloc_compressor(level));
    if (!c)
        throw support::Error("libdeflate: cannot start gzip compression at level " +
                             std::to_string(level));
    std::vector<std::uint8_t> out(libdeflate_gzip_compress_bound(c.get(), data.size()));
    // libdeflate's gzip header has mtime 0 and no name, so the member is reproducible.
    std::size_t n =
        libdeflate_gzip_compress(c.get(), data.data(), data.size(), out.data(), out.size());
    if (n == 0)
        throw support::Error("libdeflate: gzip compression failed");
    out.resize(n);
    return out;
}

std::vector<std::uint8_t> zstd_frame(std::span<const std::uint8_t> data, int level) {
    std::vector<std::uint8_t> out(ZSTD_compressBound(data.size()));
    std::size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), level);
    if (ZSTD_isError(n))
        throw support::Error(std::string("zstd: compression failed: ") + ZSTD_getErrorName(n));
    out.resize(n);
    return out;
}

ParallelCompressor::ParallelCompressor(Compression codec, int level, ByteSink sink,
                                       unsigned threads)
    : m_codec(codec), m_level(level), m_sink(std::move(sink)) {
    if (threads == 0)
        threads = std::max(1u, std::thread::hardware_concurrency());
    m_max_in_flight = 2 * threads;
    m_chunk.reserve(k_chunk_size);
}

ParallelCompressor::~ParallelCompressor() {
    for (auto& f : m_in_flight)
        if (f.valid())
            f.wait();
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
    m_in_flight.push_back(std::async(std::launch::async, [chunk = std::move(m_chunk),
                                                          level = m_level, codec = m_codec] {
        return codec == Compression::gzip ? gzip_member(chunk, level) : zstd_frame(chunk, level);
    }));
    m_chunk = {};
    m_chunk.reserve(k_chunk_size);
}

void ParallelCompressor::drain_one() {
    auto bytes = m_in_flight.front().get();
    m_in_flight.pop_front();
    m_sink(bytes);
}

void ParallelCompressor::finish() {
    if (!m_chunk.empty())
        submit();
    while (!m_in_flight.empty())
        drain_one();
}

} // namespace skforge::package
