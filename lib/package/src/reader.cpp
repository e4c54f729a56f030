// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/reader.hpp"

#include "skforge/package/decompress.hpp"
#include "skforge/package/generated.hpp"
#include "skforge/package/index_rules.hpp"
#include "skforge/support/error.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <memory>
#include <set>
#include <sys/stat.h>

namespace skforge::package {

using support::Error;
using support::ErrorKind;

std::string_view signature_state_name(SignatureState s) {
    switch (s) {
    case SignatureState::unsigned_package:
        return "unsigned";
    case SignatureState::not_checked:
        return "not checked (no trusted key given)";
    case SignatureState::verified:
        return "verified";
    case SignatureState::untrusted:
        return "signed by an untrusted key";
    case SignatureState::invalid:
        return "INVALID";
    }
    return "unknown";
}

std::optional<std::string> signature_refusal(SignatureState state, bool keys_named,
                                             bool require_signature) {
    switch (state) {
    case SignatureState::invalid:
        return "the signature does not match the package";
    case SignatureState::verified:
        return std::nullopt;
    case SignatureState::untrusted:
        return std::string("signed by a key that is not trusted (--trusted-key)");
    case SignatureState::unsigned_package:
        if (keys_named || require_signature)
            return std::string("the package is not signed, and a signature by a trusted key is "
                               "required (") +
                   (require_signature ? "--require-signature" : "--trusted-key") + ")";
        return std::nullopt;
    case SignatureState::not_checked:
        if (require_signature)
            return "no trusted key verifies the signature (--trusted-key) and "
                   "--require-signature is set";
        return std::nullopt;
    }
    return "unknown signature state";
}

namespace {

Error integrity(const std::string& path, const std::string& what) {
    return Error(path + ": " + what, ErrorKind::integrity);
}

// The payload range of the file, read in order; every byte read is hashed.
struct RangeSource {
    int fd;
    const std::string& path;
    std::uint64_t offset;
    std::uint64_t end;
    support::Sha256 hash;
    std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(1u << 20);

    // Reads the next bytes of the range into `out`, as many as fit (fewer only at its end).
    std::size_t read(std::span<std::uint8_t> out) {
        auto want = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), end - offset));
        std::size_t n = support::pread_full(fd, out.first(want), offset, path);
        if (n != want)
            throw integrity(path, "the file ended inside the payload");
        offset += n;
        hash.update(std::span<const std::uint8_t>(out.data(), n));
        return n;
    }
    // Reads the next bytes into buf.
    std::size_t next() { return read(buf); }
};

// The tar stream of the payload: decoded by PayloadStream (decompress.hpp: libdeflate for
// gzip's 4 MiB members, libzstd, on a thread of its own when the whole payload is read) and
// parsed by libarchive, which is given the decoded bytes and no filter of its own.
class TarReader {
  public:
    TarReader(const RunPackage& pkg, int fd, Threading threading)
        : m_src{fd,
                pkg.path(),
                pkg.header().payload_offset,
                pkg.header().payload_offset + pkg.header().payload_size,
                {}},
          m_stream(
              pkg.header().compression, [this](std::span<std::uint8_t> b) { return m_src.read(b); },
              pkg.path(), threading),
          m_owner(archive_read_new()), m_a(m_owner.get()), m_path(pkg.path()) {
        archive_read_support_format_tar(m_a);
        if (archive_read_open(m_a, this, nullptr, read_cb, nullptr) != ARCHIVE_OK)
            fail("cannot read the payload");
    }
    TarReader(const TarReader&) = delete;
    TarReader& operator=(const TarReader&) = delete;

