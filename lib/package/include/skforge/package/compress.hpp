// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/package/stub.hpp"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace skforge::package {

/// Receives the bytes a stage produces, in order.
using ByteSink = std::function<void(std::span<const std::uint8_t>)>;

/// Compressed bytes, in a buffer that is not zeroed before it is written (4 MiB a piece).
struct CompressedPiece {
    std::unique_ptr<std::uint8_t[]> bytes;
    std::size_t size = 0;
};

class PieceEncoder;

/// Compression on every core, by one worker thread per core: the input is cut into fixed 4 MiB
/// chunks, each compressed on its own as one gzip member (RFC 1952 allows several; gzip -d and
/// libarchive read them as one stream) or one zstd frame (RFC 8878: concatenated frames decode as
/// one stream). Chunk boundaries depend only on the input, so the output is the same whatever the
/// core count, and the headers carry no time stamp or file name.
class ParallelCompressor {
  public:
    /// Compresses with `codec` at `level` (gzip 1..9, zstd 1..19) and hands the output to `sink`.
    ParallelCompressor(Compression codec, int level, ByteSink sink, unsigned threads = 0);
    ~ParallelCompressor();
    ParallelCompressor(const ParallelCompressor&) = delete;
    ParallelCompressor& operator=(const ParallelCompressor&) = delete;

    /// Adds input bytes.
    void write(std::span<const std::uint8_t> data);
    /// Compresses what is buffered and waits for every chunk; call once at the end.
    void finish();

    /// Input bytes per gzip member or zstd frame.
    static constexpr std::size_t k_chunk_size = 4u << 20;

  private:
    void submit();
    void drain_one();
    void run_worker(PieceEncoder& encoder);

    ByteSink m_sink;
    std::size_t m_max_in_flight;
    std::vector<std::uint8_t> m_chunk;
    std::deque<std::future<CompressedPiece>> m_in_flight; ///< in input order
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::packaged_task<CompressedPiece(PieceEncoder&)>> m_queue;
    bool m_stopping = false;
    std::vector<std::unique_ptr<PieceEncoder>> m_encoders; ///< one per worker
    std::vector<std::jthread> m_workers;                   ///< last: joined first
};

/// One gzip member holding `data` (libdeflate at `level` 1..9), with a zeroed time stamp and no
/// name.
std::vector<std::uint8_t> gzip_member(std::span<const std::uint8_t> data, int level);

/// One zstd frame holding `data` at `level` 1..19, with its content size and no checksum (the
/// payload's SHA-256 covers it).
std::vector<std::uint8_t> zstd_frame(std::span<const std::uint8_t> data, int level);

/// `data` as one gzip member of deflate stored blocks or one zstd frame of raw blocks: not
/// compressed, so its size, `stored_piece_size(codec, data.size())`, is known before the bytes
/// are and what follows it in a file can be written first. Every decoder reads such pieces (both
/// block types are part of the base formats).
std::vector<std::uint8_t> stored_piece(Compression codec, std::span<const std::uint8_t> data);

/// The size of `stored_piece(codec, data)` for `n` bytes of data.
std::size_t stored_piece_size(Compression codec, std::size_t n);

} // namespace skforge::package
