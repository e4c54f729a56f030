// SPDX-License-Identifier: Apache-2.0
#pragma once

// Builds .run files that skc pack would refuse to make (symlink entries, "../" paths, lying
// manifests), so the reader's and installer's refusals can be tested on real archives.
#include "skforge/package/compress.hpp"
#include "skforge/package/generated.hpp"
#include "skforge/package/index_rules.hpp"
#include "skforge/package/manifest.hpp"
#include "skforge/package/stub.hpp"
#include "skforge/support/sha256.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <archive.h>
#include <archive_entry.h>
#include <stdexcept>
#include <string>
#include <vector>

namespace skforge::test {

/// One raw tar entry.
struct RawEntry {
    std::string path;
    unsigned type = AE_IFREG; ///< AE_IFREG, AE_IFDIR, AE_IFLNK, AE_IFIFO, ...
    unsigned mode = 0644;
    std::string data;
    std::string link; ///< symlink target, or hardlink target when `hardlink`
    bool hardlink = false;
};

/// A manifest entry describing `data` as a regular file.
inline package::ManifestEntry file_entry(const std::string& path, const std::string& data,
                                         mode_t mode = 0644) {
    return {path, package::EntryType::file, mode, data.size(), support::sha256_hex(data)};
}

/// A manifest for package `name` with `entries` plus the scripts and version.info skforge
/// generates for it (so a crafted package is refused for what the test crafted, not for lacking
/// them); craft_run adds their data.
inline package::Manifest make_manifest(const std::string& name,
                                       std::vector<package::ManifestEntry> entries,
                                       const package::IndexTexts& index_texts = {}) {
    package::Manifest m;
    m.name = name;
    m.version = "1.0";
    m.toolchain = "skforge test";
    m.inputs_digest = std::string(64, '0');
    m.entries = std::move(entries);
    for (const char* p : package::k_generated_paths)
        m.entries.push_back({p, package::EntryType::file,
                             std::string_view(p) == "version.info" ? mode_t(0644) : mode_t(0755), 0,
                             std::string(64, '0')});
    std::stable_sort(m.entries.begin(), m.entries.end(),
                     [](const package::ManifestEntry& a, const package::ManifestEntry& b) {
                         return a.path < b.path;
                     });
    for (const auto& g : package::render_generated_files(m, package::index_records(m, index_texts)))
        for (auto& e : m.entries)
            if (e.path == g.path)
                e = file_entry(g.path, g.text, g.mode);
    return m;
}

/// Writes `<dir>/<name>.run`: the stub, a gzip tar of manifest_text followed by `entries`, and
/// nothing else. The header's counts come from `manifest`.
inline std::string craft_run(const std::string& dir, const package::Manifest& manifest,
                             const std::string& manifest_text,
                             const std::vector<RawEntry>& entries) {
    std::vector<std::uint8_t> tar;
    archive* a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    archive_write_set_options(a, "hdrcharset=BINARY"); // let invalid UTF-8 names through
    archive_write_open(
        a, &tar, nullptr,
        [](archive*, void* client, const void* buf, size_t len) -> la_ssize_t {
            auto* out = static_cast<std::vector<std::uint8_t>*>(client);
            auto* p = static_cast<const std::uint8_t*>(buf);
            out->insert(out->end(), p, p + len);
            return static_cast<la_ssize_t>(len);
        },
        nullptr);
    // install.sh's index records, from the index files among `entries`, as skc pack reads them.
    package::IndexTexts index_texts;
    for (const auto& r : entries)
        if (r.type == AE_IFREG && !r.hardlink && package::is_index_path(r.path))
            index_texts.emplace(r.path, r.data);
    std::string records = package::index_records(manifest, index_texts);
    std::vector<RawEntry> all = {{"manifest.json", AE_IFREG, 0644, manifest_text, "", false}};
    all.insert(all.end(), entries.begin(), entries.end());
    std::string script_digest[2];
    for (const auto& g : package::render_generated_files(manifest, records)) {
        const auto* e = manifest.find(g.path);
        if (e == nullptr || e->sha256 != support::sha256_hex(g.text))
            continue;
        if (g.path != "version.info")
            script_digest[g.path == "install.sh" ? 0 : 1] = e->sha256;
        bool given = false;
        for (const auto& r : entries)
            given = given || r.path == g.path;
        if (!given)
            all.push_back({g.path, AE_IFREG, static_cast<unsigned>(g.mode), g.text, "", false});
    }
    for (const auto& r : all) {
        archive_entry* e = archive_entry_new();
        archive_entry_copy_pathname(e, r.path.c_str());
        if (r.hardlink) {
            archive_entry_copy_hardlink(e, r.link.c_str());
        } else {
            archive_entry_set_filetype(e, r.type);
            if (r.type == AE_IFLNK)
                archive_entry_copy_symlink(e, r.link.c_str());
        }
        archive_entry_set_perm(e, r.mode);
        archive_entry_set_size(
            e, r.type == AE_IFREG && !r.hardlink ? static_cast<la_int64_t>(r.data.size()) : 0);
        if (archive_write_header(a, e) < ARCHIVE_WARN) {
            std::string why = archive_error_string(a);
            archive_entry_free(e);
            archive_write_free(a);
            throw std::runtime_error(why);
        }
        if (!r.data.empty() && !r.hardlink)
            archive_write_data(a, r.data.data(), r.data.size());
        archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
    std::vector<std::uint8_t> gz = package::gzip_member(tar, 6);
    package::StubHeader h;
    h.name = manifest.name;
    h.version = manifest.version;
    h.toolchain = "skforge test";
    h.file_count = manifest.entries.size();
    h.unpacked_size = manifest.unpacked_size();
    h.payload_size = gz.size();
    support::Sha256 sha;
    sha.update(gz);
    h.payload_sha256 = support::digest_hex(sha.finish());
    h.install_sh_sha256 = script_digest[0];
    h.uninstall_sh_sha256 = script_digest[1];
    std::string path = dir + "/" + manifest.name + ".run";
    write_text(path, package::render_stub(h) + std::string(gz.begin(), gz.end()));
    return path;
}

} // namespace skforge::test
