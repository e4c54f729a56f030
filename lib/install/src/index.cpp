// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/index.hpp"

#include "skforge/install/query.hpp"
#include "skforge/package/index_rules.hpp"
#include "skforge/package/json_text.hpp"
#include "skforge/package/path_rules.hpp"
#include "skforge/package/template.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/sha256.hpp"

#include <algorithm>
#include <fcntl.h>
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

void write_global_files(const InstallTree& tree, const std::vector<std::string>& order) {
    const Dir& ai = tree.ai_core();
    if (order.empty()) {
        unlink_at(ai, "uninstall.sh");
        unlink_at(ai, "version.info");
        return;
    }
    write_file_at(ai, "uninstall.sh", std::string(package::templates::k_uninstall_all_sh),
                  tree.modes().file(0755));
    std::string info =
        "installer=skforge " SKFORGE_VERSION "\npackages=" + std::to_string(order.size()) + "\n";
    write_file_at(ai, "version.info", info, tree.modes().file(0644));
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
                        use = {soc,
                               shown_json_text("\"" + op + "\""),
                               entry.key.starts_with("e:") ? entry.key.substr(2)
                                                           : shown_json_text(entry.key.substr(2)),
                               {}};
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

std::vector<std::string> rebuild_derived(const InstallTree& tree,
                                         const std::vector<std::string>& order) {
    std::vector<std::string> skipped;
    auto indexes = installed_indexes(tree, order, skipped);
    auto global = merge_indexes(indexes);
    Dir config = tree.config_dir();
    for (const auto& [soc, doc] : global)
        write_file_at(ensure_dir(config, soc, tree.modes().dir), k_index_file, doc,
                      tree.modes().file(0644));
    for (const auto& name : list_dir(config)) {
        auto st = stat_at(config, name);
        if (!st || !S_ISDIR(st->st_mode) || global.contains(name))
            continue;
        if (auto soc = open_dir_beneath(config, name)) {
            unlink_at(*soc, k_index_file);
            if (list_dir(*soc).empty())
                ::unlinkat(config.fd.get(), name.c_str(), AT_REMOVEDIR);
        }
    }
    sync_dir(config);
    tree.write_install_order(order);
    write_global_files(tree, order);
    return skipped;
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
