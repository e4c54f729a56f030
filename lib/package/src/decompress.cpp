// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/decompress.hpp"

#include "skforge/support/error.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <libdeflate.h>
#include <string>
#include <zlib.h>
#include <zstd.h>

namespace skforge::package {

using support::Error;
using support::ErrorKind;

namespace {

Error bad_payload(const std::string& label, const std::string& what) {
    return Error(label + ": " + what, ErrorKind::integrity);
}

// Compressed bytes read ahead of the decoder, from the first byte not yet decoded.
class InputWindow {
  public:
    /// Keeps up to `window` bytes; the buffer is twice that, so moving the unread bytes to its
    /// front is needed only every other fill.
    InputWindow(ByteSource source, std::size_t window)
        : m_source(std::move(source)),
          m_buf(std::make_unique_for_overwrite<std::uint8_t[]>(2 * window)), m_size(2 * window),
          m_window(window) {}

    const std::uint8_t* data() const { return m_buf.get() + m_pos; }
    std::size_t size() const { return m_end - m_pos; }
    bool source_ended() const { return m_source_ended; }
    /// The payload offset of data()[0].
    std::uint64_t offset() const { return m_offset; }

    void consume(std::size_t n) {
        m_pos += n;
        m_offset += n;
    }
    /// Reads until the window is full or the input has ended.
    void fill() {
        if (size() >= m_window || m_source_ended)
            return;
        if (m_pos + m_window > m_size) {
            std::memmove(m_buf.get(), m_buf.get() + m_pos, size());
            m_end -= m_pos;
            m_pos = 0;
        }
        while (size() < m_window) {
            std::size_t n = m_source(std::span(m_buf.get() + m_end, m_window - size()));
            if (n == 0) {
                m_source_ended = true;
                return;
            }
            m_end += n;
        }
    }

  private:
    ByteSource m_source;
    std::unique_ptr<std::uint8_t[]> m_buf; ///< not zeroed: only what was read is looked at
    std::size_t m_size;
    std::size_t m_window;
    std::size_t m_pos = 0, m_end = 0;
    std::uint64_t m_offset = 0;
    bool m_source_ended = false;
};

} // namespace

// gzip: each member whole through libdeflate when it fits in a block (its input in the window),
// else streamed through zlib from the member's first byte, which also gives the precise reason
// for a member libdeflate refused (bad data and "too big for one call" look alike to it).
class GzipDecoder {
  public:
    GzipDecoder(ByteSource source, std::string label)
        : m_in(std::move(source), k_window), m_label(std::move(label)),
          m_deflate(libdeflate_alloc_decompressor()) {
        if (!m_deflate)
            throw Error("libdeflate: cannot start gzip decompression");
    }
    ~GzipDecoder() {
        if (m_streaming)
            inflateEnd(&m_z);
    }
    GzipDecoder(const GzipDecoder&) = delete;
    GzipDecoder& operator=(const GzipDecoder&) = delete;

    bool decode(DecodedBlock& block) {
        block.size = 0;
        if (m_streaming)
            return stream(block);
        if (m_after_last)
            return false;
        m_in.fill();
        if (m_in.size() == 0)
            return false;
        if (m_in.size() < 2 || m_in.data()[0] != 0x1f || m_in.data()[1] != 0x8b) {
            if (!m_members)
                throw bad_payload(m_label,
                                  "the payload is not gzip data (it does not start with the "
                                  "bytes 1f 8b of a gzip member)");
            m_after_last = true; // trailing bytes, not a member: gzip -d and libarchive stop here
            return false;
        }
        std::size_t in_used = 0, out_used = 0;
        auto rc = libdeflate_gzip_decompress_ex(m_deflate.get(), m_in.data(), m_in.size(),
                                                block.bytes.get(), PayloadDecoder::k_block_size,
                                                &in_used, &out_used);
        if (rc == LIBDEFLATE_SUCCESS) {
            m_in.consume(in_used);
            ++m_members;
            block.size = out_used;
            return true;
        }
        start_stream();
        return stream(block);
    }

