#include "skforge/package/writer.hpp"

#include "skforge/package/compress.hpp"
#include "skforge/package/generated.hpp"
#include "skforge/package/index_rules.hpp"
#include "skforge/package/manifest.hpp"
#include "skforge/package/signature.hpp"
#include "skforge/package/template.hpp"
#include "skforge/support/atomic_file.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/sha256.hpp"
#include "source_tree.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <cerrno>
#include <map>
#include <unistd.h>

namespace skforge::package {

using support::Error;

namespace {

// Files every package carries, generated from the templates; a source tree may not hold them.
const std::set<std::string> k_generated = {"install.sh", "uninstall.sh", "version.info",
                                           std::string(k_manifest_path)};

std::string default_inputs_digest(const PackOptions& o, const std::vector<SourceEntry>& src) {
    support::Sha256 h;
    h.update("version=" + o.version + "\nnpu_arch=" + o.npu_arch +
             "\nsoc_version=" + o.soc_version + "\n");
    for (const auto& e : src)
        h.update(std::string(entry_type_name(e.type)) + " " + std::to_string(e.mode) + " " +
                 std::to_string(e.size) + " " + e.sha256 + " " + e.path + "\n");
    return support::digest_hex(h.finish());
}

// Builds the manifest and the generated files. The scripts embed the entry list, which names the
// scripts themselves but not their digests, so there is no circularity.
std::vector<GeneratedFile> build_manifest(const PackOptions& o, Manifest& m,
                                          const std::vector<SourceEntry>& src) {
    for (const auto& e : src)
        m.entries.push_back({e.path, e.type, e.mode, e.size, e.sha256});
    for (const char* p : k_generated_paths)
        m.entries.push_back({p,
                             EntryType::file,
                             std::string_view(p) == "version.info" ? mode_t(0644) : mode_t(0755),
                             0,
                             {}});
    std::sort(m.entries.begin(), m.entries.end(),
              [](const ManifestEntry& a, const ManifestEntry& b) { return a.path < b.path; });
    auto gen = render_generated_files(m);
    for (const auto& g : gen)
        for (auto& e : m.entries)
            if (e.path == g.path) {
                e.size = g.text.size();
                e.sha256 = support::sha256_hex(g.text);
            }
    m.inputs_digest = o.inputs_digest.empty() ? default_inputs_digest(o, src) : o.inputs_digest;
    if (auto errors = validate_manifest(m); !errors.empty())
        throw Error("internal error: generated manifest is invalid: " + errors.front());
    return gen;
}

// Where the archive's bytes go: compressed (gzip here, zstd inside libarchive), hashed, written.
struct PayloadOutput {
    int fd;
    const std::string& path;
    support::Sha256 hash;
    std::uint64_t size = 0;
    std::unique_ptr<ParallelGzip> gzip;

    void emit(std::span<const std::uint8_t> bytes) {
        hash.update(bytes);
        size += bytes.size();
        support::write_all(fd, bytes, path);
    }
};

la_ssize_t archive_write_cb(struct archive*, void* client, const void* buf, size_t len) {
    auto* out = static_cast<PayloadOutput*>(client);
    std::span<const std::uint8_t> bytes(static_cast<const std::uint8_t*>(buf), len);
    try {
        if (out->gzip)
            out->gzip->write(bytes);
        else
            out->emit(bytes);
    } catch (const std::exception&) {
        errno = EIO;
        return -1;
    }
    return static_cast<la_ssize_t>(len);
}

class TarWriter {
  public:
    TarWriter(const PackOptions& o, PayloadOutput& out)
        : m_owner(archive_write_new()), m_a(m_owner.get()), m_mtime(o.mtime) {
        check(archive_write_set_format_pax_restricted(m_a));
        if (o.compression == Compression::zstd) {
            check(archive_write_add_filter_zstd(m_a));
            int level = o.level == 0 ? 3 : o.level;
            check(archive_write_set_filter_option(m_a, "zstd", "compression-level",
                                                  std::to_string(level).c_str()));
            check(archive_write_set_bytes_in_last_block(m_a, 1));
        }
        check(archive_write_open(m_a, &out, nullptr, archive_write_cb, nullptr));
    }
    TarWriter(const TarWriter&) = delete;
    TarWriter& operator=(const TarWriter&) = delete;

