// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/signature.hpp"

#include "skforge/support/atomic_file.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/hex.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

namespace skforge::package {

using support::Error;

namespace {

constexpr std::string_view k_trailer_head = "\n#SKFORGE-SIGNATURE-V1 ed25519 key-id=";
constexpr std::string_view k_trailer_mid = " signature=";
constexpr std::string_view k_message_prefix = "SKFORGE-RUN-SIGNATURE-V1\n";

std::string openssl_reason() {
    unsigned long code = ERR_get_error();
    ERR_clear_error();
    if (code == 0)
        return "unknown OpenSSL error";
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    return buf;
}

struct BioFree {
    void operator()(BIO* b) const { BIO_free(b); }
};
struct CtxFree {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

std::unique_ptr<BIO, BioFree> memory_bio(const std::string& text) {
    BIO* bio = BIO_new_mem_buf(text.data(), static_cast<int>(text.size()));
    if (bio == nullptr)
        throw Error("OpenSSL: cannot allocate a buffer: " + openssl_reason());
    return std::unique_ptr<BIO, BioFree>(bio);
}

// The first PEM label in `text` ("PRIVATE KEY", "PUBLIC KEY", "RSA PRIVATE KEY", ...), or "".
std::string pem_label(const std::string& text) {
    constexpr std::string_view begin = "-----BEGIN ";
    auto at = text.find(begin);
    if (at == std::string::npos)
        return "";
    auto end = text.find("-----", at + begin.size());
    return end == std::string::npos ? "" : text.substr(at + begin.size(), end - at - begin.size());
}

// Why `text` (read from `path`) cannot be the `want`ed key ("private" or "public"), in plain
// words, from what the file says it holds; empty when its label is the expected one.
std::string key_file_problem(const std::string& path, const std::string& text, bool want_private) {
    const std::string want = want_private ? "private" : "public";
    const std::string head = "'" + path + "' is not an Ed25519 " + want + " key in PEM form: ";
    const std::string make = want_private ? "sign with NAME.pem from 'skc keygen -o NAME'"
                                          : "trust NAME.pub.pem from 'skc keygen -o NAME'";
    std::string label = pem_label(text);
    if (label.empty())
        return head + "it has no '-----BEGIN ...-----' line (" + make + ")";
    if (label == "OPENSSH PRIVATE KEY")
        return head + "it is an OpenSSH key (" + make + ")";
    if (label == "ENCRYPTED PRIVATE KEY")
        return head + "it is encrypted, and skforge reads unencrypted keys (" + make + ")";
    bool is_private = label.ends_with("PRIVATE KEY"), is_public = label.ends_with("PUBLIC KEY");
    if (want_private && is_public)
        return head + "it holds a public key; signing needs the private one (" + make +
               ", not NAME.pub.pem)";
    if (!want_private && is_private)
        return head + "it holds a private key; --trusted-key takes the public one (" + make +
               ", never the private NAME.pem)";
    if (!is_private && !is_public)
        return head + "it holds a " + label + " (" + make + ")";
    return "";
}

// The key read from `path`, or an Error saying in plain words what the file is instead.
EVP_PKEY* read_key(const std::string& path, bool want_private) {
    std::string text = support::read_file(path);
    if (auto problem = key_file_problem(path, text, want_private); !problem.empty())
        throw Error(problem);
    auto bio = memory_bio(text);
    EVP_PKEY* pkey = want_private ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr)
                                  : PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr);
    if (pkey == nullptr)
        throw Error("'" + path + "' is not a readable " + (want_private ? "private" : "public") +
                    " key: its PEM is damaged (OpenSSL: " + openssl_reason() + ")");
    if (EVP_PKEY_get_id(pkey) != EVP_PKEY_ED25519) {
        const char* type = EVP_PKEY_get0_type_name(pkey);
        std::string what = type != nullptr ? type : "unknown";
        EVP_PKEY_free(pkey);
        throw Error("'" + path + "' is a key of type " + what + ", not Ed25519: skforge signs " +
                    "and verifies with Ed25519 keys only (make a pair with 'skc keygen -o NAME')");
    }
    return pkey;
}

std::string pem_text(EVP_PKEY* pkey, bool private_part) {
    std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
    int ok = private_part
                 ? PEM_write_bio_PrivateKey(bio.get(), pkey, nullptr, nullptr, 0, nullptr, nullptr)
                 : PEM_write_bio_PUBKEY(bio.get(), pkey);
    if (ok != 1)
        throw Error("OpenSSL: cannot encode a key: " + openssl_reason());
    char* data = nullptr;
    long len = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(len));
}

} // namespace

