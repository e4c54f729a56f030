// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/index.hpp"

#include "skforge/install/query.hpp"
#include "skforge/package/index_rules.hpp"
#include "skforge/package/json_text.hpp"
#include "skforge/package/path_rules.hpp"
#include "skforge/package/template.hpp"
#include "skforge/support/error.hpp"

#include <fcntl.h>
#include <tuple>

namespace skforge::install {

using nlohmann::json;
using support::Error;

PackageIndex read_package_index(const Dir& package_dir, const package::Manifest& manifest) {
    PackageIndex out;
    auto config = open_dir_beneath(package_dir, k_config_dir);
    if (!config)
        return out;
    for (const auto& soc : list_dir(*config)) {
        auto st = stat_at(*config, soc);
        if (!st || !S_ISDIR(st->st_mode) || package::check_soc_dir_name(soc))
            continue;
        auto soc_dir = open_dir_beneath(*config, soc);
        auto text = soc_dir ? read_file_at(*soc_dir, k_index_file) : std::nullopt;
        if (!text)
            continue;
        std::string where = config->path + "/" + soc + "/" + k_index_file;
        json doc = package::parse_package_index(*text, where, manifest);
        out.emplace(soc, std::move(doc));
    }
    return out;
}

namespace {

std::string entry_key(const json& entry) {
    if (entry.contains("simplifiedKey"))
        return "k:" + entry["simplifiedKey"].get<std::string>();
    return "p:" + entry["binPath"].get<std::string>();
}

std::string shown_key(const std::string& key) {
    return key.substr(2);
}

void merge_op(json& global_op, const json& package_op) {
    std::vector<json> list = global_op.contains("staticList")
                                 ? global_op["staticList"].get<std::vector<json>>()
                                 : std::vector<json>{};
    for (auto& [key, value] : package_op.items())
        if (key != "staticList")
            global_op[key] = value;
    if (package_op.contains("staticList"))
        for (const json& entry : package_op["staticList"]) {
            std::string k = entry_key(entry);
            std::erase_if(list, [&](const json& old) { return entry_key(old) == k; });
            list.push_back(entry);
        }
    global_op["staticList"] = std::move(list);
}

} // namespace

std::map<std::string, json>
merge_indexes(const std::vector<std::pair<std::string, PackageIndex>>& packages) {
    std::map<std::string, json> global;
    for (const auto& [name, index] : packages)
        for (const auto& [soc, doc] : index) {
            json& g = global[soc];
            if (g.is_null())
                g = json::object();
            for (auto& [op, value] : doc.items())
                merge_op(g[op], value);
        }
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
        auto manifest = read_installed_manifest(tree, name);
        if (!manifest)
            throw Error("config.ini lists it but '" + tree.shown() + "/" + name + "' is missing");
        auto dir = open_dir_beneath(tree.ai_core(), name);
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

std::vector<KeyUse> key_uses(const std::vector<std::pair<std::string, PackageIndex>>& packages) {
    std::map<std::tuple<std::string, std::string, std::string>, KeyUse> uses;
    for (const auto& [name, index] : packages)
        for (const auto& [soc, doc] : index)
            for (auto& [op, value] : doc.items()) {
                if (!value.contains("staticList"))
                    continue;
                for (const json& entry : value["staticList"]) {
                    std::string k = entry_key(entry);
                    KeyUse& use = uses[{soc, op, k}];
                    if (use.key.empty())
                        use = {soc, op, shown_key(k), {}};
                    // A package listing the same key twice counts once: its last entry.
                    std::erase_if(use.providers,
                                  [&pkg = name](const auto& p) { return p.first == pkg; });
                    use.providers.emplace_back(name, entry["binPath"].get<std::string>());
                }
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
        write_file_at(ensure_dir(config, soc, tree.modes().dir), k_index_file, doc.dump(2) + "\n",
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

} // namespace skforge::install