  private:
    // A member of at most one block's output takes about as much input (stored blocks add 5
    // bytes in 65535); what does not fit is streamed.
    static constexpr std::size_t k_window = PayloadDecoder::k_block_size + (64u << 10);

    void start_stream() {
        m_z = z_stream{};
        if (inflateInit2(&m_z, 16 + MAX_WBITS) != Z_OK) // 16: gzip wrapper only
            throw Error("zlib: cannot start gzip decompression");
        m_streaming = true;
        m_member_start = m_in.offset();
    }

    // Fills `block` from the current member; at its end, back to whole members.
    bool stream(DecodedBlock& block) {
        while (block.size < PayloadDecoder::k_block_size) {
            if (m_in.size() == 0)
                m_in.fill();
            if (m_in.size() == 0)
                throw bad_payload(m_label,
                                  "the payload ends inside the gzip member at payload byte " +
                                      std::to_string(m_member_start) + " (truncated)");
            std::size_t in_avail = std::min<std::size_t>(m_in.size(), UINT_MAX);
            m_z.next_in = const_cast<Bytef*>(m_in.data());
            m_z.avail_in = static_cast<uInt>(in_avail);
            m_z.next_out = block.bytes.get() + block.size;
            m_z.avail_out = static_cast<uInt>(PayloadDecoder::k_block_size - block.size);
            std::size_t had = block.size;
            int rc = inflate(&m_z, Z_NO_FLUSH);
            std::size_t used = in_avail - m_z.avail_in;
            m_in.consume(used);
            block.size = PayloadDecoder::k_block_size - m_z.avail_out;
            if (rc == Z_BUF_ERROR && used == 0 && block.size == had)
                rc = Z_DATA_ERROR; // no progress with input and room: never loop on it
            if (rc == Z_STREAM_END) {
                inflateEnd(&m_z);
                m_streaming = false;
                ++m_members;
                return true;
            }
            if (rc != Z_OK && rc != Z_BUF_ERROR)
                throw bad_payload(
                    m_label, "the gzip member at payload byte " + std::to_string(m_member_start) +
                                 " is corrupt (" +
                                 (m_z.msg ? m_z.msg : "zlib error " + std::to_string(rc)) + ")");
        }
        return true;
    }

    struct Free {
        void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
    };
    InputWindow m_in;
    std::string m_label;
    std::unique_ptr<libdeflate_decompressor, Free> m_deflate;
    z_stream m_z{};
    bool m_streaming = false;
    std::uint64_t m_member_start = 0;
    std::uint64_t m_members = 0;
    bool m_after_last = false;
};

// zstd: streamed (libzstd bounds its window), frame after frame.
class ZstdDecoder {
  public:
    ZstdDecoder(ByteSource source, std::string label)
        : m_in(std::move(source), k_window), m_label(std::move(label)),
          m_zstd(ZSTD_createDStream()) {
        if (!m_zstd)
            throw Error("zstd: cannot start decompression");
    }

    bool decode(DecodedBlock& block) {
        block.size = 0;
        while (block.size < PayloadDecoder::k_block_size) {
            if (m_in.size() == 0)
                m_in.fill();
            if (m_in.size() == 0) {
                if (m_in_frame)
                    throw bad_payload(m_label,
                                      "the payload ends inside the zstd frame at payload byte " +
                                          std::to_string(m_frame_start) + " (truncated)");
                return block.size != 0;
            }
            ZSTD_inBuffer in{m_in.data(), m_in.size(), 0};
            ZSTD_outBuffer out{block.bytes.get(), PayloadDecoder::k_block_size, block.size};
            std::size_t rc = ZSTD_decompressStream(m_zstd.get(), &out, &in);
            m_in.consume(in.pos);
            block.size = out.pos;
            if (ZSTD_isError(rc))
                throw bad_payload(m_label, "the zstd frame at payload byte " +
                                               std::to_string(m_frame_start) + " is corrupt (" +
                                               ZSTD_getErrorName(rc) + ")");
            m_in_frame = rc != 0;
            if (!m_in_frame) {
                m_frame_start = m_in.offset();
                if (block.size != 0) // a block ends with its frame: a bad next one loses nothing
                    return true;
            }
        }
        return true;
    }