    void header(const std::string& path, EntryType type, mode_t mode, std::uint64_t size) {
        archive_entry* e = archive_entry_new();
        archive_entry_set_pathname_utf8(e, path.c_str());
        archive_entry_set_filetype(e, type == EntryType::file ? AE_IFREG : AE_IFDIR);
        archive_entry_set_perm(e, mode);
        archive_entry_set_size(e, static_cast<la_int64_t>(size));
        archive_entry_set_mtime(e, m_mtime, 0);
        archive_entry_set_uid(e, 0);
        archive_entry_set_gid(e, 0);
        int rc = archive_write_header(m_a, e);
        archive_entry_free(e);
        check(rc);
    }
    void data(std::span<const std::uint8_t> bytes) {
        if (archive_write_data(m_a, bytes.data(), bytes.size()) !=
            static_cast<la_ssize_t>(bytes.size()))
            check(ARCHIVE_FATAL);
    }
    void close() { check(archive_write_close(m_a)); }

  private:
    void check(int rc) {
        if (rc != ARCHIVE_OK)
            throw Error(
                std::string("writing the payload failed: ") +
                (archive_error_string(m_a) ? archive_error_string(m_a) : "libarchive error"));
    }
    struct Free {
        void operator()(archive* a) const { archive_write_free(a); }
    };
    std::unique_ptr<archive, Free> m_owner;
    archive* m_a;
    std::int64_t m_mtime;
};

void write_source_file(TarWriter& tar, const std::string& root, const SourceEntry& e,
                       support::Progress& progress, std::uint64_t& done) {
    support::UniqueFd fd(open_source_file(root, e));
    std::vector<std::uint8_t> buf(1u << 20);
    support::Sha256 h;
    std::uint64_t off = 0;
    while (std::size_t n = support::pread_full(fd.get(), buf, off, e.path)) {
        std::span<const std::uint8_t> chunk(buf.data(), n);
        h.update(chunk);
        tar.data(chunk);
        off += n;
        progress.update(done += n);
    }
    if (off != e.size || support::digest_hex(h.finish()) != e.sha256)
        throw Error("'" + root + "/" + e.path + "' changed while it was being packed; pack again");
}

void write_payload(const PackOptions& o, const Manifest& m, const std::vector<SourceEntry>& src,
                   const std::vector<GeneratedFile>& gen, PayloadOutput& out) {
    auto& progress = *o.progress;
    TarWriter tar(o, out);
    std::string manifest_text = manifest_to_json(m);
    tar.header(std::string(k_manifest_path), EntryType::file, 0644, manifest_text.size());
    tar.data({reinterpret_cast<const std::uint8_t*>(manifest_text.data()), manifest_text.size()});
    std::map<std::string_view, const SourceEntry*> by_path;
    for (const auto& e : src)
        by_path.emplace(e.path, &e);
    std::uint64_t done = 0;
    progress.begin("packing " + m.name, m.unpacked_size());
    for (const auto& e : m.entries) {
        tar.header(e.path, e.type, e.mode, e.size);
        if (auto it = by_path.find(e.path); it != by_path.end()) {
            if (e.type == EntryType::file)
                write_source_file(tar, o.source_dir, *it->second, progress, done);
            continue;
        }
        for (const auto& g : gen)
            if (g.path == e.path)
                tar.data({reinterpret_cast<const std::uint8_t*>(g.text.data()), g.text.size()});
    }
    tar.close();
    if (out.gzip)
        out.gzip->finish();
    progress.end();
}

support::Digest hash_prefix(int fd, std::uint64_t size, const std::string& path) {
    support::Sha256 h;
    std::vector<std::uint8_t> buf(1u << 20);
    std::uint64_t off = 0;
    while (off < size) {
        std::size_t want =
            static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - off));
        std::size_t n = support::pread_full(fd, std::span(buf.data(), want), off, path);
        if (n != want)
            throw Error("'" + path + "' is shorter than what was just written");
        h.update(std::span<const std::uint8_t>(buf.data(), n));
        off += n;
    }
    return h.finish();
}

void check_labels(const PackOptions& o) {
    if (auto bad = check_label(o.version, false))
        throw Error("--version '" + o.version + "' " + *bad, support::ErrorKind::usage);
    if (auto bad = check_label(o.npu_arch, true))
        throw Error("--npu-arch '" + o.npu_arch + "' " + *bad, support::ErrorKind::usage);
    if (auto bad = check_label(o.soc_version, true))
        throw Error("--soc '" + o.soc_version + "' " + *bad, support::ErrorKind::usage);
    int max_level = o.compression == Compression::gzip ? 9 : 19;
    if (o.level < 0 || o.level > max_level)
        throw Error("--level must be 1.." + std::to_string(max_level) + " for " +
                        std::string(compression_name(o.compression)),
                    support::ErrorKind::usage);
}

} // namespace

