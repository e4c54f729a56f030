// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/support/sha256.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct evp_pkey_st;

namespace skforge::package {

/// An Ed25519 signature.
using SignatureBytes = std::array<std::uint8_t, 64>;

/// The signature trailer at the end of a signed package.
struct Trailer {
    std::string key_id; ///< SHA-256 of the raw 32-byte public key, hex
    SignatureBytes signature{};
};

/// Size in bytes of every trailer.
std::size_t trailer_size();

/// The trailer's bytes.
std::string render_trailer(const Trailer& trailer);

/// Parses trailer bytes; throws an Error naming `origin` when they are malformed.
Trailer parse_trailer(std::string_view bytes, std::string_view origin);

/// The message that is signed: a domain-separation prefix and the SHA-256 of every byte before
/// the trailer (stub and payload), so signatures cannot be replayed for another purpose.
std::string signed_message(const support::Digest& prefix_digest);

/// An Ed25519 key loaded from a PEM file (private or public).
class Key {
  public:
    /// Loads a private key (PKCS#8 PEM) from `path`; throws naming the path and the reason.
    static Key load_private(const std::string& path);
    /// Loads a public key (SubjectPublicKeyInfo PEM) from `path`.
    static Key load_public(const std::string& path);
    /// Generates a fresh key pair and writes NAME.pem (0600) and NAME.pub.pem (0644) whole.
    static Key generate(const std::string& name_prefix);

    /// The key id: hex SHA-256 of the raw public key.
    std::string key_id() const;
    /// Signs `message` (private keys only).
    SignatureBytes sign(std::string_view message) const;
    /// True when `signature` is this key's over `message`.
    bool verify(std::string_view message, const SignatureBytes& signature) const;

  private:
    explicit Key(evp_pkey_st* pkey);
    struct Free {
        void operator()(evp_pkey_st* p) const;
    };
    std::shared_ptr<evp_pkey_st> m_pkey;
};

} // namespace skforge::package
