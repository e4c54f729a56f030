// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/query.hpp"

#include "skforge/install/history.hpp"
#include "skforge/install/index.hpp"
#include "skforge/package/json_text.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/hex.hpp"
#include "skforge/support/parallel.hpp"
#include "skforge/support/printable.hpp"
#include "skforge/support/sha256.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <deque>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

namespace skforge::install {

using nlohmann::json;
using package::EntryType;
using package::Manifest;
using package::ManifestEntry;
using support::Error;

std::string_view problem_name(ProblemKind kind) {
    switch (kind) {
    case ProblemKind::missing:
        return "missing";
    case ProblemKind::type:
        return "changed type";
    case ProblemKind::mode:
        return "changed mode";
    case ProblemKind::size:
        return "changed size";
    case ProblemKind::digest:
        return "changed content";
    case ProblemKind::extra:
        return "not installed by this package";
    }
    return "unknown";
}

std::optional<std::string> installed_manifest_digest(const Dir& package_dir) {
    auto text = read_file_at(package_dir, std::string(package::k_manifest_path));
    if (!text)
        return std::nullopt;
    return support::sha256_hex(*text);
}

namespace {

// The manifests this process parsed last, by their text: one command reads a package's
// manifest two or three times (classify, check, remove), and parsing the JSON of 4,079 entries
// was a quarter of an uninstall's time where reading and comparing its bytes costs nearly
// nothing. The same bytes parse to the same manifest.
class ManifestCache {
  public:
    std::optional<Manifest> find(const std::string& text) {
        std::lock_guard lock(m_mutex);
        for (const auto& [t, m] : m_items)
            if (t == text)
                return m;
        return std::nullopt;
    }
    void keep(std::string text, const Manifest& m) {
        std::lock_guard lock(m_mutex);
        if (m_items.size() == k_items)
            m_items.pop_front();
        m_items.emplace_back(std::move(text), m);
    }

