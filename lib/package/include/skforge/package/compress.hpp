#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <span>
#include <vector>

namespace skforge::package {

/// Receives the bytes a stage produces, in order.
using ByteSink = std::function<void(std::span<const std::uint8_t>)>;

/// gzip compression on every core: the input is cut into fixed 4 MiB chunks, each deflated as its
/// own gzip member (RFC 1952 allows several; gzip -d and libarchive read them as one stream).
/// Chunk boundaries depend only on the input, so the output is the same whatever the core count,
/// and the gzip headers carry no time stamp or file name.
class ParallelGzip {
  public:
    /// Compresses at `level` (1..9) and hands the output to `sink`.
    ParallelGzip(int level, ByteSink sink, unsigned threads = 0);
    ~ParallelGzip();
    ParallelGzip(const ParallelGzip&) = delete;
    ParallelGzip& operator=(const ParallelGzip&) = delete;

    /// Adds input bytes.
    void write(std::span<const std::uint8_t> data);
    /// Compresses what is buffered and waits for every chunk; call once at the end.
    void finish();

    /// Input bytes per gzip member.
    static constexpr std::size_t k_chunk_size = 4u << 20;

  private:
    void submit();
    void drain_one();

    int m_level;
    ByteSink m_sink;
    std::size_t m_max_in_flight;
    std::vector<std::uint8_t> m_chunk;
    std::deque<std::future<std::vector<std::uint8_t>>> m_in_flight;
};

/// One gzip member holding `data`, with a zeroed time stamp and no name.
std::vector<std::uint8_t> gzip_member(std::span<const std::uint8_t> data, int level);

} // namespace skforge::package
