// SPDX-License-Identifier: Apache-2.0
#pragma once

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

/// Lower-case hex of a digest.
std::string digest_hex(const Digest& digest);

} // namespace skforge::support