    archive_entry* next() {
        archive_entry* e = nullptr;
        int rc = archive_read_next_header(m_a, &e);
        if (rc == ARCHIVE_EOF)
            return nullptr;
        if (rc != ARCHIVE_OK)
            fail("the payload is not a valid archive");
        return e;
    }
    // Reads the current entry's data in blocks; returns the bytes read.
    template <class F>
    std::uint64_t read_data(std::uint64_t limit, const std::string& entry, F&& f) {
        std::uint64_t total = 0;
        const void* buf = nullptr;
        size_t len = 0;
        la_int64_t off = 0;
        for (;;) {
            int rc = archive_read_data_block(m_a, &buf, &len, &off);
            if (rc == ARCHIVE_EOF)
                return total;
            if (rc != ARCHIVE_OK)
                fail("cannot read the data of '" + entry + "'");
            if (static_cast<std::uint64_t>(off) != total || total + len > limit)
                throw integrity(m_path,
                                "payload entry '" + entry + "' is larger than its manifest size");
            total += len;
            f(std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(buf), len));
        }
    }
    // Reads to the end of the payload range and returns its SHA-256. What follows the end of
    // the tar stream is hashed, not decoded (as when libarchive decoded it).
    support::Digest finish_digest() {
        m_stream.stop();
        while (m_src.offset < m_src.end)
            m_src.next();
        return m_src.hash.finish();
    }

  private:
    // The decoder's errors (a corrupt or truncated member, a read error) are kept and thrown
    // as they are: they name the file and the payload byte.
    static la_ssize_t read_cb(struct archive* a, void* client, const void** out) {
        auto* self = static_cast<TarReader*>(client);
        try {
            auto block = self->m_stream.next();
            *out = block.data();
            return static_cast<la_ssize_t>(block.size());
        } catch (const std::exception& e) {
            self->m_read_error = std::current_exception();
            archive_set_error(a, EIO, "%s", e.what());
            return -1;
        }
    }
    [[noreturn]] void fail(const std::string& what) {
        if (m_read_error)
            std::rethrow_exception(m_read_error);
        const char* why = archive_error_string(m_a);
        throw integrity(m_path, what + (why ? std::string(": ") + why : std::string()));
    }
    struct Free {
        void operator()(archive* a) const { archive_read_free(a); }
    };
    RangeSource m_src;
    PayloadStream m_stream; ///< reads m_src; its thread is joined before m_src goes
    std::exception_ptr m_read_error;
    std::unique_ptr<archive, Free> m_owner;
    archive* m_a;
    const std::string& m_path;
};

// O_NONBLOCK: a FIFO given as the package opens at once and is refused as not a regular file,
// instead of blocking until some writer appears (it has no effect on regular files).
support::UniqueFd open_package(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        throw support::io_error("cannot open", path, errno);
    return support::UniqueFd(fd);
}

std::string entry_kind_refusal(archive_entry* e) {
    if (archive_entry_hardlink(e) != nullptr)
        return "is a hard link entry";
    switch (archive_entry_filetype(e)) {
    case AE_IFREG:
    case AE_IFDIR:
        return {};
    case AE_IFLNK:
        return "is a symbolic link entry";
    case AE_IFCHR:
        return "is a character device entry";
    case AE_IFBLK:
        return "is a block device entry";
    case AE_IFIFO:
        return "is a FIFO entry";
    case AE_IFSOCK:
        return "is a socket entry";
    default:
        return "is not a regular file or directory";
    }
}

std::string entry_path(archive_entry* e) {
    const char* p = archive_entry_pathname_utf8(e);
    if (p == nullptr)
        p = archive_entry_pathname(e);
    std::string path = p ? p : "";
    if (archive_entry_filetype(e) == AE_IFDIR && path.size() > 1 && path.back() == '/')
        path.pop_back();
    return path;
}

void check_manifest_against_header(const Manifest& m, const StubHeader& h, const std::string& path,
                                   const ReadLimits& limits) {
    auto mismatch = [&](const char* what) {
        return integrity(path,
                         std::string("the manifest's ") + what + " differs from the header's");
    };
    if (m.name != h.name)
        throw mismatch("name");
    if (m.version != h.version)
        throw mismatch("version");
    if (m.npu_arch != h.npu_arch || m.soc_version != h.soc_version)
        throw mismatch("NPU arch or SoC version");
    if (m.entries.size() != h.file_count || m.unpacked_size() != h.unpacked_size)
        throw mismatch("file count or unpacked size");
    if (m.entries.size() > limits.max_entries)
        throw integrity(path, "the package has " + std::to_string(m.entries.size()) +
                                  " entries, more than the limit of " +
                                  std::to_string(limits.max_entries));
    if (m.unpacked_size() > limits.max_unpacked_bytes)
        throw integrity(path, "the package unpacks to " + std::to_string(m.unpacked_size()) +
                                  " bytes, more than the limit of " +
                                  std::to_string(limits.max_unpacked_bytes));
}

Manifest read_manifest_entry(TarReader& tar, const RunPackage& pkg, const ReadLimits& limits) {
    archive_entry* e = tar.next();
    if (e == nullptr || entry_path(e) != k_manifest_path || archive_entry_filetype(e) != AE_IFREG ||
        archive_entry_hardlink(e) != nullptr)
        throw integrity(pkg.path(), "the payload does not start with its manifest");
    std::string text;
    tar.read_data(limits.max_manifest_bytes, std::string(k_manifest_path),
                  [&](std::span<const std::uint8_t> b) { text.append(b.begin(), b.end()); });
    Manifest m;
    try {
        m = parse_manifest(text, pkg.path());
    } catch (const Error& err) {
        throw Error(err.what(), ErrorKind::integrity);
    }
    check_manifest_against_header(m, pkg.header(), pkg.path(), limits);
    if (auto why = check_kernel_package_name(m.name))
        throw Error(pkg.path() + ": package name '" + m.name + "' " + *why);
    return m;
}

