// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/support/file.hpp"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace skforge::support {

/// A SHA-256 digest.
using Digest = std::array<std::uint8_t, 32>;

/// Streaming SHA-256 (OpenSSL EVP).
class Sha256 {
  public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;

    /// Adds `data` to the digest.
    void update(std::span<const std::uint8_t> data);
    /// Adds the bytes of `text` to the digest.
    void update(std::string_view text);
    /// Finishes and returns the digest; the object must not be updated afterwards.
    Digest finish();

  private:
    evp_md_ctx_st* m_ctx;
};

/// SHA-256 of `text`, as lower-case hex.
std::string sha256_hex(std::string_view text);

/// A file's SHA-256 (lower-case hex) and size.
struct FileDigest {
    std::string sha256;
    std::uint64_t size = 0;
};

/// SHA-256 of the whole file open at `fd`, read through positioned reads from offset 0 (the
/// file's offset is left alone); throws an Error naming `path` when reading fails or the file
/// holds more than `max_bytes`.
FileDigest sha256_fd(int fd, std::string_view path, std::uint64_t max_bytes = UINT64_MAX);

/// SHA-256 of the regular file at `path`, streamed (never read whole into memory), opened as
/// open_regular does: without blocking, refused unless regular, within `max_bytes`, and its
/// last component a symbolic link only with Follow::yes.
FileDigest sha256_file(const std::string& path, std::uint64_t max_bytes,
                       Follow follow = Follow::yes);

/// Lower-case hex of a digest.
std::string digest_hex(const Digest& digest);

} // namespace skforge::support
