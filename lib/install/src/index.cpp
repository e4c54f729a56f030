#include "skforge/install/index.hpp"

#include "skforge/package/path_rules.hpp"
#include "skforge/package/template.hpp"
#include "skforge/support/error.hpp"

#include <fcntl.h>
#include <set>

namespace skforge::install {

using nlohmann::json;
using support::Error;

PackageIndex read_package_index(const Dir& package_dir) {
    PackageIndex out;
    auto config = open_dir_beneath(package_dir, k_config_dir);
    if (!config)
        return out;
    for (const auto& soc : list_dir(*config)) {
        auto st = stat_at(*config, soc);
        if (!st || !S_ISDIR(st->st_mode) || package::check_package_name(soc))
            continue;
        auto soc_dir = open_dir_beneath(*config, soc);
        auto text = soc_dir ? read_file_at(*soc_dir, k_index_file) : std::nullopt;
        if (!text)
            continue;
        std::string where = config->path + "/" + soc + "/" + k_index_file;
        json doc = json::parse(*text, nullptr, false);
        if (doc.is_discarded() || !doc.is_object())
            throw Error("'" + where + "' is not a JSON object");
        for (auto& [op, value] : doc.items())
            if (!value.is_object() ||
                (value.contains("binaryList") && !value["binaryList"].is_array()))
                throw Error("'" + where + "': OpType '" + op +
                            "' is not an object with a binaryList array");
        out.emplace(soc, std::move(doc));
    }
    return out;
}

namespace {

std::string entry_key(const json& entry) {
    if (entry.is_object() && entry.contains("simplifiedKey"))
        return "k:" + entry["simplifiedKey"].dump();
    if (entry.is_object() && entry.contains("binPath"))
        return "p:" + entry["binPath"].dump();
    return "e:" + entry.dump();
}

void merge_op(json& global_op, const json& package_op, const std::string& name) {
    std::vector<json> list = global_op.contains("binaryList")
                                 ? global_op["binaryList"].get<std::vector<json>>()
                                 : std::vector<json>{};
    for (auto& [key, value] : package_op.items())
        if (key != "binaryList")
            global_op[key] = value;
    if (!package_op.contains("binaryList"))
        return;
    for (json entry : package_op["binaryList"]) {
        std::string k = entry_key(entry);
        if (entry.is_object() && entry.contains("binPath") && entry["binPath"].is_string())
            entry["binPath"] = name + "/" + entry["binPath"].get<std::string>();
        std::erase_if(list, [&](const json& old) { return entry_key(old) == k; });
        list.push_back(std::move(entry));
    }
    global_op["binaryList"] = std::move(list);
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
                merge_op(g[op], value, name);
        }
    return global;
}

namespace {

std::string global_uninstall_script() {
    return std::string(package::templates::k_uninstall_all_sh);
}

void write_global_files(const InstallTree& tree, const std::vector<std::string>& order) {
    const Dir& ai = tree.ai_core();
    if (order.empty()) {
        unlink_at(ai, "uninstall.sh");
        unlink_at(ai, "version.info");
        return;
    }
    write_file_at(ai, "uninstall.sh", global_uninstall_script(), 0755);
    std::string info =
        "installer=skforge " SKFORGE_VERSION "\npackages=" + std::to_string(order.size()) + "\n";
    write_file_at(ai, "version.info", info, 0644);
}

} // namespace

void rebuild_derived(const InstallTree& tree, const std::vector<std::string>& order) {
    std::vector<std::pair<std::string, PackageIndex>> indexes;
    for (const auto& name : order) {
        auto dir = open_dir_beneath(tree.ai_core(), name);
        if (!dir)
            throw Error("config.ini lists '" + name + "' but '" + tree.shown() + "/" + name +
                        "' is missing");
        indexes.emplace_back(name, read_package_index(*dir));
    }
    auto global = merge_indexes(indexes);
    Dir config = tree.config_dir();
    for (const auto& [soc, doc] : global)
        write_file_at(ensure_dir(config, soc, 0755), k_index_file, doc.dump(2) + "\n", 0644);
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
}

} // namespace skforge::install
