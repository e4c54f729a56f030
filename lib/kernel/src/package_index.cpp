// SPDX-License-Identifier: Apache-2.0
#include "skforge/kernel/package_index.hpp"

#include "skforge/support/error.hpp"
#include "skforge/support/json.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace skforge::kernel {

void PackageIndex::add(const std::string& op_type, StaticEntry entry) {
    auto& list = m_ops[op_type];
    if (std::find(list.begin(), list.end(), entry) == list.end())
        list.push_back(std::move(entry));
}

std::string PackageIndex::text() const {
    nlohmann::json index = nlohmann::json::object();
    for (const auto& [op_type, entries] : m_ops) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& e : entries)
            list.push_back({{"binDesc",
                             {{"blockDim", e.block_dim},
                              {"kernelName", e.kernel_name},
                              {"workspace", e.workspace}}},
                            {"coreType", static_cast<int>(e.core)},
                            {"binPath", e.bin_path},
                            {"simplifiedKey", e.key}});
        index[op_type] = {
            {"dynamicRankSupport", true}, {"simplifiedKeyMode", 0}, {"staticList", list}};
    }
    return support::dump_json(index, 2) + "\n";
}

std::size_t PackageIndex::size() const {
    std::size_t n = 0;
    for (const auto& [op_type, entries] : m_ops)
        n += entries.size();
    return n;
}

std::string index_bin_path(std::string_view package, std::string_view rel) {
    std::string path = std::string(package) + "/" + std::string(rel);
    if (path.ends_with(".o") && path.find(".o") != path.size() - 2)
        throw support::Error("binPath '" + path + "' has '.o' before its end: CANN's runtime " +
                             "cuts binPath at the first '.o' to find the kernel's JSON, so it " +
                             "would read the wrong file; rename the package (--name), the OpType " +
                             "or the kernel");
    return path;
}

} // namespace skforge::kernel
