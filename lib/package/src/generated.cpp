// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/generated.hpp"

#include "skforge/package/template.hpp"
#include "skforge/support/sha256.hpp"

#include <algorithm>
#include <map>

namespace skforge::package {

namespace {

// One line per entry for the shell scripts: "<f|d> <mode> <sha256 or -> <path>". Paths hold no
// control character, so a line is an entry. "-" marks a directory or one of the two scripts,
// whose digests cannot be embedded in themselves; version.info's digest is its rendering's, so
// the lines depend only on what the manifest says of the packed files.
std::string entry_lines(const std::vector<ManifestEntry>& entries, const std::string& version_info,
                        bool reversed) {
    std::vector<std::string> lines;
    for (const auto& e : entries) {
        std::string digest = e.sha256;
        if (e.type != EntryType::file || e.path == "install.sh" || e.path == "uninstall.sh")
            digest = "-";
        else if (e.path == "version.info")
            digest = support::sha256_hex(version_info);
        lines.push_back(std::string(e.type == EntryType::file ? "f " : "d ") +
                        (e.mode == 0755 ? "0755 " : "0644 ") + digest + " " + e.path);
    }
    if (reversed)
        std::reverse(lines.begin(), lines.end());
    std::string out;
    for (const auto& l : lines)
        out += l + "\n";
    if (!out.empty())
        out.pop_back();
    return out;
}

// The SHA-256 of `m`'s manifest.json with the two scripts' own digests and sizes blanked
// ("sha256": "", "size": 0): the scripts cannot embed the manifest's digest, which lists theirs,
// but they embed this one, and skf_manifest_packed (fallback-lib.sh.in) blanks the same two
// values with one sed and compares. A manifest that matches is skforge's own rendering but for
// those two values, so it needs no JSON check (share/doc/installer.md, "The package's own
// manifest").
std::string blanked_manifest_sha256(const Manifest& m) {
    Manifest blanked = m;
    for (auto& e : blanked.entries)
        if (e.type == EntryType::file && (e.path == "install.sh" || e.path == "uninstall.sh")) {
            e.sha256.clear();
            e.size = 0;
        }
    return support::sha256_hex(manifest_to_json(blanked));
}

// `text` to stand between single quotes in sh.
std::string single_quoted_body(const std::string& text) {
    std::string out;
    for (char c : text)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out;
}

} // namespace

std::vector<GeneratedFile> render_generated_files(const Manifest& m) {
    std::string version_info = "Version=" + m.version + "\npackage_name=" + m.name +
                               "\nnpu_arch=" + m.npu_arch + "\nsoc_version=" + m.soc_version +
                               "\ntoolchain=" + m.toolchain + "\n" +
                               (m.cann ? stamp_version_info(*m.cann) : std::string());
    std::map<std::string, std::string> values = {
        {"NAME", m.name},
        {"VERSION", m.version},
        {"ENTRIES", entry_lines(m.entries, version_info, false)},
        {"ENTRIES_REVERSED", entry_lines(m.entries, version_info, true)},
        {"TOOLCHAIN", single_quoted_body(m.toolchain)},
        // validated: letters, digits and '.+-' only, so they stand in single quotes as they are
        {"CANN_VERSION", m.cann ? m.cann->version : std::string()},
        {"CANN_LINE", m.cann ? m.cann->line() : std::string()},
        {"UNINSTALL_ALL", std::string(templates::k_uninstall_all_sh)},
        {"MANIFEST_BLANKED_SHA256", blanked_manifest_sha256(m)}};
    // The shared part writes ai_core's top-level files as skinstall does, so it has placeholders
    // too.
    values["FALLBACK_LIB"] = render_template(templates::k_fallback_lib_sh, values);
    return {{"install.sh", render_template(templates::k_install_sh, values), 0755},
            {"uninstall.sh", render_template(templates::k_uninstall_sh, values), 0755},
            {"version.info", std::move(version_info), 0644}};
}

std::vector<std::string> check_generated_files(const Manifest& m) {
    std::vector<std::string> problems;
    for (const auto& g : render_generated_files(m)) {
        const ManifestEntry* e = m.find(g.path);
        if (e == nullptr || e->type != EntryType::file) {
            problems.push_back(g.path + " is missing");
            continue;
        }
        if (e->mode != g.mode || e->size != g.text.size() ||
            e->sha256 != support::sha256_hex(g.text))
            problems.push_back(g.path +
                               " differs from the script skforge generates for this package "
                               "(it was edited after packing)");
    }
    return problems;
}

} // namespace skforge::package
