#include "skforge/package/compress.hpp"

#include "skforge/support/error.hpp"

#include <algorithm>
#include <thread>
#include <zlib.h>

namespace skforge::package {

std::vector<std::uint8_t> gzip_member(std::span<const std::uint8_t> data, int level) {
    z_stream zs{};
    // windowBits 15 + 16 asks zlib for a gzip wrapper; with no deflateSetHeader its header has
    // mtime 0, no name and the OS byte of the build, so it is reproducible.
    if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw support::Error("zlib: cannot start gzip compression");
    std::vector<std::uint8_t> out(deflateBound(&zs, static_cast<uLong>(data.size())) + 32);
    zs.next_in = const_cast<Bytef*>(data.data());
    zs.avail_in = static_cast<uInt>(data.size());
    zs.next_out = out.data();
    zs.avail_out = static_cast<uInt>(out.size());
    int rc = deflate(&zs, Z_FINISH);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    if (rc != Z_STREAM_END)
        throw support::Error("zlib: gzip compression failed");
    return out;
}

ParallelGzip::ParallelGzip(int level, ByteSink sink, unsigned threads)
    : m_level(level), m_sink(std::move(sink)) {
    if (threads == 0)
        threads = std::max(1u, std::thread::hardware_concurrency());
    m_max_in_flight = 2 * threads;
    m_chunk.reserve(k_chunk_size);
}

ParallelGzip::~ParallelGzip() {
    for (auto& f : m_in_flight)
        if (f.valid())
            f.wait();
}

void ParallelGzip::write(std::span<const std::uint8_t> data) {
    while (!data.empty()) {
        std::size_t take = std::min(data.size(), k_chunk_size - m_chunk.size());
        m_chunk.insert(m_chunk.end(), data.begin(),
                       data.begin() + static_cast<std::ptrdiff_t>(take));
        data = data.subspan(take);
        if (m_chunk.size() == k_chunk_size)
            submit();
    }
}

void ParallelGzip::submit() {
    if (m_in_flight.size() >= m_max_in_flight)
        drain_one();
    m_in_flight.push_back(
        std::async(std::launch::async, [chunk = std::move(m_chunk), level = m_level] {
            return gzip_member(chunk, level);
        }));
    m_chunk = {};
    m_chunk.reserve(k_chunk_size);
}

void ParallelGzip::drain_one() {
    auto bytes = m_in_flight.front().get();
    m_in_flight.pop_front();
    m_sink(bytes);
}

void ParallelGzip::finish() {
    if (!m_chunk.empty())
        submit();
    while (!m_in_flight.empty())
        drain_one();
}

} // namespace skforge::package