  private:
    static constexpr std::size_t k_window = 1u << 20;
    struct Free {
        void operator()(ZSTD_DStream* d) const { ZSTD_freeDStream(d); }
    };
    InputWindow m_in;
    std::string m_label;
    std::unique_ptr<ZSTD_DStream, Free> m_zstd;
    bool m_in_frame = false;
    std::uint64_t m_frame_start = 0;
};

PayloadDecoder::PayloadDecoder(Compression codec, ByteSource source, std::string label) {
    if (codec == Compression::gzip)
        m_gzip = std::make_unique<GzipDecoder>(std::move(source), std::move(label));
    else
        m_zstd = std::make_unique<ZstdDecoder>(std::move(source), std::move(label));
}

PayloadDecoder::~PayloadDecoder() = default;

bool PayloadDecoder::decode(DecodedBlock& block) {
    return m_gzip ? m_gzip->decode(block) : m_zstd->decode(block);
}

DecodedBlock PayloadDecoder::make_block() {
    return {std::make_unique_for_overwrite<std::uint8_t[]>(k_block_size), 0};
}

PayloadStream::PayloadStream(Compression codec, ByteSource source, std::string label,
                             Threading threading)
    : m_decoder(codec, std::move(source), std::move(label)), m_threading(threading) {
    if (threading == Threading::own_thread)
        m_thread = std::thread([this] { run(); });
    else
        m_current = PayloadDecoder::make_block();
}

PayloadStream::~PayloadStream() {
    stop();
}

void PayloadStream::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_free_cv.notify_all();
    if (m_thread.joinable())
        m_thread.join();
}

std::span<const std::uint8_t> PayloadStream::next() {
    if (m_threading == Threading::caller) {
        // After the end or an error the decoder is not called again.
        if (m_error)
            std::rethrow_exception(m_error);
        try {
            while (!m_stop && m_decoder.decode(m_current))
                if (m_current.size != 0)
                    return {m_current.bytes.get(), m_current.size};
        } catch (...) {
            m_error = std::current_exception();
            m_stop = true;
            throw;
        }
        m_stop = true;
        return {};
    }
    std::unique_lock lock(m_mutex);
    if (m_current.bytes) {
        m_free.push_back(std::move(m_current));
        m_free_cv.notify_one();
    }
    m_ready_cv.wait(lock, [&] { return !m_ready.empty() || m_ended || m_stop; });
    if (m_stop) // stop() was called: what was decoded ahead is dropped
        return {};
    if (m_ready.empty()) {
        if (m_error)
            std::rethrow_exception(m_error);
        return {};
    }
    m_current = std::move(m_ready.front());
    m_ready.pop_front();
    return {m_current.bytes.get(), m_current.size};
}

// The decoding thread: takes a free block (or makes one, up to the bound), decodes into it,
// queues it; the end or an error is queued after the blocks before it.
void PayloadStream::run() {
    for (;;) {
        DecodedBlock block;
        {
            std::unique_lock lock(m_mutex);
            m_free_cv.wait(lock, [&] {
                return m_stop || !m_free.empty() || m_allocated < k_blocks_ahead + 1;
            });
            if (m_stop)
                return;
            if (!m_free.empty()) {
                block = std::move(m_free.back());
                m_free.pop_back();
            } else {
                ++m_allocated;
            }
        }
        if (!block.bytes)
            block = PayloadDecoder::make_block();
        bool more = false;
        std::exception_ptr error;
        try {
            more = m_decoder.decode(block);
        } catch (...) {
            error = std::current_exception();
        }
        std::lock_guard lock(m_mutex);
        if (more && block.size != 0)
            m_ready.push_back(std::move(block));
        else if (more)
            m_free.push_back(std::move(block));
        if (!more) {
            m_ended = true;
            m_error = error;
        }
        m_ready_cv.notify_one();
        if (!more)
            return;
    }
}

} // namespace skforge::package
