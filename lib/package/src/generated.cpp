// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/generated.hpp"

#include "skforge/package/index_rules.hpp"
#include "skforge/package/index_text.hpp"
#include "skforge/package/template.hpp"
#include "skforge/support/error.hpp"
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
// version.info's entry is taken as its rendering `version_info` gives it, as in entry_lines: the
// scripts depend only on what the manifest says of the packed files.
std::string blanked_manifest_sha256(const Manifest& m, const std::string& version_info) {
    Manifest blanked = m;
    for (auto& e : blanked.entries)
        if (e.type == EntryType::file && (e.path == "install.sh" || e.path == "uninstall.sh")) {
            e.sha256.clear();
            e.size = 0;
        } else if (e.type == EntryType::file && e.path == "version.info") {
            e.sha256 = support::sha256_hex(version_info);
            e.size = version_info.size();
        }
    return support::sha256_hex(manifest_to_json(blanked));
}

// install.sh's skf_record_socs: "<soc dir>:<sha256>" for each section of `records`,
// space-separated.
std::string record_socs(std::string_view records) {
    std::string out;
    std::size_t at = 0;
    while (at < records.size()) {
        std::size_t end = records.find('\n', at);
        if (end == std::string_view::npos)
            end = records.size();
        std::string_view line = records.substr(at, end - at);
        if (!line.empty() && line.front() == k_records_section) {
            std::string_view soc = line.substr(1, line.find('\t') - 1);
            std::string_view sha = line.substr(line.find('\t') + 1);
            out += (out.empty() ? "" : " ") + std::string(soc) + ":" + std::string(sha);
        }
        at = end + 1;
    }
    return out;
}

// `text` to stand between single quotes in sh.
std::string single_quoted_body(const std::string& text) {
    std::string out;
    for (char c : text)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out;
}

} // namespace

std::string index_records(const Manifest& m, const IndexTexts& texts) {
    std::string out;
    for (const auto& e : m.entries) {
        // Only what the scripts' feed reads (fallback-lib.sh.in, skf_index_soc_glob) and
        // skinstall merges: config/<soc dir>/binary_info_config.json with a SoC directory name
        // of [a-z0-9_-] (check_soc_dir_name), an index skinstall accepts.
        if (e.type != EntryType::file || !is_index_path(e.path))
            continue;
        std::string soc = e.path.substr(7, e.path.find('/', 7) - 7);
        auto it = texts.find(e.path);
        if (it == texts.end())
            continue;
        try {
            parse_package_index(it->second, e.path, m);
        } catch (const support::Error&) {
            continue; // the scripts read it themselves and refuse it in skinstall's words
        }
        out +=
            std::string(1, k_records_section) + soc + "\t" + support::sha256_hex(it->second) + "\n";
        for (const auto& [op, entries] : scan_index_text(it->second))
            for (const auto& entry : entries)
                out += op + "\t" + entry.key + "\t" + entry.text + "\n";
    }
    if (!out.empty())
        out.pop_back();
    return out;
}

std::optional<std::string> index_records_problem(const Manifest& m, const IndexTexts& texts,
                                                 const std::string& records) {
    if (index_records(m, texts) == records)
        return std::nullopt;
    return std::string("its install.sh's index records are not the entries of its index files "
                       "(config/<soc dir>/binary_info_config.json): its scripts are not the ones "
                       "skforge generates for it (edited after packing)");
}

std::optional<std::string> records_in_install_sh(std::string_view text) {
    static constexpr std::string_view begin = "\n    cat <<'SKF_RECORDS'\n";
    static constexpr std::string_view end = "\nSKF_RECORDS\n";
    auto b = text.find(begin);
    if (b == std::string_view::npos)
        return std::nullopt;
    b += begin.size();
    auto e = text.find(end, b);
    if (e == std::string_view::npos)
        return std::nullopt;
    return std::string(text.substr(b, e - b));
}

std::vector<GeneratedFile> render_generated_files(const Manifest& m, const std::string& records) {
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
        {"MANIFEST_BLANKED_SHA256", blanked_manifest_sha256(m, version_info)},
        {"INDEX_RECORDS", records},
        {"INDEX_RECORD_SOCS", record_socs(records)}};
    // The shared part writes ai_core's top-level files as skinstall does, so it has placeholders
    // too.
    values["FALLBACK_LIB"] = render_template(templates::k_fallback_lib_sh, values);
    return {{"install.sh", render_template(templates::k_install_sh, values), 0755},
            {"uninstall.sh", render_template(templates::k_uninstall_sh, values), 0755},
            {"version.info", std::move(version_info), 0644}};
}

std::vector<std::string> check_generated_files(const Manifest& m, const std::string& records) {
    std::vector<std::string> problems;
    for (const auto& g : render_generated_files(m, records)) {
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
