// SPDX-License-Identifier: Apache-2.0
#include "skforge/compile/output_cache.hpp"

#include "skforge/package/path_rules.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/json.hpp"
#include "skforge/support/sha256.hpp"

#include <cstdint>
#include <filesystem>

namespace skforge::compile {

namespace fs = std::filesystem;
using nlohmann::json;
using support::Error;

json read_output_cache(const std::string& path, support::Log& user) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(path, ec)))
        return json::object();
    json j;
    try {
        j = support::parse_json(
            support::read_file(path, {support::k_max_json_bytes, support::Follow::no}));
    } catch (const Error& e) {
        user.warn(std::string(e.what()) + ": the output directory's cache starts afresh");
        return json::object();
    }
    if (!j.is_object()) {
        user.warn("'" + path +
                  "' is not a JSON object: the output directory's cache starts afresh");
        return json::object();
    }
    for (auto it = j.begin(); it != j.end();) {
        bool ok = support::json_get<std::string>(it.value(), "run") &&
                  support::json_get<std::string>(it.value(), "sha256");
        if (!ok)
            user.warn("'" + path + "': entry " + support::dump_json(it.key()).substr(0, 80) +
                      " is not an object with \"run\" and \"sha256\" strings: dropped");
        it = ok ? std::next(it) : j.erase(it);
    }
    return j;
}

bool output_cache_entry_live(const json& e, const std::string& outdir) {
    auto name = support::json_get<std::string>(e, "run");
    auto sha = support::json_get<std::string>(e, "sha256");
    if (!name || !sha || !name->ends_with(".run") ||
        package::check_package_name(name->substr(0, name->size() - 4)))
        return false; // not a name compile writes: never read
    try {
        return support::sha256_file(outdir + "/" + *name, UINT64_MAX, support::Follow::no).sha256 ==
               *sha;
    } catch (const Error&) {
        return false;
    }
}

} // namespace skforge::compile
