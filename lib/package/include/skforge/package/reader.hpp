// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/package/generated.hpp"
#include "skforge/package/manifest.hpp"
#include "skforge/package/signature.hpp"
#include "skforge/package/stub.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/progress.hpp"
#include "skforge/support/sha256.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace skforge::package {

/// Receives the entries of a payload as they are read; data is provisional until the whole
/// payload has been read and verified (read_payload returns normally).
class EntrySink {
  public:
    virtual ~EntrySink() = default;
    /// An entry that matches its manifest record starts.
    virtual void begin(const ManifestEntry& entry) = 0;
    /// Bytes of the current file entry.
    virtual void data(std::span<const std::uint8_t> bytes) = 0;
    /// The current entry is complete and its size and digest matched.
    virtual void end(const ManifestEntry& entry) = 0;
};

/// An EntrySink that keeps the text of every index file (is_index_path) as it goes by and
/// nothing else: what install.sh's index records are checked against (index_records_problem)
/// where the payload is read without being written (skc inspect --verify, skinstall --dry-run).
class IndexCapture final : public EntrySink {
  public:
    void begin(const ManifestEntry& entry) override;
    void data(std::span<const std::uint8_t> bytes) override;
    void end(const ManifestEntry& entry) override;
    /// The index files read so far, by path.
    const IndexTexts& texts() const { return m_texts; }

  private:
    IndexTexts m_texts;
    std::string* m_current = nullptr;
};

/// Guards against decompression bombs and absurd packages.
struct ReadLimits {
    std::uint64_t max_entries = 1'000'000;
    std::uint64_t max_unpacked_bytes = 64ull << 30;
    std::uint64_t max_manifest_bytes = 64ull << 20;
};

/// The outcome of checking a signature trailer.
enum class SignatureState {
    unsigned_package, ///< no trailer
    not_checked,      ///< signed, but no trusted key was given
    verified,         ///< signed by one of the trusted keys
    untrusted,        ///< signed by a key that is not trusted
    invalid,          ///< the signature does not match the bytes
};

/// Text for a signature state ("unsigned", "verified", ...).
std::string_view signature_state_name(SignatureState state);

/// The one trust policy of `skc inspect` and `skinstall`: why a package in `state` is refused, or
/// nullopt. An invalid signature is always refused; naming trusted keys (`keys_named`) means a
/// valid signature by one of them is required (an unsigned or stripped package is refused);
/// `require_signature` refuses anything not verified.
std::optional<std::string> signature_refusal(SignatureState state, bool keys_named,
                                             bool require_signature);

/// A .run package opened for reading. Nothing in it is ever executed: the stub's header is parsed
/// as text, the payload is decoded by PayloadStream (decompress.hpp) and its tar stream parsed
/// with libarchive.
class RunPackage {
  public:
    /// Opens `path` and parses its header; throws an Error naming the path when it is not a
    /// skforge package.
    explicit RunPackage(std::string path);

    /// The file's path.
    const std::string& path() const { return m_path; }
    /// The parsed header.
    const StubHeader& header() const { return m_header; }
    /// The file's actual size.
    std::uint64_t actual_size() const { return m_size; }
    /// True when the stub is byte-for-byte what this skforge renders for this header.
    bool stub_is_canonical() const;

    /// Throws an integrity Error unless the file has exactly the declared size.
    void check_layout() const;
    /// Whether verify_digests also computes the digest a signature check needs.
    enum class ForSignature { yes, no };
    /// Reads the payload once, checks its SHA-256 and returns the digest of every byte before
    /// the trailer (for the signature). Throws an integrity Error on mismatch. With
    /// ForSignature::no that second digest is not computed (a zero digest is returned): for a
    /// package whose signature will not be checked, the payload is hashed once.
    support::Digest verify_digests(support::Progress* progress = nullptr,
                                   ForSignature for_signature = ForSignature::yes) const;
    /// The trailer, when the header declares one.
    std::optional<Trailer> trailer() const;
    /// Checks the trailer against `trusted` keys, given the digest from verify_digests.
    SignatureState check_signature(const support::Digest& prefix_digest,
                                   const std::vector<Key>& trusted) const;

    /// Reads just the manifest (the first entry) and checks it agrees with the header.
    Manifest read_manifest(const ReadLimits& limits = {}) const;
    /// Throws an integrity Error unless install.sh, uninstall.sh and version.info in `manifest`
    /// are byte for byte what skforge renders for it and the header declares the same script
    /// digests the stub checks before running them.
    /// Returns install.sh's index records (generated.hpp, index_records), which this cannot
    /// check: the caller compares them with the index files it reads (index_records_problem).
    std::string check_scripts(const Manifest& manifest) const;
    /// install.sh's text (skforge puts it right after the manifest, in the stored first piece),
    /// or nullopt when the manifest or the payload has no such regular file.
    std::optional<std::string> read_install_sh(const Manifest& manifest,
                                               const ReadLimits& limits = {}) const;
    /// Reads every entry, checking each against the manifest (type, mode, size, SHA-256, no
    /// duplicates, parents first, nothing missing) and the payload digest; hands each to `sink`.
    /// Returns the manifest. Throws an integrity Error naming the entry on any mismatch.
    Manifest read_payload(EntrySink& sink, const ReadLimits& limits = {}) const;

  private:
    std::string m_path;
    support::UniqueFd m_fd;
    std::uint64_t m_size = 0;
    std::string m_stub;
    StubHeader m_header;
};

} // namespace skforge::package