const ManifestEntry& match_entry(archive_entry* e, const Manifest& m, const std::string& path,
                                 std::set<std::string>& seen) {
    std::string p = entry_path(e);
    auto bad = [&](const std::string& why) {
        return integrity(path, "payload entry '" + p + "' " + why);
    };
    if (auto why = check_entry_path(p))
        throw bad("path " + *why);
    if (auto why = entry_kind_refusal(e); !why.empty())
        throw bad(why);
    const ManifestEntry* me = m.find(p);
    if (me == nullptr)
        throw bad("is not in the manifest");
    if (!seen.insert(p).second)
        throw bad("appears twice");
    auto slash = p.rfind('/');
    if (slash != std::string::npos && !seen.contains(p.substr(0, slash)))
        throw bad("comes before its parent directory");
    bool is_dir = archive_entry_filetype(e) == AE_IFDIR;
    if (is_dir != (me->type == EntryType::directory))
        throw bad("is a " + std::string(is_dir ? "directory" : "file") +
                  " but the manifest lists a " + std::string(entry_type_name(me->type)));
    auto mode = static_cast<mode_t>(archive_entry_mode(e) & 07777);
    if (mode != me->mode)
        throw bad("has mode " + format_mode(mode) + ", the manifest says " + format_mode(me->mode));
    if (!is_dir && (!archive_entry_size_is_set(e) ||
                    static_cast<std::uint64_t>(archive_entry_size(e)) != me->size))
        throw bad("has a size other than the manifest's " + std::to_string(me->size));
    return *me;
}

} // namespace

RunPackage::RunPackage(std::string path) : m_path(std::move(path)), m_fd(open_package(m_path)) {
    struct stat st {};
    if (::fstat(m_fd.get(), &st) != 0)
        throw support::io_error("cannot stat", m_path, errno);
    if (!S_ISREG(st.st_mode))
        throw Error(m_path + ": not a regular file");
    m_size = static_cast<std::uint64_t>(st.st_size);
    std::vector<std::uint8_t> head(std::min<std::uint64_t>(k_max_header_bytes, m_size));
    head.resize(support::pread_full(m_fd.get(), head, 0, m_path));
    m_header = parse_stub(std::string_view(reinterpret_cast<const char*>(head.data()), head.size()),
                          m_path);
    std::vector<std::uint8_t> stub(std::min<std::uint64_t>(m_header.payload_offset, m_size));
    stub.resize(support::pread_full(m_fd.get(), stub, 0, m_path));
    m_stub.assign(stub.begin(), stub.end());
}

std::optional<std::string> RunPackage::read_install_sh(const Manifest& manifest,
                                                       const ReadLimits& limits) const {
    check_layout();
    const auto* me = manifest.find("install.sh");
    if (me == nullptr)
        return std::nullopt;
    // skforge puts it right after the manifest, in the stored first piece; the caller has read
    // the manifest, so it is skipped here, not parsed again.
    TarReader tar(*this, m_fd.get(), Threading::caller);
    while (archive_entry* e = tar.next()) {
        if (entry_path(e) != "install.sh")
            continue;
        if (archive_entry_filetype(e) != AE_IFREG)
            return std::nullopt;
        std::string text;
        tar.read_data(std::min(me->size, limits.max_unpacked_bytes), "install.sh",
                      [&](std::span<const std::uint8_t> b) { text.append(b.begin(), b.end()); });
        return text;
    }
    return std::nullopt;
}

std::string RunPackage::check_scripts(const Manifest& manifest) const {
    // The records as install.sh holds them: the rest of it must be what skforge renders with
    // them; the caller checks them against the index files where it reads those.
    std::string records;
    if (auto text = read_install_sh(manifest))
        records = records_in_install_sh(*text).value_or("");
    auto problems = check_generated_files(manifest, records);
    const auto* install = manifest.find("install.sh");
    const auto* uninstall = manifest.find("uninstall.sh");
    if (install != nullptr && uninstall != nullptr &&
        (install->sha256 != m_header.install_sh_sha256 ||
         uninstall->sha256 != m_header.uninstall_sh_sha256))
        problems.push_back("the header's script digests differ from the payload's scripts");
    if (problems.empty())
        return records;
    std::string msg = "refusing: its scripts are not the ones skforge generates:";
    for (const auto& p : problems)
        msg += "\n  " + p;
    throw integrity(m_path, msg);
}

bool RunPackage::stub_is_canonical() const {
    return m_stub == render_stub(m_header);
}