std::string toolchain_string() {
    return std::string("skforge ") + SKFORGE_VERSION;
}

std::string package_name_from_path(const std::string& run_path) {
    std::string base = support::base_name(run_path);
    if (base.size() <= 4 || base.substr(base.size() - 4) != ".run")
        throw Error("output '" + run_path + "' must be a file name ending in .run",
                    support::ErrorKind::usage);
    std::string name = base.substr(0, base.size() - 4);
    if (auto bad = check_package_name(name))
        throw Error("package name '" + name + "' (the stem of '" + run_path + "') " + *bad,
                    support::ErrorKind::usage);
    return name;
}

PackResult pack(const PackOptions& options) {
    PackOptions o = options;
    support::NullProgress no_progress;
    if (o.progress == nullptr)
        o.progress = &no_progress;
    check_labels(o);
    Manifest m;
    m.name = o.name.empty() ? package_name_from_path(o.output) : o.name;
    if (!o.name.empty()) {
        if (!support::base_name(o.output).ends_with(".run"))
            throw Error("output '" + o.output + "' must be a file name ending in .run",
                        support::ErrorKind::usage);
        if (auto bad = check_package_name(o.name))
            throw Error("--name '" + o.name + "' " + *bad, support::ErrorKind::usage);
    }
    m.version = o.version;
    m.npu_arch = o.npu_arch;
    m.soc_version = o.soc_version;
    m.toolchain = toolchain_string();
    std::optional<Key> key;
    if (o.sign_key)
        key = Key::load_private(*o.sign_key);

    // 1. Scan and hash the tree; refuse everything the installer would refuse.
    auto src = scan_source_tree(o.source_dir, k_generated);
    hash_source_files(o.source_dir, src);
    // 2. The manifest and the generated scripts; the package's own indexes must be ones the
    //    installer merges (binPath inside the package, staticList, bounded nesting).
    auto gen = build_manifest(o, m, src);
    for (const auto& e : m.entries)
        if (e.type == EntryType::file && is_index_path(e.path)) {
            std::string path = o.source_dir + "/" + e.path;
            parse_package_index(support::read_file(path), path, m);
        }
    // 3. The payload, after room for the stub, into a temporary file beside the output.
    StubHeader h{k_run_format,
                 m.name,
                 m.version,
                 m.npu_arch,
                 m.soc_version,
                 m.toolchain,
                 o.compression,
                 m.entries.size(),
                 m.unpacked_size(),
                 0,
                 0,
                 {},
                 key ? trailer_size() : 0,
                 m.find("install.sh")->sha256,
                 m.find("uninstall.sh")->sha256};
    support::AtomicFile file(o.output, 0755);
    if (::lseek(file.fd(), static_cast<off_t>(stub_size(h)), SEEK_SET) < 0)
        throw support::io_error("cannot seek in", file.temp_path(), errno);
    PayloadOutput out{file.fd(), file.temp_path(), {}, 0, nullptr};
    if (o.compression == Compression::gzip)
        out.gzip = std::make_unique<ParallelGzip>(
            o.level == 0 ? 6 : o.level, [&out](std::span<const std::uint8_t> b) { out.emit(b); });
    write_payload(o, m, src, gen, out);
    // 4. The stub, now that the payload's size and digest are known.
    h.payload_size = out.size;
    h.payload_sha256 = support::digest_hex(out.hash.finish());
    std::string stub = render_stub(h);
    h.payload_offset = stub.size();
    if (::pwrite(file.fd(), stub.data(), stub.size(), 0) != static_cast<ssize_t>(stub.size()))
        throw support::io_error("cannot write the stub of", file.temp_path(), errno);
    // 5. The signature over every byte before the trailer.
    PackResult result{h, std::nullopt};
    if (key) {
        auto digest = hash_prefix(file.fd(), h.payload_offset + h.payload_size, file.temp_path());
        Trailer t{key->key_id(), key->sign(signed_message(digest))};
        if (::lseek(file.fd(), 0, SEEK_END) < 0)
            throw support::io_error("cannot seek in", file.temp_path(), errno);
        file.write(render_trailer(t));
        result.key_id = t.key_id;
    }
    // 6. Into place.
    file.commit();
    return result;
}

} // namespace skforge::package
