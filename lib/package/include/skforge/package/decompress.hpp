// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/package/stub.hpp"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace skforge::package {

/// Supplies compressed bytes in order: fills the front of `buf` and returns how many bytes it
/// wrote, 0 once the input has ended. Throws an Error when reading fails.
using ByteSource = std::function<std::size_t(std::span<std::uint8_t> buf)>;

/// Decoded bytes in a buffer of PayloadDecoder::k_block_size bytes, not zeroed before use.
struct DecodedBlock {
    std::unique_ptr<std::uint8_t[]> bytes;
    std::size_t size = 0;
};

class GzipDecoder;
class ZstdDecoder;

/// Decodes a payload (run-format.md): a series of gzip members (RFC 1952) or zstd frames
/// (RFC 8878) into the one stream they hold, on the calling thread. A gzip member that fits in a
/// block (the 4 MiB pieces skc pack writes) is decoded whole by libdeflate, which checks its
/// CRC-32 and size; a larger one (a single-member gzip file, a big first piece) is streamed
/// through zlib, which checks the same, so memory stays at one input window and one block.
/// After the last gzip member, bytes that do not start another member (no 1f 8b) end the stream
/// unread, as gzip -d and libarchive treat them; zstd is strict (what follows the last frame must
/// be a frame). Errors are integrity Errors naming the payload byte where the bad member or
/// frame starts.
class PayloadDecoder {
  public:
    /// Decodes what `source` supplies as `codec`; `label` (the file's path) starts every error.
    PayloadDecoder(Compression codec, ByteSource source, std::string label);
    ~PayloadDecoder();
    PayloadDecoder(const PayloadDecoder&) = delete;
    PayloadDecoder& operator=(const PayloadDecoder&) = delete;

    /// Decodes the next bytes into `block` (whose buffer holds k_block_size bytes) and returns
    /// true, or returns false at the end of the payload. A block may be empty (an empty member).
    bool decode(DecodedBlock& block);

    /// A new block buffer.
    static DecodedBlock make_block();

    /// Bytes a block holds: one piece of skc pack's output.
    static constexpr std::size_t k_block_size = 4u << 20;

  private:
    std::unique_ptr<GzipDecoder> m_gzip;
    std::unique_ptr<ZstdDecoder> m_zstd;
};

/// Whether a PayloadStream decodes on the thread that reads it or on one of its own.
enum class Threading { caller, own_thread };

/// The decoded payload as a sequence of non-empty blocks. With Threading::own_thread a thread
/// decodes up to k_blocks_ahead blocks ahead of the reader (bounded memory), so decompression
/// overlaps with what the reader does with the bytes; the decoder's error reaches the reader at
/// the point of the stream where it happened, never earlier.
class PayloadStream {
  public:
    /// Decodes what `source` supplies as `codec` (errors start with `label`); `source` is called
    /// only from the decoding thread, and no longer once stop() has returned.
    PayloadStream(Compression codec, ByteSource source, std::string label, Threading threading);
    /// Stops and joins the decoding thread.
    ~PayloadStream();
    PayloadStream(const PayloadStream&) = delete;
    PayloadStream& operator=(const PayloadStream&) = delete;

    /// The next decoded bytes, valid until the next call; empty at the end of the payload.
    /// Rethrows the decoder's error when the stream reaches it.
    std::span<const std::uint8_t> next();
    /// Stops decoding (blocks decoded ahead are dropped) and joins the thread: afterwards the
    /// source is the caller's again, to read what was not decoded.
    void stop();

    /// Blocks decoded ahead of the reader at most (each PayloadDecoder::k_block_size bytes).
    static constexpr std::size_t k_blocks_ahead = 3;

  private:
    void run();

    PayloadDecoder m_decoder;
    Threading m_threading;
    DecodedBlock m_current; ///< the block the reader holds
    // Shared with the decoding thread, under m_mutex.
    std::mutex m_mutex;
    std::condition_variable m_ready_cv, m_free_cv;
    std::deque<DecodedBlock> m_ready;
    std::vector<DecodedBlock> m_free;
    std::size_t m_allocated = 0;
    bool m_ended = false;
    bool m_stop = false;
    std::exception_ptr m_error;
    std::thread m_thread; ///< last: started once everything above is constructed
};

} // namespace skforge::package
