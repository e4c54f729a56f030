// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/index_rules.hpp"

#include "skforge/package/json_text.hpp"
#include "skforge/support/error.hpp"

namespace skforge::package {

using nlohmann::json;

bool is_index_path(std::string_view path) {
    if (!path.starts_with("config/") || !path.ends_with(k_index_file_name))
        return false;
    std::string_view soc = path.substr(7, path.size() - 7 - k_index_file_name.size());
    return soc.size() > 1 && soc.back() == '/' &&
           !check_soc_dir_name(soc.substr(0, soc.size() - 1));
}

namespace {

// Why one staticList entry is refused, or an empty string.
std::string check_entry(const json& entry, const std::string& name, const Manifest& manifest) {
    if (!entry.is_object())
        return "is not an object";
    if (entry.contains("simplifiedKey") && !entry["simplifiedKey"].is_string())
        return "has a simplifiedKey that is not a string";
    auto bin = entry.find("binPath");
    if (bin == entry.end() || !bin->is_string())
        return "has no binPath string";
    const std::string& path = bin->get_ref<const std::string&>();
    if (auto bad = check_entry_path(path))
        return "binPath '" + path + "' " + *bad;
    if (!path.starts_with(name + "/"))
        return "binPath '" + path + "' is outside the package (it must start with '" + name + "/')";
    const auto* e = manifest.find(std::string_view(path).substr(name.size() + 1));
    if (e == nullptr || e->type != EntryType::file)
        return "binPath '" + path + "' names no file of the package";
    return {};
}

} // namespace

std::vector<std::string> check_package_index(const json& doc, const std::string& name,
                                             const Manifest& manifest) {
    std::vector<std::string> problems;
    if (!doc.is_object())
        return {"the top level is not an object of OpTypes"};
    for (const auto& [op, value] : doc.items()) {
        if (!value.is_object()) {
            problems.push_back("OpType '" + op + "' is not an object");
            continue;
        }
        if (value.contains("binaryList"))
            problems.push_back("OpType '" + op +
                               "' uses binaryList, the dynamic-kernel format CANN's "
                               "static-kernel reader ignores; rebuild the package with this "
                               "skforge (it writes staticList)");
        auto list = value.find("staticList");
        if (list == value.end())
            continue;
        if (!list->is_array()) {
            problems.push_back("OpType '" + op + "': staticList is not an array");
            continue;
        }
        for (std::size_t i = 0; i < list->size(); ++i)
            if (auto why = check_entry((*list)[i], name, manifest); !why.empty())
                problems.push_back("OpType '" + op + "' staticList[" + std::to_string(i) + "] " +
                                   why);
    }
    return problems;
}

std::set<std::string> index_package_names(const json& doc) {
    std::set<std::string> names;
    if (!doc.is_object())
        return names;
    for (const auto& [op, value] : doc.items()) {
        auto list = value.is_object() ? value.find("staticList") : value.end();
        if (list == value.end() || !list->is_array())
            continue;
        for (const auto& entry : *list)
            if (entry.is_object() && entry.contains("binPath") && entry["binPath"].is_string()) {
                const auto& path = entry["binPath"].get_ref<const std::string&>();
                names.insert(path.substr(0, path.find('/')));
            }
    }
    return names;
}

json parse_package_index(std::string_view text, std::string_view origin, const Manifest& manifest) {
    json doc = parse_json_limited(text, origin);
    auto problems = check_package_index(doc, manifest.name, manifest);
    if (problems.empty())
        return doc;
    std::string msg = "'" + std::string(origin) + "' is not a valid static-kernel index:";
    for (const auto& p : problems)
        msg += "\n  " + p;
    throw support::Error(msg);
}

} // namespace skforge::package
