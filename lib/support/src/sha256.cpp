// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/sha256.hpp"

#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/hex.hpp"

#include <algorithm>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <vector>

namespace skforge::support {

namespace {

// The SHA-256 implementation, fetched from OpenSSL's providers once per process: EVP_sha256()
// makes every EVP_DigestInit_ex fetch it again, which perf showed as most of the cost of
// hashing a small file (an uninstall hashes each of its 400 files). Never freed: it lives as
// long as the process.
const EVP_MD* sha256_md() {
    static const EVP_MD* md = [] {
        const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
        return fetched != nullptr ? fetched : EVP_sha256();
    }();
    return md;
}

} // namespace

Sha256::Sha256() : m_ctx(EVP_MD_CTX_new()) {
    if (m_ctx == nullptr || EVP_DigestInit_ex(m_ctx, sha256_md(), nullptr) != 1)
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

FileDigest sha256_fd(int fd, std::string_view path, std::uint64_t max_bytes) {
    Sha256 h;
    // No bigger than the file (a 1 MiB buffer per small file costs more than hashing it).
    struct stat st {};
    std::uint64_t hint = ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) + 1 : 0;
    std::vector<std::uint8_t> buf(
        static_cast<std::size_t>(std::clamp<std::uint64_t>(hint, 4096, std::uint64_t(1) << 20)));
    std::uint64_t offset = 0;
    for (;;) {
        std::size_t n = pread_full(fd, buf, offset, path);
        if (n == 0)
            break;
        h.update(std::span<const std::uint8_t>(buf.data(), n));
        offset += n;
        if (offset > max_bytes)
            throw Error("cannot read '" + std::string(path) + "': larger than the limit of " +
                        std::to_string(max_bytes) + " bytes");
    }
    return {digest_hex(h.finish()), offset};
}

FileDigest sha256_file(const std::string& path, std::uint64_t max_bytes, Follow follow) {
    UniqueFd fd = open_regular(path, {max_bytes, follow});
    return sha256_fd(fd.get(), path, max_bytes);
}

std::string digest_hex(const Digest& digest) {
    return to_hex(digest);
}

} // namespace skforge::support
