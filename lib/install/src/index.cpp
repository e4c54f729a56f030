// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/index.hpp"

#include "skforge/install/index_record.hpp"
#include "skforge/install/query.hpp"
#include "skforge/package/index_rules.hpp"
#include "skforge/package/json_text.hpp"
#include "skforge/package/path_rules.hpp"
#include "skforge/package/template.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/sha256.hpp"

#include <algorithm>
#include <fcntl.h>
#include <functional>
#include <set>
#include <tuple>

namespace skforge::install {

using nlohmann::json;
using support::Error;

namespace {

// Calls fn(soc, text, where) for every config/<soc dir>/binary_info_config.json of a package.
template <class F> void for_each_index_file(const Dir& package_dir, F fn) {
    auto config = open_dir_beneath(package_dir, k_config_dir);
    if (!config)
        return;
    for (const auto& soc : list_dir(*config)) {
        auto st = stat_at(*config, soc);
        if (!st || !S_ISDIR(st->st_mode) || package::check_soc_dir_name(soc))
            continue;
        auto soc_dir = open_dir_beneath(*config, soc);
        auto text = soc_dir ? read_file_at(*soc_dir, k_index_file) : std::nullopt;
        if (text)
            fn(soc, *text, config->path + "/" + soc + "/" + k_index_file);
    }
}

} // namespace

PackageIndex read_package_index(const Dir& package_dir, const package::Manifest& manifest) {
    PackageIndex out;
    for_each_index_file(package_dir, [&](const std::string& soc, const std::string& text,
                                         const std::string& where) {
        package::parse_package_index(text, where, manifest);
        // What the scripts merge is only what the manifest vouches for; skinstall the same.
        const auto* e = manifest.find(std::string(k_config_dir) + "/" + soc + "/" + k_index_file);
        if (e == nullptr || e->sha256 != support::sha256_hex(text))
            throw Error("'" + where + "' is not the index the package was installed with (" +
                        (e == nullptr ? "its manifest does not list it"
                                      : "its SHA-256 differs from the manifest's") +
                        ")");
        out.emplace(soc, scan_index_text(text));
    });
    return out;
}

package::IndexTexts package_index_texts(const Dir& package_dir, const package::Manifest& manifest) {
    package::IndexTexts out;
    for_each_index_file(package_dir, [&](const std::string& soc, const std::string& text,
                                         const std::string&) {
        std::string path = std::string(k_config_dir) + "/" + soc + "/" + std::string(k_index_file);
        if (manifest.find(path) != nullptr)
            out.emplace(std::move(path), text);
    });
    return out;
}

PackageIndex read_foreign_index(const Dir& package_dir) {
    PackageIndex out;
    for_each_index_file(package_dir, [&](const std::string& soc, const std::string& text,
                                         const std::string& where) {
        if (!package::parse_json_limited(text, where).is_object())
            throw Error("'" + where + "' is not a JSON object of OpTypes");
        out.emplace(soc, scan_index_text(text));
    });
    return out;
}

std::map<std::string, std::string>
merge_indexes(const std::vector<std::pair<std::string, PackageIndex>>& packages) {
    std::map<std::string, std::vector<const SocIndex*>> by_soc;
    for (const auto& [name, index] : packages)
        for (const auto& [soc, doc] : index)
            by_soc[soc].push_back(&doc);
    std::map<std::string, std::string> global;
    for (const auto& [soc, in_order] : by_soc)
        global.emplace(soc, merge_and_render(in_order));
    return global;
}

namespace {

// ai_core's uninstall.sh and version.info for `order`: none when nothing is installed.
std::vector<std::pair<std::string, std::string>> top_files(const std::vector<std::string>& order) {
    if (order.empty())
        return {};
    return {{"uninstall.sh", std::string(package::templates::k_uninstall_all_sh)},
            {"version.info", "installer=skforge " SKFORGE_VERSION "\npackages=" +
                                 std::to_string(order.size()) + "\n"}};
}

void write_global_files(const InstallTree& tree, const std::vector<std::string>& order, Sync sync) {
    const Dir& ai = tree.ai_core();
    if (order.empty()) {
        unlink_at(ai, "uninstall.sh");
        unlink_at(ai, "version.info");
        return;
    }
    for (const auto& [name, text] : top_files(order))
        write_file_at(ai, name, text, tree.modes().file(name == "uninstall.sh" ? 0755 : 0644),
                      sync);
}

// The index of one installed package, or why it cannot contribute.
std::optional<PackageIndex> installed_index(const InstallTree& tree, const std::string& name,
                                            std::vector<std::string>& skipped) {
    try {
        auto dir = open_dir_beneath(tree.ai_core(), name);
        if (!dir)
            throw Error("config.ini lists it but '" + tree.shown() + "/" + name + "' is missing");
        // Laid out by another installer (CANN's own packages have no manifest.json): its
        // entries are kept as that installer wrote them.
        if (!stat_at(*dir, std::string(package::k_manifest_path)))
            return read_foreign_index(*dir);
        auto manifest = read_installed_manifest(tree, name);
        return read_package_index(*dir, *manifest);
    } catch (const Error& e) {
        // A tree from an older skforge: repairing from the same .run cannot help, a package
        // rebuilt by this skforge can.
        std::string why = e.what();
        std::string hint = why.find("uses binaryList") != std::string::npos
                               ? "replace it with a package built by this skforge: 'skinstall "
                                 "upgrade --reinstall " +
                                     name +
                                     ".run', or remove it with 'skinstall uninstall "
                                     "--force " +
                                     name + "'"
                               : repair_hint(name);
        skipped.push_back("package " + name +
                          " contributes no kernels to the global index: " + why + "\n  " + hint);
        return std::nullopt;
    }
}

} // namespace

std::vector<std::pair<std::string, PackageIndex>>
installed_indexes(const InstallTree& tree, const std::vector<std::string>& order,
                  std::vector<std::string>& skipped) {
    std::vector<std::pair<std::string, PackageIndex>> indexes;
    for (const auto& name : order)
        if (auto index = installed_index(tree, name, skipped))
            indexes.emplace_back(name, std::move(*index));
    return indexes;
}

namespace {

// A key of the merge as messages show it, without providers yet.
KeyUse key_use(const std::string& soc, const std::string& op, const std::string& key) {
    return {soc,
            shown_json_text("\"" + op + "\""),
            key.starts_with("e:") ? key.substr(2) : shown_json_text(key.substr(2)),
            {}};
}

// The binPath an entry names, for messages ("" when it has none).
std::string entry_bin_path(const IndexEntry& e) {
    try {
        auto doc = json::parse(e.text);
        auto bin = doc.find("binPath");
        return bin != doc.end() && bin->is_string() ? bin->get<std::string>() : "";
    } catch (const json::exception&) {
        return "";
    }
}

} // namespace

std::vector<KeyUse> key_uses(const std::vector<std::pair<std::string, PackageIndex>>& packages) {
    std::map<std::tuple<std::string, std::string, std::string>, KeyUse> uses;
    for (const auto& [name, index] : packages)
        for (const auto& [soc, doc] : index)
            for (const auto& [op, entries] : doc)
                for (const IndexEntry& entry : entries) {
                    KeyUse& use = uses[{soc, op, entry.key}];
                    if (use.key.empty())
                        use = key_use(soc, op, entry.key);
                    // A package listing the same key twice counts once: its last entry.
                    std::erase_if(use.providers,
                                  [&pkg = name](const auto& p) { return p.first == pkg; });
                    use.providers.emplace_back(name, entry_bin_path(entry));
                }
    std::vector<KeyUse> out;
    for (auto& [k, use] : uses)
        out.push_back(std::move(use));
    return out;
}

std::vector<KeyUse> shadowed_keys(const std::vector<KeyUse>& uses) {
    std::vector<KeyUse> out;
    for (const auto& u : uses)
        if (u.providers.size() > 1)
            out.push_back(u);
    return out;
}

namespace {

// A file's size, mtime and mode: what the per-key record compares to tell whether a file it was
// built from changed (kept by `cp -a`; an edit changes the mtime).
std::string stat_stamp(const std::optional<struct stat>& st) {
    if (!st)
        return "-";
    return std::to_string(st->st_size) + "." + std::to_string(st->st_mtim.tv_sec) + "." +
           std::to_string(st->st_mtim.tv_nsec) + "." + std::to_string(st->st_mode);
}

// The type and permissions of a directory on the way to what a package stamp covers.
std::string mode_stamp(const std::optional<struct stat>& st) {
    return st ? std::to_string(st->st_mode) : "-";
}

// A package stamp is "<package dir>/<manifest.json>/<config/>" and, per SoC directory,
// "/<soc>:<its dir>:<its index file>"; package_stamp and stamp_holds build it the same way.
std::string stamp_head(const std::optional<struct stat>& dir,
                       const std::optional<struct stat>& manifest,
                       const std::optional<struct stat>& config) {
    return mode_stamp(dir) + "/" + stat_stamp(manifest) + "/" + stat_stamp(config);
}

std::string stamp_soc(const std::string& soc, const std::optional<struct stat>& dir,
                      const std::optional<struct stat>& index) {
    return "/" + soc + ":" + mode_stamp(dir) + ":" + stat_stamp(index);
}

// What a package's contribution is read from, stamped: its directory, its manifest.json, its
// config/ (whose mtime changes when a SoC directory comes or goes) and, for each SoC directory,
// the directory and its index file; walked without following a symbolic link. nullopt when its
// directory is gone or cannot be walked.
std::optional<std::string> package_stamp(const Dir& ai, const std::string& name) {
    try {
        auto dir = open_dir_beneath(ai, name);
        if (!dir)
            return std::nullopt;
        std::string out =
            stamp_head(stat_at(ai, name), stat_at(*dir, std::string(package::k_manifest_path)),
                       stat_at(*dir, k_config_dir));
        auto config = open_dir_beneath(*dir, k_config_dir);
        for (const auto& soc : config ? list_dir(*config) : std::vector<std::string>{}) {
            auto st = stat_at(*config, soc);
            if (!st || !S_ISDIR(st->st_mode) || package::check_soc_dir_name(soc))
                continue;
            auto soc_dir = open_dir_beneath(*config, soc);
            out += stamp_soc(soc, st, soc_dir ? stat_at(*soc_dir, k_index_file) : std::nullopt);
        }
        return out;
    } catch (const Error&) {
        return std::nullopt;
    }
}

// Whether package `name` still has the stamp `stamp` (package_stamp's), from one fstatat per
// file and directory it names (5 for a package of one SoC, where the walk takes about 14 calls:
// the tree's other packages are checked at every command). A symbolic link anywhere on the way
// shows as a mode that differs from the directory the stamp saw; a SoC directory added or
// removed changes config/'s mtime; so the answer is package_stamp(ai, name) == stamp.
bool stamp_holds(const Dir& ai, const std::string& name, const std::string& stamp) {
    auto at = [&](const std::string& rel) -> std::optional<struct stat> {
        struct stat st {};
        if (::fstatat(ai.fd.get(), rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
            return st;
        return std::nullopt;
    };
    if (package::check_package_name(name))
        return false;
    std::string config = name + "/" + std::string(k_config_dir);
    std::string out =
        stamp_head(at(name), at(name + "/" + std::string(package::k_manifest_path)), at(config));
    // The SoC directories the stamp names, in its order: the name before the ':' of each of its
    // '/'-separated fields after the first three.
    std::size_t field = 0;
    for (std::size_t from = 0; from <= stamp.size(); ++field) {
        std::size_t to = std::min(stamp.find('/', from), stamp.size());
        if (field >= 3) {
            std::string soc = stamp.substr(from, std::min(stamp.find(':', from), to) - from);
            if (package::check_soc_dir_name(soc))
                return false;
            out += stamp_soc(soc, at(config + "/" + soc),
                             at(config + "/" + soc + "/" + std::string(k_index_file)));
        }
        from = to + 1;
    }
    return field >= 3 && out == stamp;
}

// The global index of every SoC directory of config/ that has one, stamped.
std::map<std::string, std::string> global_stamps(const Dir& config) {
    std::map<std::string, std::string> out;
    for (const auto& name : list_dir(config)) {
        auto st = stat_at(config, name);
        if (!st || !S_ISDIR(st->st_mode))
            continue;
        auto soc = open_dir_beneath(config, name);
        if (auto ist = soc ? stat_at(*soc, k_index_file) : std::nullopt)
            out[name] = stat_stamp(ist);
    }
    return out;
}

// What this process last proved, under the lock it still holds, of the record: that it
// described every package (but `except`). A change of TreeLock::generation (a lock taken or
// released), of the record file or of the tree it names ends it. Within one lock hold the
// packages cannot change but by this process's own commits, each of which rewrites the record
// and proves it again; so each command stamps the installed packages once, not at recover, at
// the commit and at the shadow report.
struct Proven {
    std::uint64_t generation;
    std::string ai;
    std::string record_stamp;
    std::string except;
};
std::optional<Proven> g_proven;

std::string record_stamp(const Dir& config) {
    return stat_stamp(stat_at(config, k_record_file));
}

bool proven(const Dir& ai, const Dir& config, const std::string& except) {
    return g_proven && g_proven->generation == TreeLock::generation() && g_proven->ai == ai.path &&
           (g_proven->except.empty() || g_proven->except == except) &&
           g_proven->record_stamp == record_stamp(config);
}

void prove(const Dir& ai, const Dir& config, const std::string& except) {
    g_proven = Proven{TreeLock::generation(), ai.path, record_stamp(config), except};
}

// The record this process wrote last, kept with the lock generation and the file's stamp then:
// while both still hold, the file is that text, so the next commit of the same command and the
// shadow report take it from memory instead of reading and hashing 3.5 MB again (filling a tree
// with 499 packages in one command commits 499 times).
// The text read under the lock (and found to describe the tree) is kept the same way. What
// write_patch wrote is kept as its pieces, joined only when a later read in the same command
// asks for it (an install's shadow report, the next commit of a multi-package install; an
// uninstall never does).
struct Written {
    std::uint64_t generation;
    std::string ai;
    std::string record_stamp;
    std::shared_ptr<const std::string> text;
    std::function<std::string()> join; ///< gives `text` while it is null
    /// `text` parsed with RecordBody::skip, once it has been: a command's recover, commit and
    /// shadow report each load the record.
    std::shared_ptr<const IndexRecord> parsed;
    /// The lines of package `shadows_of`, installed by the change that wrote this record, that
    /// hide another provider (RecordPatch::shadows): an install's shadow report, without the
    /// record read again.
    std::optional<std::string> shadows_of;
    std::vector<ShadowLine> shadows;
};
std::optional<Written> g_written;

// Whether what g_written keeps is still the record file of `ai`, under the same lock.
bool written_current(const Dir& ai, const Dir& config) {
    return g_written && g_written->generation == TreeLock::generation() &&
           g_written->ai == ai.path && g_written->record_stamp == record_stamp(config);
}

std::shared_ptr<const std::string> written_text(const Dir& ai, const Dir& config) {
    if (written_current(ai, config)) {
        if (!g_written->text && g_written->join) {
            g_written->text = std::make_shared<const std::string>(g_written->join());
            g_written->join = nullptr;
        }
        return g_written->text;
    }
    g_written.reset();
    return nullptr;
}

void keep_written(const Dir& ai, const Dir& config, std::shared_ptr<const std::string> text) {
    g_written = Written{.generation = TreeLock::generation(),
                        .ai = ai.path,
                        .record_stamp = record_stamp(config),
                        .text = std::move(text)};
}

void keep_written(const Dir& ai, const Dir& config, std::function<std::string()> join) {
    g_written = Written{.generation = TreeLock::generation(),
                        .ai = ai.path,
                        .record_stamp = record_stamp(config),
                        .join = std::move(join)};
}

// Whether `rec` describes the tree: config.ini, the top files and every global index are what
// it was written with, and every package but `except` is intact and unchanged since (stamped,
// unless this process proved it under the lock it holds: Proven).
bool describes(const Dir& ai, const Dir& config, const IndexRecord& rec,
               const std::string& except) {
    auto order = rec.order();
    if (read_file_at(ai, k_config_ini) != render_config_ini(order))
        return false;
    auto top = top_files(order);
    if (top.empty() && (stat_at(ai, "uninstall.sh") || stat_at(ai, "version.info")))
        return false;
    for (const auto& [name, text] : top)
        if (read_file_at(ai, name) != text)
            return false;
    if (rec.soc_stamps.size() != rec.socs.size())
        return false;
    for (const auto& [soc, ops] : rec.socs)
        if (!rec.soc_stamps.contains(soc))
            return false;
    if (global_stamps(config) != rec.soc_stamps)
        return false;
    if (proven(ai, config, except))
        return std::none_of(rec.packages.begin(), rec.packages.end(),
                            [&](const RecordPackage& p) { return p.name != except && p.damaged; });
    for (const auto& p : rec.packages)
        if (p.name != except && (p.damaged || !stamp_holds(ai, p.name, p.stamp)))
            return false;
    prove(ai, config, except);
    return true;
}

constexpr std::uint64_t k_record_max = 1ull << 30;

// The record, when it describes the tree (but for package `except`): with RecordBody::skip its
// packages, stamps and SoCs, each SoC's lines left as text (IndexRecord::bodies).
std::optional<IndexRecord> load_record(const InstallTree& tree, const std::string& except,
                                       RecordBody body) {
    try {
        auto config = open_dir_beneath(tree.ai_core(), k_config_dir);
        if (!config)
            return std::nullopt;
        // The text this process wrote, or one whose digest it checked, still the same file
        // under the same lock, is not hashed again.
        auto text = written_text(tree.ai_core(), *config);
        bool read = !text;
        RecordDigest digest = RecordDigest::known;
        if (read) {
            if (!proven(tree.ai_core(), *config, except))
                digest = RecordDigest::check;
            auto file = read_file_at(*config, k_record_file, k_record_max);
            if (!file)
                return std::nullopt;
            text = std::make_shared<const std::string>(std::move(*file));
        }
        bool skip = body == RecordBody::skip;
        std::optional<IndexRecord> rec;
        if (!read && skip && g_written->parsed && g_written->parsed->text == text)
            rec = *g_written->parsed; // its views point into `text`, which it shares
        else
            rec = parse_record(text, {}, body, digest);
        if (!rec || !describes(tree.ai_core(), *config, *rec, except))
            return std::nullopt;
        if (read)
            keep_written(tree.ai_core(), *config, text);
        if (skip && g_written && g_written->text == text && !g_written->parsed)
            g_written->parsed = std::make_shared<const IndexRecord>(*rec);
        return rec;
    } catch (const Error&) {
        return std::nullopt; // unreadable: rebuilt like a missing one
    }
}

// Removes the global index of a SoC no package has any more (and its directory when empty).
void remove_global(const Dir& config, const std::string& name) {
    if (auto soc = open_dir_beneath(config, name)) {
        unlink_at(*soc, k_index_file);
        if (list_dir(*soc).empty())
            ::unlinkat(config.fd.get(), name.c_str(), AT_REMOVEDIR);
    }
}

// Writes the global index of each SoC in `socs` from `rec` (removing those it has not), then
// config.ini and the top files, whose names in ai_core/ are made durable by one fsync of it
// here or, inside a transaction (Sync::file), by the one that removes the journal; then the
// record itself, last and without a sync: a record that a power cut loses or leaves stale no
// longer describes the tree and is rebuilt.
void write_outputs(const InstallTree& tree, IndexRecord&& rec, const std::vector<std::string>& socs,
                   const std::vector<std::string>& order, Sync top, Sync record = Sync::no) {
    Dir config = tree.config_dir();
    g_written.reset();
    for (const auto& soc : socs) {
        if (!rec.socs.contains(soc)) {
            remove_global(config, soc);
            continue;
        }
        Dir dir = ensure_dir(config, soc, tree.modes().dir);
        // Written from the record's lines where they are (most of them runs of the old index's
        // text), not assembled into a second 15 MB string first. The pieces are views into the
        // record and literals: collected in one walk over the lines, they give the size and the
        // writes.
        std::vector<std::string_view> parts;
        auto size = render_soc_pieces(rec, soc, [&](std::string_view p) { parts.push_back(p); });
        write_file_at(
            dir, k_index_file, size,
            [&](const auto& emit) {
                for (auto p : parts)
                    emit(p);
            },
            tree.modes().file(0644));
        rec.soc_stamps[soc] = stat_stamp(stat_at(dir, k_index_file));
    }
    sync_dir(config);
    tree.write_install_order(order, Sync::file);
    write_global_files(tree, order, Sync::file);
    if (top == Sync::yes)
        sync_dir(tree.ai_core());
    std::string text = serialize_record(rec);
    write_file_at(config, k_record_file, text, tree.modes().file(0644), record);
    // Every package's stamp in `rec` was proven or taken just now, under the lock.
    if (std::none_of(rec.packages.begin(), rec.packages.end(),
                     [](const RecordPackage& p) { return p.damaged; })) {
        prove(tree.ai_core(), config, "");
        keep_written(tree.ai_core(), config, std::make_shared<const std::string>(std::move(text)));
    } else {
        g_proven.reset();
    }
}

// Writes what patch_record made of `head`: each SoC it touched, its global index from ranges of
// the old one; then config.ini and the top files, then the record, as write_outputs does.
// False, with nothing written, when an old global index is not the size the record gives it.
bool write_patch(const InstallTree& tree, const IndexRecord& head, RecordPatch&& patch,
                 const std::vector<std::string>& order) {
    Dir config = tree.config_dir();
    std::map<std::string, support::UniqueFd> old;
    for (const auto& [soc, ps] : patch.socs) {
        if (!ps || !ps->has_old)
            continue;
        auto dir = open_dir_beneath(config, soc);
        auto fd =
            dir ? open_beneath(*dir, k_index_file, O_RDONLY | O_NONBLOCK) : support::UniqueFd();
        struct stat st {};
        if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
            static_cast<std::uint64_t>(st.st_size) != ps->old_size)
            return false;
        old.emplace(soc, std::move(fd));
    }
    g_written.reset();
    auto stamps = head.soc_stamps;
    auto bodies = body_pieces(head);
    for (const auto& [soc, ps] : patch.socs) {
        if (!ps) {
            remove_global(config, soc);
            stamps.erase(soc);
            bodies.erase(soc);
            continue;
        }
        Dir dir = ensure_dir(config, soc, tree.modes().dir);
        auto fd = old.find(soc);
        write_file_from(dir, k_index_file, fd == old.end() ? -1 : fd->second.get(), ps->global,
                        tree.modes().file(0644));
        stamps[soc] = stat_stamp(stat_at(dir, k_index_file));
        bodies[soc] = std::move(ps->body);
    }
    sync_dir(config);
    tree.write_install_order(order, Sync::file);
    write_global_files(tree, order, Sync::file);
    // Written from its pieces: the untouched lines are views into the old record's text.
    RecordText text = assemble_record(patch.packages, stamps, bodies);
    write_file_at(
        config, k_record_file, text.size(), [&](const auto& emit) { text.each(emit); },
        tree.modes().file(0644), Sync::no);
    // Every package's stamp was proven (describes) or taken just now, under the lock.
    prove(tree.ai_core(), config, "");
    // The pieces, with the texts they point into (the deque's strings stay where they are).
    struct Pending {
        std::shared_ptr<const std::string> old;
        std::deque<std::string> store;
        RecordText text;
    };
    auto pending = std::make_shared<const Pending>(
        Pending{head.text, std::move(patch.store), std::move(text)});
    keep_written(tree.ai_core(), config, [pending] { return pending->text.joined(); });
    return true;
}

} // namespace

namespace {

// The record of a full rebuild from every package in `order`, each package stamped before it is
// read (a change in between leaves a stamp that no longer matches); `skipped` gets a message
// per package that contributes nothing.
IndexRecord full_record(const InstallTree& tree, const std::vector<std::string>& order,
                        std::vector<std::string>& skipped) {
    std::vector<std::string> stamps;
    for (const auto& name : order)
        stamps.push_back(package_stamp(tree.ai_core(), name).value_or("-"));
    std::vector<std::pair<std::string, PackageIndex>> all;
    std::vector<bool> damaged;
    for (const auto& name : order) {
        auto index = installed_index(tree, name, skipped);
        damaged.push_back(!index);
        all.emplace_back(name, index ? std::move(*index) : PackageIndex{});
    }
    IndexRecord rec = build_record(all);
    for (std::size_t i = 0; i < order.size(); ++i) {
        rec.packages[i].stamp = stamps[i];
        rec.packages[i].damaged = damaged[i];
    }
    return rec;
}

// The SoC directories of config/ a rebuild writes or clears: those `rec` has, then every other
// one (its global index goes).
std::vector<std::string> rebuilt_socs(const IndexRecord& rec, const Dir& config) {
    std::vector<std::string> socs;
    for (const auto& [soc, ops] : rec.socs)
        socs.push_back(soc);
    for (const auto& name : list_dir(config)) {
        auto st = stat_at(config, name);
        if (st && S_ISDIR(st->st_mode) && !rec.socs.contains(name))
            socs.push_back(name);
    }
    return socs;
}

} // namespace

std::vector<std::string> rebuild_derived(const InstallTree& tree,
                                         const std::vector<std::string>& order, Sync record) {
    std::vector<std::string> skipped;
    IndexRecord rec = full_record(tree, order, skipped);
    Dir config = tree.config_dir();
    auto socs = rebuilt_socs(rec, config);
    write_outputs(tree, std::move(rec), socs, order, Sync::yes, record);
    return skipped;
}

DerivedState check_derived(const InstallTree& tree) {
    DerivedState out;
    auto order = tree.install_order();
    const Dir& ai = tree.ai_core();
    std::vector<std::string> skipped;
    IndexRecord rec = full_record(tree, order, skipped);
    auto config = open_dir_beneath(ai, k_config_dir);
    // Every global index, by content: what the merge renders, or none for a SoC it has not.
    for (const auto& [soc, ops] : rec.socs) {
        auto dir = config ? open_dir_beneath(*config, soc) : std::nullopt;
        auto text = dir ? read_file_at(*dir, k_index_file, k_record_max) : std::nullopt;
        if (!text)
            out.socs.push_back({soc, "missing"});
        else if (*text != render_soc(rec, soc))
            out.socs.push_back({soc, "not the merge of the installed packages' indexes in "
                                     "install order"});
        if (text && dir)
            rec.soc_stamps[soc] = stat_stamp(stat_at(*dir, k_index_file));
    }
    for (const auto& name : config ? list_dir(*config) : std::vector<std::string>{}) {
        auto st = stat_at(*config, name);
        if (!st || !S_ISDIR(st->st_mode) || rec.socs.contains(name))
            continue;
        if (auto dir = open_dir_beneath(*config, name); dir && stat_at(*dir, k_index_file))
            out.socs.push_back({name, "no installed package has an index for this SoC"});
    }
    // The top files, as text.
    auto top = top_files(order);
    for (const char* name : {"uninstall.sh", "version.info"}) {
        auto it =
            std::find_if(top.begin(), top.end(), [&](const auto& f) { return f.first == name; });
        auto text = read_file_at(ai, name);
        if (it == top.end() ? text.has_value() : text != it->second)
            out.top.push_back({name, !text             ? "missing"
                                     : it == top.end() ? "nothing is installed"
                                                       : "not what skinstall writes"});
    }
    // The record: byte for byte what a rebuild now would write, given the global indexes as they
    // are (a record for stale indexes is rewritten with them anyway).
    auto text = config ? read_file_at(*config, k_record_file, k_record_max) : std::nullopt;
    if (!text)
        out.record = "missing";
    else if (auto canonical = canonical_record(*text); !canonical)
        out.record = "damaged (cut short, a wrong digest, or not a record of this version)";
    else if (*canonical != serialize_record(rec))
        out.record = "out of date (it does not describe the installed packages and indexes)";
    return out;
}

std::vector<std::string> update_derived(const InstallTree& tree,
                                        const std::vector<std::string>& order,
                                        const std::string& name) {
    auto rec = load_record(tree, name, RecordBody::skip);
    bool present = std::find(order.begin(), order.end(), name) != order.end();
    std::vector<std::string> expected;
    if (rec) {
        expected = rec->order();
        std::erase(expected, name);
        if (present)
            expected.push_back(name);
    }
    if (!rec || expected != order)
        return rebuild_derived(tree, order);
    std::optional<PackageIndex> index;
    std::string stamp;
    if (present) {
        stamp = package_stamp(tree.ai_core(), name).value_or("-");
        std::vector<std::string> skipped;
        index = installed_index(tree, name, skipped);
        if (!index) // its warning comes from the full rebuild, as for every damaged package
            return rebuild_derived(tree, order);
    }
    std::map<std::pair<std::string, std::string>, SocIndex> loaded;
    IndexLoader load = [&](const std::string& pkg, const std::string& soc) -> const SocIndex& {
        auto [it, fresh] = loaded.try_emplace({pkg, soc});
        if (fresh) {
            auto dir = open_dir_beneath(tree.ai_core(), pkg + "/" + k_config_dir + "/" + soc);
            auto text = dir ? read_file_at(*dir, k_index_file) : std::nullopt;
            if (!text)
                throw Error("the index of " + pkg + " for " + soc + " is gone");
            it->second = scan_index_text(*text);
        }
        return it->second;
    };
    RecordPatch patch;
    try {
        patch = patch_record(*rec, name, index ? &*index : nullptr, load);
    } catch (const Error&) {
        return rebuild_derived(tree, order);
    }
    if (present)
        patch.packages.back().stamp = stamp;
    auto shadows = std::move(patch.shadows);
    if (!write_patch(tree, *rec, std::move(patch), order))
        return rebuild_derived(tree, order);
    if (present && g_written) {
        g_written->shadows_of = name;
        g_written->shadows = std::move(shadows);
    }
    return {};
}

bool derived_current(const InstallTree& tree) {
    return load_record(tree, "", RecordBody::skip).has_value();
}

// The shadow lines of `name` that the last change kept, when it installed `name` and the record
// it wrote is still the file, under the same lock.
std::optional<std::vector<ShadowLine>> written_shadows(const InstallTree& tree,
                                                       const std::string& name) {
    if (!g_written || g_written->shadows_of != name)
        return std::nullopt;
    auto config = open_dir_beneath(tree.ai_core(), k_config_dir);
    if (!config || !written_current(tree.ai_core(), *config))
        return std::nullopt;
    return g_written->shadows;
}

std::vector<KeyUse> shadows_by(const InstallTree& tree, const std::set<std::string>& winners) {
    std::vector<KeyUse> out;
    std::vector<ShadowLine> lines;
    auto known = winners.size() == 1 ? written_shadows(tree, *winners.begin()) : std::nullopt;
    std::optional<IndexRecord> rec;
    if (known)
        lines = std::move(*known);
    else
        rec = load_record(tree, "", RecordBody::skip);
    try {
        if (rec)
            lines = record_shadows(*rec, std::vector<std::string>(winners.begin(), winners.end()));
    } catch (const Error&) {
        rec.reset();
    }
    if (!known && !rec) { // no record that describes the tree: what the packages say
        std::vector<std::string> skipped;
        for (auto& u :
             shadowed_keys(key_uses(installed_indexes(tree, tree.install_order(), skipped))))
            if (winners.contains(u.winner()))
                out.push_back(std::move(u));
        return out;
    }
    std::sort(lines.begin(), lines.end(), [](const ShadowLine& a, const ShadowLine& b) {
        return std::tie(a.soc, a.op, a.key) < std::tie(b.soc, b.op, b.key);
    });
    for (const auto& l : lines) {
        KeyUse u = key_use(l.soc, l.op, l.key);
        for (const auto& p : l.providers)
            u.providers.emplace_back(p, "");
        out.push_back(std::move(u));
    }
    return out;
}

std::vector<std::string> stale_global_indexes(const InstallTree& tree) {
    std::vector<std::string> skipped;
    auto global = merge_indexes(installed_indexes(tree, tree.install_order(), skipped));
    std::vector<std::string> stale;
    auto config = open_dir_beneath(tree.ai_core(), k_config_dir);
    for (const auto& [soc, text] : global) {
        auto dir = config ? open_dir_beneath(*config, soc) : std::nullopt;
        if (!dir || read_file_at(*dir, k_index_file) != text)
            stale.push_back(soc);
    }
    for (const auto& name : config ? list_dir(*config) : std::vector<std::string>{}) {
        auto st = stat_at(*config, name);
        if (!st || !S_ISDIR(st->st_mode) || global.contains(name))
            continue;
        if (auto dir = open_dir_beneath(*config, name); dir && stat_at(*dir, k_index_file))
            stale.push_back(name);
    }
    std::sort(stale.begin(), stale.end());
    return stale;
}

} // namespace skforge::install