void RunPackage::check_layout() const {
    std::uint64_t want = m_header.file_size();
    if (m_size < want)
        throw integrity(m_path, "truncated: " + std::to_string(m_size) +
                                    " bytes, the header declares " + std::to_string(want));
    if (m_size > want)
        throw integrity(m_path, std::to_string(m_size - want) +
                                    " unexpected bytes after the declared end of the package");
    if (m_header.trailer_size != 0 && m_header.trailer_size != trailer_size())
        throw integrity(m_path, "the declared signature trailer has the wrong size");
}

support::Digest RunPackage::verify_digests(support::Progress* progress,
                                           ForSignature signature) const {
    bool for_signature = signature == ForSignature::yes;
    check_layout();
    support::Sha256 prefix;
    if (for_signature)
        prefix.update(m_stub);
    RangeSource src{m_fd.get(),
                    m_path,
                    m_header.payload_offset,
                    m_header.payload_offset + m_header.payload_size,
                    {}};
    if (progress)
        progress->begin("verifying " + m_header.name, m_header.payload_size);
    while (src.offset < src.end) {
        std::size_t n = src.next();
        if (for_signature)
            prefix.update(std::span<const std::uint8_t>(src.buf.data(), n));
        if (progress)
            progress->update(src.offset - m_header.payload_offset);
    }
    if (progress)
        progress->end();
    std::string got = support::digest_hex(src.hash.finish());
    if (got != m_header.payload_sha256)
        throw integrity(m_path, "payload SHA-256 mismatch: the header declares " +
                                    m_header.payload_sha256 + ", the payload hashes to " + got);
    if (m_stub.size() != m_header.payload_offset)
        throw integrity(m_path, "the stub is shorter than the declared payload offset");
    return for_signature ? prefix.finish() : support::Digest{};
}

std::optional<Trailer> RunPackage::trailer() const {
    if (m_header.trailer_size == 0)
        return std::nullopt;
    check_layout();
    std::vector<std::uint8_t> bytes(m_header.trailer_size);
    support::pread_full(m_fd.get(), bytes, m_header.payload_offset + m_header.payload_size, m_path);
    return parse_trailer(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), m_path);
}

SignatureState RunPackage::check_signature(const support::Digest& prefix_digest,
                                           const std::vector<Key>& trusted) const {
    auto t = trailer();
    if (!t)
        return SignatureState::unsigned_package;
    if (trusted.empty())
        return SignatureState::not_checked;
    for (const auto& key : trusted)
        if (key.key_id() == t->key_id)
            return key.verify(signed_message(prefix_digest), t->signature)
                       ? SignatureState::verified
                       : SignatureState::invalid;
    return SignatureState::untrusted;
}

Manifest RunPackage::read_manifest(const ReadLimits& limits) const {
    check_layout();
    // The manifest is in the first piece: decoded here, nothing ahead of it.
    TarReader tar(*this, m_fd.get(), Threading::caller);
    return read_manifest_entry(tar, *this, limits);
}

void IndexCapture::begin(const ManifestEntry& entry) {
    m_current =
        entry.type == EntryType::file && is_index_path(entry.path) ? &m_texts[entry.path] : nullptr;
}

void IndexCapture::data(std::span<const std::uint8_t> bytes) {
    if (m_current != nullptr)
        m_current->append(bytes.begin(), bytes.end());
}

void IndexCapture::end(const ManifestEntry&) {
    m_current = nullptr;
}

Manifest RunPackage::read_payload(EntrySink& sink, const ReadLimits& limits) const {
    check_layout();
    TarReader tar(*this, m_fd.get(), Threading::own_thread);
    Manifest m = read_manifest_entry(tar, *this, limits);
    std::set<std::string> seen;
    while (archive_entry* e = tar.next()) {
        const ManifestEntry& me = match_entry(e, m, m_path, seen);
        sink.begin(me);
        support::Sha256 h;
        std::uint64_t n = tar.read_data(me.size, me.path, [&](std::span<const std::uint8_t> b) {
            h.update(b);
            sink.data(b);
        });
        if (me.type == EntryType::file &&
            (n != me.size || support::digest_hex(h.finish()) != me.sha256))
            throw integrity(m_path,
                            "payload entry '" + me.path + "' does not match its manifest SHA-256");
        sink.end(me);
    }
    for (const auto& me : m.entries)
        if (!seen.contains(me.path))
            throw integrity(m_path,
                            "the manifest lists '" + me.path + "' but the payload lacks it");
    std::string got = support::digest_hex(tar.finish_digest());
    if (got != m_header.payload_sha256)
        throw integrity(m_path, "payload SHA-256 mismatch: the header declares " +
                                    m_header.payload_sha256 + ", the payload hashes to " + got);
    return m;
}

} // namespace skforge::package
