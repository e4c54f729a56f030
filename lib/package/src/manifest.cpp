// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/manifest.hpp"
#include "skforge/support/json.hpp"

#include "skforge/package/json_text.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/hex.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

namespace skforge::package {

using nlohmann::json;
using support::Error;

std::uint64_t Manifest::unpacked_size() const {
    std::uint64_t total = 0;
    for (const auto& e : entries)
        total += e.size;
    return total;
}

const ManifestEntry* Manifest::find(std::string_view path) const {
    auto it =
        std::lower_bound(entries.begin(), entries.end(), path,
                         [](const ManifestEntry& e, std::string_view p) { return e.path < p; });
    return it != entries.end() && it->path == path ? &*it : nullptr;
}

std::string_view entry_type_name(EntryType type) {
    return type == EntryType::file ? "file" : "directory";
}

namespace {

void validate_entry(const ManifestEntry& e, const std::set<std::string_view>& dirs,
                    std::vector<std::string>& errors) {
    auto at = "entry '" + e.path + "' ";
    if (auto bad = check_entry_path(e.path))
        errors.push_back(at + "path " + *bad);
    if (e.path == k_manifest_path)
        errors.push_back(at + "uses the manifest's own reserved name");
    if (!is_allowed_mode(e.mode))
        errors.push_back(at + "has a mode other than 0644 or 0755");
    if (e.type == EntryType::file && !support::is_lower_hex(e.sha256, 64))
        errors.push_back(at + "needs a SHA-256 of 64 lower-case hex digits");
    if (e.type == EntryType::directory && (e.size != 0 || !e.sha256.empty()))
        errors.push_back(at + "is a directory but has a size or digest");
    auto slash = e.path.rfind('/');
    if (slash != std::string::npos && !dirs.contains(std::string_view(e.path).substr(0, slash)))
        errors.push_back(at + "has a parent that is not listed as a directory before it");
}

} // namespace

std::vector<std::string> validate_manifest(const Manifest& m) {
    std::vector<std::string> errors;
    if (m.format != k_manifest_format)
        errors.push_back("format " + std::to_string(m.format) +
                         " is not supported (this skforge "
                         "reads format " +
                         std::to_string(k_manifest_format) + ")");
    if (auto bad = check_package_name(m.name))
        errors.push_back("name '" + m.name + "' " + *bad);
    if (auto bad = check_label(m.version, false))
        errors.push_back("version '" + m.version + "' " + *bad);
    if (auto bad = check_label(m.npu_arch, true))
        errors.push_back("npu_arch '" + m.npu_arch + "' " + *bad);
    if (auto bad = check_label(m.soc_version, true))
        errors.push_back("soc_version '" + m.soc_version + "' " + *bad);
    if (!support::is_lower_hex(m.inputs_digest, 64))
        errors.push_back("inputs_digest needs 64 lower-case hex digits");
    if (m.cann && !cann_line(m.cann->version))
        errors.push_back("cann.version '" + m.cann->version + "' is not a CANN version");
    std::set<std::string_view> dirs;
    const ManifestEntry* prev = nullptr;
    for (const auto& e : m.entries) {
        if (prev != nullptr && !(prev->path < e.path))
            errors.push_back("entry '" + e.path + "' is " +
                             (prev->path == e.path ? "listed twice" : "out of order"));
        validate_entry(e, dirs, errors);
        // config/<soc dir>/ is mirrored into the tree's config/, beside its lock file.
        if (e.path.starts_with("config/")) {
            std::string_view soc = std::string_view(e.path).substr(7);
            soc = soc.substr(0, soc.find('/'));
            if (auto bad = check_soc_dir_name(soc); bad && soc.size() + 7 == e.path.size())
                errors.push_back("SoC directory 'config/" + std::string(soc) + "' " + *bad);
        }
        if (e.type == EntryType::directory)
            dirs.insert(e.path);
        prev = &e;
    }
    return errors;
}

json manifest_entry_json(const ManifestEntry& e) {
    json f = {{"path", e.path},
              {"type", entry_type_name(e.type)},
              {"mode", e.mode == 0755 ? "0755" : "0644"}};
    if (e.type == EntryType::file) {
        f["size"] = e.size;
        f["sha256"] = e.sha256;
    }
    return f;
}

std::string manifest_to_json(const Manifest& m) {
    json files = json::array();
    for (const auto& e : m.entries)
        files.push_back(manifest_entry_json(e));
    json doc = {{"format", m.format},
                {"name", m.name},
                {"version", m.version},
                {"npu_arch", m.npu_arch},
                {"soc_version", m.soc_version},
                {"toolchain", m.toolchain},
                {"inputs_digest", m.inputs_digest},
                {"files", std::move(files)}};
    if (m.cann)
        doc["cann"] = stamp_json(*m.cann);
    return support::dump_json(doc, 2) + "\n";
}

namespace {

template <class T>
T field(const json& obj, const char* key, std::vector<std::string>& errors, const std::string& at) {
    auto it = obj.find(key);
    if (it == obj.end()) {
        errors.push_back(at + "lacks '" + key + "'");
        return T{};
    }
    try {
        return it->get<T>();
    } catch (const json::exception&) {
        errors.push_back(at + "has '" + key + "' of the wrong type");
        return T{};
    }
}

ManifestEntry parse_entry(const json& f, std::vector<std::string>& errors) {
    ManifestEntry e;
    if (!f.is_object()) {
        errors.push_back("a 'files' element is not an object");
        return e;
    }
    e.path = field<std::string>(f, "path", errors, "a file entry ");
    std::string at = "entry '" + e.path + "' ";
    auto type = field<std::string>(f, "type", errors, at);
    auto mode = field<std::string>(f, "mode", errors, at);
    if (type != "file" && type != "directory")
        errors.push_back(at + "has type '" + type + "' (only file and directory are allowed)");
    e.type = type == "directory" ? EntryType::directory : EntryType::file;
    if (mode != "0644" && mode != "0755")
        errors.push_back(at + "has mode '" + mode + "' (only 0644 and 0755 are allowed)");
    e.mode = mode == "0755" ? 0755 : 0644;
    if (e.type == EntryType::file) {
        e.size = field<std::uint64_t>(f, "size", errors, at);
        e.sha256 = field<std::string>(f, "sha256", errors, at);
    }
    return e;
}

} // namespace

Manifest parse_manifest(std::string_view json_text, std::string_view origin) {
    std::string head = std::string(origin) + ": invalid manifest: ";
    json doc;
    if (auto deep = check_json_depth(json_text))
        throw Error(head + "it " + *deep);
    try {
        doc = json::parse(json_text);
    } catch (const json::parse_error& e) {
        throw Error(head + e.what());
    }
    if (!doc.is_object())
        throw Error(head + "the top level is not an object");
    // A key written twice is read one way here (the last wins) and another by the scripts'
    // awk (the first), so neither takes it (installer.md, "What install checks").
    if (auto why = check_json_keys(json_text))
        throw Error(head + "it " + *why);
    std::vector<std::string> errors;
    Manifest m;
    m.format = field<int>(doc, "format", errors, "");
    m.name = field<std::string>(doc, "name", errors, "");
    m.version = field<std::string>(doc, "version", errors, "");
    m.npu_arch = field<std::string>(doc, "npu_arch", errors, "");
    m.soc_version = field<std::string>(doc, "soc_version", errors, "");
    m.toolchain = field<std::string>(doc, "toolchain", errors, "");
    m.inputs_digest = field<std::string>(doc, "inputs_digest", errors, "");
    if (auto cann = doc.find("cann"); cann != doc.end())
        m.cann = parse_stamp(*cann, errors);
    auto files = doc.find("files");
    if (files == doc.end() || !files->is_array())
        errors.push_back("lacks the 'files' array");
    else
        for (const auto& f : *files)
            m.entries.push_back(parse_entry(f, errors));
    if (errors.empty())
        errors = validate_manifest(m);
    if (!errors.empty()) {
        std::string msg = head + errors.front();
        for (std::size_t i = 1; i < errors.size(); ++i)
            msg += "; " + errors[i];
        throw Error(msg);
    }
    return m;
}

} // namespace skforge::package