  private:
    static constexpr std::size_t k_items = 4;
    std::mutex m_mutex;
    std::deque<std::pair<std::string, Manifest>> m_items;
};

ManifestCache& manifest_cache() {
    static ManifestCache cache;
    return cache;
}

} // namespace

Manifest parse_manifest_cached(const std::string& text, const std::string& where) {
    if (auto m = manifest_cache().find(text))
        return *m;
    auto m = package::parse_manifest(text, where);
    manifest_cache().keep(text, m);
    return m;
}

std::optional<Manifest> read_installed_manifest(const InstallTree& tree, const std::string& name) {
    auto dir = open_dir_beneath(tree.ai_core(), name);
    if (!dir)
        return std::nullopt;
    auto text = read_file_at(*dir, std::string(package::k_manifest_path));
    if (!text)
        throw Error("'" + dir->path + "' has no manifest.json: it was not installed by skforge");
    auto m = parse_manifest_cached(*text, dir->path + "/manifest.json");
    if (m.name != name)
        throw Error("'" + dir->path + "/manifest.json' names package '" + m.name + "'");
    return m;
}

namespace {

// The stamps of the files as staged (the install record's "file_stamps"), trusted only when the
// stamp's ctime is older than the record's own: a file changed in the same clock tick as the
// record was written could keep its stamp, so it is hashed.
std::map<std::string, std::string> staged_stamps(const Dir& pkg) {
    std::map<std::string, std::string> out;
    try {
        auto st = stat_at(pkg, k_install_record);
        auto text = read_file_at(pkg, k_install_record);
        json j = text && st ? package::parse_json_quiet(*text) : json();
        if (!j.is_object() || !j.contains("file_stamps") || !j["file_stamps"].is_object())
            return out;
        for (const auto& [path, stamp] : j["file_stamps"].items()) {
            std::uint64_t ino = 0, size = 0, ms = 0, mns = 0, cs = 0, cns = 0;
            if (!stamp.is_string() ||
                std::sscanf(stamp.get<std::string>().c_str(), "%lu %lu %lu.%lu %lu.%lu", &ino,
                            &size, &ms, &mns, &cs, &cns) != 6)
                continue;
            auto rs = static_cast<std::uint64_t>(st->st_ctim.tv_sec);
            auto rns = static_cast<std::uint64_t>(st->st_ctim.tv_nsec);
            if (cs < rs || (cs == rs && cns < rns))
                out.emplace(path, stamp.get<std::string>());
        }
    } catch (const Error&) {
        out.clear(); // an unreadable record: every file is hashed
    }
    return out;
}

// Checks one manifest entry through handles; returns the problem, if any. A file whose stamp is
// `trusted` (the one it was staged with) is not hashed.
std::optional<Problem> check_entry(const Dir& pkg, const ManifestEntry& e, const Modes& modes,
                                   std::vector<std::uint8_t>& buf, const std::string* trusted) {
    support::UniqueFd fd;
    try {
        fd = open_beneath(pkg, e.path, O_RDONLY | O_NONBLOCK);
    } catch (const Error& err) {
        return Problem{e.path, ProblemKind::type, err.what()};
    }
    if (!fd)
        return Problem{e.path, ProblemKind::missing, ""};
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        return Problem{e.path, ProblemKind::type, support::errno_text(errno)};
    bool want_dir = e.type == EntryType::directory;
    if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
        return Problem{e.path, ProblemKind::type,
                       std::string("expected a ") + (want_dir ? "directory" : "regular file")};
    mode_t want = modes.entry(want_dir, e.mode);
    if ((st.st_mode & 07777) != want)
        return Problem{e.path, ProblemKind::mode,
                       package::format_mode(st.st_mode) + ", expected " +
                           package::format_mode(want)};
    if (want_dir)
        return std::nullopt;
    if (static_cast<std::uint64_t>(st.st_size) != e.size)
        return Problem{e.path, ProblemKind::size,
                       std::to_string(st.st_size) + " bytes, expected " + std::to_string(e.size)};
    if (trusted && *trusted == file_stamp(st))
        return std::nullopt;
    support::Sha256 h;
    std::uint64_t off = 0;
    while (std::size_t n = support::pread_full(fd.get(), buf, off, e.path)) {
        h.update(std::span<const std::uint8_t>(buf.data(), n));
        off += n;
    }
    if (support::digest_hex(h.finish()) != e.sha256)
        return Problem{e.path, ProblemKind::digest, "SHA-256 differs"};
    return std::nullopt;
}

// check_entry's answer for a file that keeps the stamp it was staged with, from one fstatat in
// its directory (opened beneath the package, following no link, and kept for the next file of
// the same directory) instead of an open, an fstat and a close: an uninstall checks each of the
// package's 4,079 files. False whenever anything differs, for check_entry to say what.
class StampCheck {
  public:
    bool holds(const Dir& pkg, const ManifestEntry& e, const Modes& modes,
               const std::string& trusted) {
        if (e.type != EntryType::file)
            return false;
        auto slash = e.path.rfind('/');
        if (slash == std::string::npos)
            return false; // a file at the top: rare, check_entry does it
        const Dir* dir = nullptr;
        try {
            dir = m_parent.open(pkg, e.path.substr(0, slash));
        } catch (const Error&) {
            return false;
        }
        if (!dir)
            return false;
        std::string base = e.path.substr(slash + 1);
        struct stat st {};
        return ::fstatat(dir->fd.get(), base.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               S_ISREG(st.st_mode) && (st.st_mode & 07777) == modes.entry(false, e.mode) &&
               static_cast<std::uint64_t>(st.st_size) == e.size && file_stamp(st) == trusted;
    }

  private:
    ParentDir m_parent;
};

// The modes the package directory says it was installed with; an unknown mode is a problem
// and the entries are then judged by a root install's modes.
Modes package_modes(const Dir& pkg, std::vector<Problem>& problems) {
    struct stat st {};
    if (::fstat(pkg.fd.get(), &st) != 0)
        throw support::io_error("cannot stat", pkg.path, errno);
    if (auto modes = Modes::of_package_dir(st.st_mode))
        return *modes;
    problems.push_back({".", ProblemKind::mode,
                        package::format_mode(st.st_mode) +
                            ", expected 0755 (installed by root), 0770 or 0775 (by a run user)"});
    return Modes{};
}

void find_extra(const Dir& dir, const std::string& rel, const Manifest& m,
                std::vector<Problem>& out) {
    for (const auto& name : list_dir(dir)) {
        std::string path = rel.empty() ? name : rel + "/" + name;
        if (rel.empty() && (name == package::k_manifest_path || name == k_install_record))
            continue;
        const ManifestEntry* e = m.find(path);
        if (e == nullptr) {
            out.push_back({path, ProblemKind::extra, ""});
            continue;
        }
        // Only a listed directory is looked into (a stat for it alone: a package of 4,079 files
        // has 65 directories).
        if (e->type != EntryType::directory)
            continue;
        auto st = stat_at(dir, name);
        if (st && S_ISDIR(st->st_mode))
            if (auto sub = open_dir_beneath(dir, name))
                find_extra(*sub, path, m, out);
    }
}

} // namespace

namespace {

constexpr const char* k_vendor_shape_dir = "shape_info";

std::string leftover_detail(const std::string& name) {
    if (is_temporary_name(name))
        return "a temporary file left by a killed process; 'skinstall recover' removes it";
    return "not a file skforge keeps here";
}

void check_config(const Dir& config, std::vector<Problem>& out) {
    for (const auto& name : list_dir(config)) {
        auto st = stat_at(config, name);
        if ((name == k_lock_file || name == k_record_file) && st && S_ISREG(st->st_mode))
            continue;
        if (!st || !S_ISDIR(st->st_mode) || package::check_soc_dir_name(name)) {
            out.push_back({std::string(k_config_dir) + "/" + name, ProblemKind::extra,
                           leftover_detail(name)});
            continue;
        }
        auto soc = open_dir_beneath(config, name);
        for (const auto& file : list_dir(*soc)) {
            auto fst = stat_at(*soc, file);
            if (file == k_index_file && fst && S_ISREG(fst->st_mode))
                continue;
            // CANN's installer keeps per-operator shape files here (vendor_tree in
            // test/cli/standalone_index.bats); they are not skforge's to check.
            if (file == k_vendor_shape_dir && fst && S_ISDIR(fst->st_mode))
                continue;
            out.push_back({std::string(k_config_dir) + "/" + name + "/" + file, ProblemKind::extra,
                           leftover_detail(file)});
        }
    }
}

// log/ holds the history and its rotated predecessor, nothing else.
void check_log(const Dir& log, std::vector<Problem>& out) {
    for (const auto& name : list_dir(log)) {
        auto st = stat_at(log, name);
        if ((name == k_history_file || name == k_history_old) && st && S_ISREG(st->st_mode))
            continue;
        out.push_back(
            {std::string(k_log_dir) + "/" + name, ProblemKind::extra, leftover_detail(name)});
    }
}

// What a package-named directory config.ini does not list is.
std::string unlisted_detail(const InstallTree& tree, const std::string& name) {
    auto pd = classify_package_dir(tree, name, false);
    if (pd.state == DirState::left_behind || pd.state == DirState::damaged)
        return pd.why;
    return "a directory config.ini does not list (not an installed package)";
}

} // namespace

std::vector<Problem> check_tree(const InstallTree& tree) {
    std::vector<Problem> out;
    auto order = tree.install_order();
    const Dir& ai = tree.ai_core();
    for (const auto& name : list_dir(ai)) {
        auto st = stat_at(ai, name);
        bool reg = st && S_ISREG(st->st_mode);
        bool dir = st && S_ISDIR(st->st_mode);
        if ((reg && (name == k_config_ini || name == "uninstall.sh" || name == "version.info")) ||
            (dir && std::find(order.begin(), order.end(), name) != order.end()))
            continue;
        if (dir && name == k_config_dir) {
            check_config(*open_dir_beneath(ai, name), out);
            for (const auto& soc : stale_global_indexes(tree))
                out.push_back({std::string(k_config_dir) + "/" + soc + "/" + k_index_file,
                               ProblemKind::digest,
                               "not the merge of the installed packages' indexes in install "
                               "order; 'skinstall recover' rebuilds it"});
            continue;
        }
        if (dir && name == k_log_dir) {
            check_log(*open_dir_beneath(ai, name), out);
            continue;
        }
        std::string detail = leftover_detail(name);
        if (name == k_journal)
            detail = "an interrupted transaction; 'skinstall recover' finishes or rolls it back";
        else if (name.starts_with(k_stage_prefix))
            detail = name.find(".old.") != std::string::npos
                         ? "the previous version left by a killed shell upgrade; 'skinstall "
                           "recover' puts it back when the package is missing, else removes it"
                         : "a stage left by a killed install; 'skinstall recover' removes it";
        else if (dir && !package::check_package_name(name))
            detail = unlisted_detail(tree, name);
        out.push_back({name, ProblemKind::extra, detail});
    }
    return out;
}

std::optional<std::string> owner_of(const InstallTree& tree, const std::string& rel) {
    auto slash = rel.find('/');
    std::string first = rel.substr(0, slash);
    std::string rest = slash == std::string::npos ? "" : rel.substr(slash + 1);
    if (first == k_config_dir || first == k_log_dir ||
        (rest.empty() && (first == k_config_ini || first == "uninstall.sh" ||
                          first == "version.info" || first == k_journal)))
        return "";
    if (package::check_package_name(first))
        return std::nullopt;
    auto pd = classify_package_dir(tree, first, false);
    if (pd.state != DirState::installed)
        return std::nullopt;
    if (rest.empty() || rest == package::k_manifest_path || rest == k_install_record ||
        pd.manifest->find(rest) != nullptr)
        return first;
    return std::nullopt;
}

void require_package_name(const std::string& name) {
    if (auto why = package::check_package_name(name))
        throw Error("'" + support::printable(name) + "' is not a package name: it " + *why +
                        " (a package name, like a manifest's, is one directory name under ai_core/ "
                        "of letters, digits and '._+-', starting with a letter, digit or '_')",
                    support::ErrorKind::usage);
}

std::string repair_hint(const std::string& name) {
    return "restore it with 'skinstall repair " + name + " --from " + name +
           ".run' (the same package and version), or remove it with 'skinstall uninstall --force " +
           name + "'";
}

namespace {

// The description of a directory an uninstall left behind, from its marker.
std::string left_behind_why(const Dir& dir, const std::string& name, const std::string& text) {
    json j = package::parse_json_quiet(text);
    std::string version = j.is_object() ? j.value("version", "") : "";
    std::string why = "'" + dir.path + "' is what the uninstall of " + name +
                      (version.empty() ? "" : " " + version) +
                      " left behind: it holds files the package did not install";
    if (j.is_object() && j.contains("kept") && j["kept"].is_array()) {
        std::string kept;
        for (const auto& k : j["kept"])
            if (k.is_string())
                kept += (kept.empty() ? "" : ", ") + k.get<std::string>();
        if (!kept.empty())
            why += " (" + kept + ")";
    }
    return why + "; move away what you still need, then 'skinstall uninstall --force " + name +
           "' removes the rest";
}

// Whether `dir` is one of skforge's: its manifest, skinstall's record, or scripts skforge rendered.
bool skforge_marked(const Dir& dir) {
    if (stat_at(dir, std::string(package::k_manifest_path)) || stat_at(dir, k_install_record))
        return true;
    for (const char* script : {"uninstall.sh", "install.sh"}) {
        auto st = stat_at(dir, script);
        if (!st || !S_ISREG(st->st_mode))
            continue;
        auto text = read_file_at(dir, script, 1 << 20);
        if (text && text->substr(0, 512).find("generated by skforge") != std::string::npos)
            return true;
    }
    return false;
}

// The soc directories under `dir`/config/ that hold a binary_info_config.json: the layout of
// CANN's op_compiler package (installer.md, "Trees shared with CANN's own packages").
std::vector<std::string> vendor_socs(const Dir& dir) {
    std::vector<std::string> socs;
    auto st = stat_at(dir, k_config_dir);
    if (!st || !S_ISDIR(st->st_mode))
        return socs;
    auto config = open_dir_beneath(dir, k_config_dir);
    for (const auto& soc : list_dir(*config)) {
        auto sst = stat_at(*config, soc);
        if (!sst || !S_ISDIR(sst->st_mode) || package::check_soc_dir_name(soc))
            continue;
        auto index = stat_at(*open_dir_beneath(*config, soc), k_index_file);
        if (index && S_ISREG(index->st_mode))
            socs.push_back(soc);
    }
    return socs;
}

bool only_install_record(const Dir& dir) {
    auto names = list_dir(dir);
    return names.size() == 1 && names[0] == k_install_record;
}

} // namespace

PackageDir classify_package_dir(const InstallTree& tree, const std::string& name, bool listed) {
    require_package_name(name);
    PackageDir out;
    std::optional<Dir> dir;
    try {
        dir = open_dir_beneath(tree.ai_core(), name);
        if (!dir)
            return out;
        if (auto marker = read_file_at(*dir, k_left_behind)) {
            out.state = DirState::left_behind;
            out.why = left_behind_why(*dir, name, *marker);
            return out;
        }
        if (!listed && only_install_record(*dir)) {
            // The package's own uninstall.sh (the shell fallback) removes the files it lists and
            // does not know skinstall's record.
            out.state = DirState::left_behind;
            out.why = "'" + dir->path + "' holds only skinstall's install record (" +
                      k_install_record + "), left by the package's own uninstall.sh; " +
                      "'skinstall uninstall --force " + name + "' removes it";
            return out;
        }
        if (!skforge_marked(*dir)) {
            if (auto socs = vendor_socs(*dir); !socs.empty()) {
                out.state = DirState::vendor;
                out.why = "'" + dir->path + "' was laid out by CANN's own installer (" +
                          k_config_dir + "/" + socs.front() + "/" + k_index_file +
                          " and no skforge manifest): skforge keeps its kernels in the global "
                          "index and never removes or replaces it; its own uninstaller removes it";
                return out;
            }
        }
        out.manifest = read_installed_manifest(tree, name);
        out.state = DirState::installed;
    } catch (const Error& e) {
        bool has_manifest = false;
        try {
            has_manifest = dir && stat_at(*dir, std::string(package::k_manifest_path));
        } catch (const Error&) {
        }
        out.manifest.reset();
        out.state = listed || has_manifest ? DirState::damaged : DirState::foreign;
        out.why = e.what();
    }
    return out;
}

InstallRecord read_install_record(const Dir& package_dir) {
    InstallRecord r;
    std::optional<std::string> text;
    try {
        text = read_file_at(package_dir, k_install_record);
    } catch (const Error&) {
        return r;
    }
    std::string stamp =
        text ? std::string(k_install_record) : std::string(package::k_manifest_path);
    if (auto st = stat_at(package_dir, stamp))
        r.installed_at = st->st_mtim.tv_sec;
    if (!text)
        return r;
    json j = package::parse_json_quiet(*text);
    if (!j.is_object())
        return r;
    auto field = [&](const char* key) {
        return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
    };
    r.installed_by = field("installed_by");
    r.from = field("from");
    if (auto bytes = support::from_hex(field("from_hex")); bytes && !bytes->empty())
        r.from.assign(bytes->begin(), bytes->end()); // a path that is not UTF-8, exactly
    r.signature = field("signature");
    r.signer_key_id = field("signer_key_id");
    return r;
}

std::string file_stamp(const struct stat& st) {
    return std::to_string(st.st_ino) + " " + std::to_string(st.st_size) + " " +
           std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + " " +
           std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec);
}

InstalledPackage check_installed(const InstallTree& tree, const std::string& name,
                                 support::Progress* progress, Hash hash) {
    auto m = read_installed_manifest(tree, name);
    if (!m)
        throw Error(name + " is not installed in '" + tree.shown() + "'");
    auto dir = open_dir_beneath(tree.ai_core(), name);
    InstalledPackage out{name, {}, {}};
    auto modes = package_modes(*dir, out.problems);
    auto stamps =
        hash == Hash::when_changed ? staged_stamps(*dir) : std::map<std::string, std::string>{};
    const auto& entries = m->entries;
    std::vector<std::optional<Problem>> found(entries.size());
    std::atomic<std::size_t> next{0};
    std::atomic<std::uint64_t> done{0};
    if (progress)
        progress->begin("verifying " + name, m->unpacked_size());
    support::on_threads(support::cores(), [&](unsigned thread) {
        std::vector<std::uint8_t> buf(1u << 20);
        StampCheck quick;
        for (std::size_t i = next++; i < entries.size(); i = next++) {
            auto trusted = stamps.find(entries[i].path);
            if (trusted != stamps.end() && quick.holds(*dir, entries[i], modes, trusted->second))
                found[i] = std::nullopt;
            else
                found[i] = check_entry(*dir, entries[i], modes, buf,
                                       trusted == stamps.end() ? nullptr : &trusted->second);
            done += entries[i].size;
            if (progress && thread == 0) // one thread draws, so the bar needs no lock
                progress->update(done);
        }
    });
    if (progress) {
        progress->update(m->unpacked_size());
        progress->end();
    }
    out.manifest = std::move(*m);
    for (auto& p : found)
        if (p)
            out.problems.push_back(std::move(*p));
    find_extra(*dir, "", out.manifest, out.problems);
    return out;
}

// PATH as given (absolute under the tree, or relative to ai_core/ as an index's binPath), as a
// path relative to ai_core/; throws a usage error for a path outside the tree.
std::string tree_relative(const InstallTree& tree, const std::string& given_root,
                          std::string path) {
    for (const auto& prefix :
         {tree.shown() + "/", tree.resolved_root() + "/opp/static_kernel/ai_core/"})
        if (path.starts_with(prefix)) {
            path = path.substr(prefix.size());
            break;
        }
    while (path.ends_with("/"))
        path.pop_back();
    if (path.starts_with("/") || package::check_entry_path(path))
        throw Error("'" + path + "' is not a path under '" + given_root +
                        "/opp/static_kernel/ai_core' (give it in full, or relative to ai_core/ "
                        "as an index's binPath is)",
                    support::ErrorKind::usage);
    return path;
}

} // namespace skforge::install
