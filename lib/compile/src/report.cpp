// SPDX-License-Identifier: Apache-2.0
#include "skforge/compile/report.hpp"

#include "skforge/support/format.hpp"
#include "skforge/support/json.hpp"
#include "skforge/support/printable.hpp"

namespace skforge::compile::report {

using nlohmann::json;
using support::field_num;
using support::field_str;
using support::format;

namespace {

json or_null(const std::string& v) {
    return v.empty() ? json() : json(v);
}

} // namespace

json compile_result(const CompileResult& r, bool use_cache) {
    return {{"run", or_null(r.run_path)},
            {"sources_dir", or_null(r.sources_dir)},
            {"name", r.name},
            {"version", r.version},
            {"npu_arch", r.npu_arch},
            {"soc", r.soc},
            {"cann_version", or_null(r.cann_version)},
            {"cache", !r.sources_dir.empty() ? "unused"
                      : r.cache_hit          ? "hit"
                      : use_cache            ? "miss"
                                             : "disabled"},
            {"operators", r.operators},
            {"superkernels", r.superkernels},
            {"compile_log", r.compile_log}};
}

json cache_stats(const std::string& dir, const CacheStats& s) {
    return {{"dir", dir},
            {"entries", s.entries},
            {"total_size", s.total_size},
            {"max_size", s.max_size ? json(*s.max_size) : json(nullptr)},
            {"hits", s.hits},
            {"misses", s.misses},
            {"corrupt_removed", s.corrupt}};
}

Lines cache_stats_text(const json& s) {
    const auto& max = s.at("max_size");
    return {"cache directory  " + field_str(s, "dir"),
            format("entries          %llu", field_num(s, "entries")),
            "total size       " + format_size(field_num(s, "total_size")),
            "max size         " +
                (max.is_null() ? "unlimited" : format_size(max.get<std::uint64_t>())),
            format("hits             %llu", field_num(s, "hits")),
            format("misses           %llu", field_num(s, "misses")),
            format("corrupt removed  %llu", field_num(s, "corrupt_removed"))};
}

json cache_clean(const std::string& dir, const CleanResult& r) {
    return {{"dir", dir},
            {"removed", r.removed},
            {"removed_size", r.bytes},
            {"leftovers_removed", r.leftovers},
            {"op_map_removed", r.op_map},
            {"op_files_removed", r.op_files},
            {"op_files_size", r.op_bytes},
            {"op_locks_removed", r.op_locks},
            {"op_locks_in_use", r.locks_held}};
}

Lines cache_clean_text(const json& c) {
    Lines out{format("removed %llu entries (%s) and %llu leftovers of interrupted writers from %s",
                     field_num(c, "removed"), format_size(field_num(c, "removed_size")).c_str(),
                     field_num(c, "leftovers_removed"), field_str(c, "dir").c_str())};
    // The op_compiler front end's files, when there were any.
    if (field_num(c, "op_map_removed") + field_num(c, "op_files_removed") +
            field_num(c, "op_locks_removed") + field_num(c, "op_locks_in_use") >
        0)
        out.push_back(format("op_compiler: removed %llu op map lines, %llu op files (%s) and %llu "
                             "key locks; %llu key locks in use kept",
                             field_num(c, "op_map_removed"), field_num(c, "op_files_removed"),
                             format_size(field_num(c, "op_files_size")).c_str(),
                             field_num(c, "op_locks_removed"), field_num(c, "op_locks_in_use")));
    return out;
}

json cache_verify(const std::string& dir, const VerifyResult& r, VerifyFix fix) {
    json problems = json::array();
    for (const auto& p : r.problems)
        problems.push_back({{"path", p.path}, {"reason", p.reason}, {"removed", p.removed}});
    return {{"dir", dir},
            {"checked", r.checked},
            {"problems", problems},
            {"ok", r.problems.empty() || fix == VerifyFix::remove}};
}

Lines cache_verify_text(const json& v) {
    Lines out;
    const auto& problems = v.at("problems");
    for (const auto& p : problems)
        out.push_back(support::printable(field_str(p, "path")) + ": " + field_str(p, "reason") +
                      (p.at("removed").get<bool>() ? " (removed)" : ""));
    // Problems and ok: --fix removed them.
    bool removed = !problems.empty() && v.at("ok").get<bool>();
    out.push_back(format("%s: %llu entries checked, %zu problem(s)%s", field_str(v, "dir").c_str(),
                         field_num(v, "checked"), problems.size(), removed ? ", removed" : ""));
    return out;
}

} // namespace skforge::compile::report