std::size_t trailer_size() {
    return k_trailer_head.size() + 64 + k_trailer_mid.size() + 128 + 1;
}

std::string render_trailer(const Trailer& t) {
    std::string out(k_trailer_head);
    out += t.key_id;
    out += k_trailer_mid;
    out += support::to_hex(t.signature);
    out += '\n';
    return out;
}

Trailer parse_trailer(std::string_view bytes, std::string_view origin) {
    std::string bad = std::string(origin) + ": malformed signature trailer";
    if (bytes.size() != trailer_size() ||
        bytes.substr(0, k_trailer_head.size()) != k_trailer_head || bytes.back() != '\n')
        throw Error(bad);
    Trailer t;
    t.key_id = std::string(bytes.substr(k_trailer_head.size(), 64));
    auto mid = bytes.substr(k_trailer_head.size() + 64, k_trailer_mid.size());
    auto sig =
        support::from_hex(bytes.substr(k_trailer_head.size() + 64 + k_trailer_mid.size(), 128));
    if (!support::is_lower_hex(t.key_id, 64) || mid != k_trailer_mid || !sig || sig->size() != 64)
        throw Error(bad);
    std::copy(sig->begin(), sig->end(), t.signature.begin());
    return t;
}

std::string signed_message(const support::Digest& prefix_digest) {
    return std::string(k_message_prefix) + support::digest_hex(prefix_digest) + "\n";
}

void Key::Free::operator()(evp_pkey_st* p) const {
    EVP_PKEY_free(p);
}

Key::Key(evp_pkey_st* pkey) : m_pkey(pkey, Free{}) {}

Key Key::load_private(const std::string& path) {
    return Key(read_key(path, true));
}

Key Key::load_public(const std::string& path) {
    return Key(read_key(path, false));
}

Key Key::generate(const std::string& name_prefix) {
    EVP_PKEY* raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
    if (raw == nullptr)
        throw Error("OpenSSL: cannot generate an Ed25519 key: " + openssl_reason());
    Key key(raw);
    support::AtomicFile priv(name_prefix + ".pem", 0600);
    priv.write(pem_text(raw, true));
    support::AtomicFile pub(name_prefix + ".pub.pem", 0644);
    pub.write(pem_text(raw, false));
    priv.commit();
    pub.commit();
    return key;
}

std::string Key::key_id() const {
    std::uint8_t raw[32];
    std::size_t len = sizeof raw;
    if (EVP_PKEY_get_raw_public_key(m_pkey.get(), raw, &len) != 1 || len != sizeof raw)
        throw Error("OpenSSL: cannot read the raw public key: " + openssl_reason());
    support::Sha256 h;
    h.update(std::span<const std::uint8_t>(raw, len));
    return support::digest_hex(h.finish());
}

SignatureBytes Key::sign(std::string_view message) const {
    std::unique_ptr<EVP_MD_CTX, CtxFree> ctx(EVP_MD_CTX_new());
    SignatureBytes sig{};
    std::size_t len = sig.size();
    if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, m_pkey.get()) != 1 ||
        EVP_DigestSign(ctx.get(), sig.data(), &len,
                       reinterpret_cast<const unsigned char*>(message.data()),
                       message.size()) != 1 ||
        len != sig.size())
        throw Error("OpenSSL: signing failed (is this a private key?): " + openssl_reason());
    return sig;
}

bool Key::verify(std::string_view message, const SignatureBytes& signature) const {
    std::unique_ptr<EVP_MD_CTX, CtxFree> ctx(EVP_MD_CTX_new());
    if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, m_pkey.get()) != 1)
        throw Error("OpenSSL: cannot start verification: " + openssl_reason());
    int rc =
        EVP_DigestVerify(ctx.get(), signature.data(), signature.size(),
                         reinterpret_cast<const unsigned char*>(message.data()), message.size());
    ERR_clear_error();
    return rc == 1;
}

} // namespace skforge::package
