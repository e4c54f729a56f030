// SPDX-License-Identifier: Apache-2.0
// Fuzz target: a package index as the installer reads it (depth limit, parse, the index rules)
// and, when accepted, the merge into a global index with another package's, both orders.
#include "skforge/install/index.hpp"
#include "skforge/package/index_rules.hpp"
#include "skforge/package/json_text.hpp"
#include "skforge/support/error.hpp"

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace skforge;
    static const package::Manifest manifest = [] {
        package::Manifest m;
        m.name = "fz";
        m.entries = {{"soc", package::EntryType::directory, 0755, 0, ""},
                     {"soc/a.o", package::EntryType::file, 0644, 1, std::string(64, '0')},
                     {"soc/b.o", package::EntryType::file, 0644, 1, std::string(64, '0')}};
        return m;
    }();
    std::string text(reinterpret_cast<const char*>(data), size);
    try {
        package::parse_package_index(text, "fuzz.json", manifest);
        install::PackageIndex mine = {{"soc", install::scan_index_text(text)}};
        install::PackageIndex other = {{"soc", install::scan_index_text(
                                                   R"({"Add":{"staticList":[{"simplifiedKey":"k",
                                                   "binPath":"o/soc/a.o"}]}})")}};
        auto a = install::merge_indexes({{"fz", mine}, {"o", other}});
        auto b = install::merge_indexes({{"o", other}, {"fz", mine}});
        // The merged text is JSON again, whatever the package wrote.
        for (const auto& [soc, g] : a)
            if (!nlohmann::json::parse(g).is_object())
                __builtin_trap();
        (void)b.size();
    } catch (const support::Error&) {
    }
    return 0;
}
