// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/sha256.hpp"

#include "skforge/support/error.hpp"
#include "skforge/support/hex.hpp"

#include <openssl/evp.h>

namespace skforge::support {

Sha256::Sha256() : m_ctx(EVP_MD_CTX_new()) {
    if (m_ctx == nullptr || EVP_DigestInit_ex(m_ctx, EVP_sha256(), nullptr) != 1)
        throw Error("SHA-256: OpenSSL could not initialise a digest context");
}

Sha256::~Sha256() {
    EVP_MD_CTX_free(m_ctx);
}

void Sha256::update(std::span<const std::uint8_t> data) {
    if (!data.empty() && EVP_DigestUpdate(m_ctx, data.data(), data.size()) != 1)
        throw Error("SHA-256: OpenSSL digest update failed");
}

void Sha256::update(std::string_view text) {
    update(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

Digest Sha256::finish() {
    Digest out{};
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(m_ctx, out.data(), &len) != 1 || len != out.size())
        throw Error("SHA-256: OpenSSL digest finalisation failed");
    return out;
}

std::string sha256_hex(std::string_view text) {
    Sha256 h;
    h.update(text);
    return digest_hex(h.finish());
}

std::string digest_hex(const Digest& digest) {
    return to_hex(digest);
}

} // namespace skforge::support
