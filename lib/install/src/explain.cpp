// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/explain.hpp"

#include "skforge/install/safe_fs.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/printable.hpp"

#include <algorithm>
#include <charconv>
#include <fcntl.h>
#include <map>

namespace skforge::install {

using kernel::KeyPath;
using kernel::KeyTensor;
using kernel::RuntimeCall;
using nlohmann::json;
using support::Error;
using support::ErrorKind;

namespace {

constexpr KeyPath k_paths[] = {KeyPath::aclnn_executor, KeyPath::hostapi};

std::string_view path_name(KeyPath p) {
    return p == KeyPath::aclnn_executor ? "aclnn executor" : "op-kernel engine";
}

// The JSON beside a kernel: binPath cut at its first ".o", plus ".json"
// (UpdateStaticJsonExtraInfo).
std::optional<json> kernel_json(const InstallTree& tree, const std::string& bin_path) {
    auto cut = bin_path.find(".o");
    if (cut == std::string::npos)
        return std::nullopt;
    std::string rel = bin_path.substr(0, cut) + ".json";
    auto slash = rel.rfind('/');
    try {
        std::optional<Dir> dir = slash == std::string::npos
                                     ? std::nullopt
                                     : open_dir_beneath(tree.ai_core(), rel.substr(0, slash));
        auto text = dir ? read_file_at(*dir, rel.substr(slash + 1)) : std::nullopt;
        if (!text)
            return std::nullopt;
        auto j = json::parse(*text, nullptr, false);
        return j.is_object() ? std::optional<json>(std::move(j)) : std::nullopt;
    } catch (const Error&) {
        return std::nullopt;
    }
}

bool unsigned_field(const json& j, const char* name) {
    auto it = j.find(name);
    return it != j.end() && it->is_number_unsigned();
}

// What the runtime reads beside one kernel: run info (where from) and platformInfo.
void read_beside(const InstallTree& tree, RuntimeEntry& e,
                 std::optional<kernel::KernelPlatform>& platform) {
    auto j = kernel_json(tree, e.bin_path);
    e.json_read = j.has_value();
    if (j) {
        e.run_info = j->contains("runInfo") && (*j)["runInfo"].is_object();
        e.top_level_run_info = unsigned_field(*j, "blockDim") &&
                               unsigned_field(*j, "localMemorySize") &&
                               unsigned_field(*j, "schedule_mode");
        if (auto p = j->find("platformInfo"); p != j->end()) {
            if (p->is_object() && unsigned_field(*p, "cubeCoreCnt") &&
                unsigned_field(*p, "vectorCoreCnt")) {
                kernel::KernelPlatform got{(*p)["cubeCoreCnt"].get<std::uint32_t>(),
                                           (*p)["vectorCoreCnt"].get<std::uint32_t>()};
                if (auto l = p->find("deterministicLevel"); l != p->end() && l->is_number_integer())
                    got.deterministic_level = l->get<int>();
                platform = got;
            } else {
                platform.reset(); // opbase drops a platformInfo it cannot use
            }
        }
    }
    e.platform = platform;
}

// Why the runtime drops an index entry (NnopbaseUpdateCommonJsonInfo, NnopbaseUpdateStaticJsonInfo;
// skforge writes one key string per entry, which both paths read), or "".
std::string entry_refusal(const json& entry) {
    if (!entry.is_object())
        return "an entry that is not an object";
    auto key = entry.find("simplifiedKey");
    if (key == entry.end() || !key->is_string())
        return "an entry without a simplifiedKey string";
    auto core = entry.find("coreType");
    auto bin = entry.find("binPath");
    if (core == entry.end() || !core->is_number_integer() || bin == entry.end() ||
        !bin->is_string())
        return "an entry without an integer coreType or a binPath string";
    auto desc = entry.find("binDesc");
    if (desc == entry.end() || !desc->is_object() || !unsigned_field(*desc, "blockDim") ||
        !desc->contains("kernelName") || !(*desc)["kernelName"].is_string())
        return "an entry without binDesc {blockDim, kernelName}";
    return "";
}

void read_op(const InstallTree& tree, const std::string& op_type, const json& op, RuntimeIndex& r) {
    if (!op.is_object() || !op.contains("staticList") || !op["staticList"].is_array())
        return;
    std::optional<kernel::KernelPlatform> platform; // the runtime keeps it per OpType
    for (const auto& entry : op["staticList"]) {
        if (auto why = entry_refusal(entry); !why.empty()) {
            r.skipped.push_back(op_type + ": " + why);
            continue;
        }
        RuntimeEntry e;
        e.op_type = op_type;
        e.key_text = entry["simplifiedKey"].get<std::string>();
        e.key = kernel::runtime_index_key(e.key_text);
        e.bin_path = entry["binPath"].get<std::string>();
        e.package = e.bin_path.substr(0, e.bin_path.find('/'));
        e.order = r.entries.size();
        read_beside(tree, e, platform);
        r.entries.push_back(std::move(e));
    }
}

} // namespace

std::vector<std::string> index_soc_dirs(const InstallTree& tree) {
    std::vector<std::string> socs;
    auto config = open_dir_beneath(tree.ai_core(), k_config_dir);
    if (!config)
        return socs;
    for (const auto& name : list_dir(*config)) {
        auto st = stat_at(*config, name);
        if (st && S_ISDIR(st->st_mode))
            socs.push_back(name);
    }
    return socs;
}

RuntimeIndex read_runtime_index(const InstallTree& tree, const std::string& soc_dir) {
    RuntimeIndex r;
    r.soc_dir = soc_dir;
    r.path = tree.shown() + "/config/" + soc_dir + "/" + k_index_file;
    std::optional<std::string> text;
    try {
        auto dir = open_dir_beneath(tree.ai_core(), std::string(k_config_dir) + "/" + soc_dir);
        text = dir ? read_file_at(*dir, k_index_file) : std::nullopt;
    } catch (const Error& e) {
        r.why = e.what();
        return r;
    }
    if (!text) {
        r.why = "there is no such file";
        return r;
    }
    auto index = json::parse(*text, nullptr, false);
    if (index.is_discarded() || !index.is_object()) {
        r.why = "it is not a JSON object";
        return r;
    }
    r.readable = true;
    for (const auto& [op_type, op] : index.items())
        read_op(tree, op_type, op, r);
    return r;
}

// ---- the call ----

namespace {

std::vector<std::int64_t> dims_from_text(const std::string& text, const std::string& what) {
    std::vector<std::int64_t> dims;
    std::string_view rest = text;
    while (!rest.empty()) {
        std::int64_t v = 0;
        auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
        if (ec != std::errc() || v < 0)
            throw Error("--tensor: " + what + " '" + support::printable(text) +
                            "' is not a list of non-negative integers separated by commas",
                        ErrorKind::usage);
        dims.push_back(v);
        rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
        if (!rest.empty() && rest.front() == ',')
            rest.remove_prefix(1);
    }
    return dims;
}

std::vector<std::int64_t> dims_from_json(const json& j, const std::string& where) {
    if (!j.is_array())
        throw Error(where + " is not a list of integers");
    std::vector<std::int64_t> dims;
    for (const auto& d : j) {
        if (!d.is_number_integer() || d.get<std::int64_t>() < 0)
            throw Error(where + " has " + d.dump() +
                        ", not a static dimension (a non-negative "
                        "integer): only static shapes have static "
                        "kernels");
        dims.push_back(d.get<std::int64_t>());
    }
    return dims;
}

std::uint32_t dtype_code(const std::string& name, const std::string& where, ErrorKind kind) {
    if (auto code = kernel::ge_data_type(name))
        return *code;
    throw Error(where + ": unknown dtype '" + support::printable(name) + "'", kind);
}

std::uint32_t format_code(std::string name, const std::string& where, ErrorKind kind) {
    if (name.starts_with("FORMAT_"))
        name.erase(0, 7);
    if (auto code = kernel::ge_format(name))
        return *code;
    throw Error(where + ": unknown format '" + support::printable(name) + "'", kind);
}

kernel::RuntimeTensor tensor_from_dump(const json& t, const std::string& where) {
    if (!t.is_object() || !t.contains("dtype") || !t["dtype"].is_string() || !t.contains("shape"))
        throw Error(where + " has no dtype string or no shape");
    kernel::RuntimeTensor r;
    r.dtype = dtype_code(t["dtype"].get<std::string>(), where, ErrorKind::failure);
    r.format = format_code(t.value("format", std::string("ND")), where, ErrorKind::failure);
    r.storage_shape = dims_from_json(t["shape"], where + ".shape");
    if (t.contains("origin_shape"))
        r.view_shape = dims_from_json(t["origin_shape"], where + ".origin_shape");
    for (const char* name : {"stride", "strides"})
        if (t.contains(name) && !t[name].is_null())
            r.view_strides = dims_from_json(t[name], where + "." + name);
    if (auto o = t.find("offset"); o != t.end() && o->is_number_integer())
        r.offset = o->get<std::int64_t>();
    return r;
}

bool dump_flag(const json& j) {
    if (j.is_boolean())
        return j.get<bool>();
    if (j.is_number_integer())
        return j.get<int>() != 0;
    return j.is_string() && (j.get<std::string>() == "true" || j.get<std::string>() == "1");
}

} // namespace

int impl_mode_index(const std::string& text) {
    if (text == "high_performance")
        return 1;
    if (text.empty() || text == "high_precision")
        return 2;
    throw Error("impl mode '" + support::printable(text) +
                    "' is none of high_performance, high_precision",
                ErrorKind::usage);
}

kernel::RuntimeTensor tensor_from_text(const std::string& text) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (std::size_t colon; (colon = text.find(':', start)) != std::string::npos; start = colon + 1)
        parts.push_back(text.substr(start, colon - start));
    parts.push_back(text.substr(start));
    if (parts.size() < 3 || parts.size() > 6)
        throw Error("--tensor '" + support::printable(text) +
                        "': give DTYPE:FORMAT:DIMS[:VIEW_DIMS[:STRIDES[:OFFSET]]]",
                    ErrorKind::usage);
    kernel::RuntimeTensor t;
    t.dtype = dtype_code(parts[0], "--tensor", ErrorKind::usage);
    t.format = format_code(parts[1], "--tensor", ErrorKind::usage);
    t.storage_shape = dims_from_text(parts[2], "DIMS");
    if (parts.size() > 3)
        t.view_shape = dims_from_text(parts[3], "VIEW_DIMS");
    if (parts.size() > 4)
        t.view_strides = dims_from_text(parts[4], "STRIDES");
    if (parts.size() > 5) {
        auto offset = dims_from_text(parts[5], "OFFSET");
        t.offset = offset.empty() ? 0 : offset[0];
    }
    return t;
}

RuntimeCall call_from_dump(const json& dump, const std::string& where) {
    if (!dump.is_object() || !dump.contains("op_type") || !dump["op_type"].is_string())
        throw Error(where + ": no op_type string (not a dump JSON as aclopStartDumpArgs writes)");
    RuntimeCall call;
    call.op_type = dump["op_type"].get<std::string>();
    for (const char* side : {"inputs", "outputs"}) {
        auto list = dump.find(side);
        if (list == dump.end() || !list->is_array())
            throw Error(where + ": no list '" + side + "'");
        for (std::size_t i = 0; i < list->size(); ++i)
            call.tensors.push_back(
                tensor_from_dump((*list)[i], where + ": " + side + "[" + std::to_string(i) + "]"));
    }
    call.deterministic_level = dump_flag(dump.value("deterministic", json(false))) ? 1 : 0;
    auto impl = dump.value("impl_mode", json(""));
    call.hostapi_impl_mode = impl_mode_index(impl.is_string() ? impl.get<std::string>() : "");
    return call;
}

// ---- what each line finds ----

namespace {

std::string dims_text(const std::vector<std::int64_t>& v) {
    std::string s = "(";
    for (std::size_t i = 0; i < v.size(); ++i)
        s += (i ? "," : "") + std::to_string(v[i]);
    return s + ")";
}

// "FRACTAL_NZ (29)": a code with its name.
std::string code_text(std::optional<std::string_view> name, std::uint32_t code) {
    return (name ? std::string(*name) + " (" : std::string("(")) + std::to_string(code) + ")";
}

// How a tensor of an entry's key differs from the call's as `path` keys it on the line.
void tensor_differences(std::size_t i, const KeyTensor& entry, const KeyTensor& call,
                        const kernel::RuntimeTensor& given, KeyPath path,
                        const kernel::LineRules& line, std::vector<std::string>& out) {
    const std::string t = "tensor " + std::to_string(i) + ": ";
    if (entry.dtype != call.dtype)
        out.push_back(
            t + "dtype " + code_text(kernel::ge_data_type_name(entry.dtype), entry.dtype) +
            " in the entry, " + code_text(kernel::ge_data_type_name(call.dtype), call.dtype) +
            " in the call");
    if (entry.format != call.format)
        out.push_back(
            t + "format " + code_text(kernel::ge_format_name(entry.format), entry.format) +
            " in the entry, " + code_text(kernel::ge_format_name(call.format), call.format) +
            " keyed for the call" +
            (path == KeyPath::aclnn_executor
                 ? " (format normalisation: the aclnn executor keys NCHW, NHWC, NCL, "
                   "NCDHW and DHWCN as ND)"
                 : " (the op-kernel engine keys the storage format as it is)"));
    if (entry.shape != call.shape) {
        const bool view = !given.view_shape.empty() && given.view_shape != given.storage_shape;
        out.push_back(t + "dims " + dims_text(entry.shape) + " in the entry, " +
                      dims_text(call.shape) + " in the call" +
                      (view ? (path == KeyPath::aclnn_executor
                                   ? " (view vs storage shape: the aclnn executor keys the view "
                                     "shape)"
                                   : " (view vs storage shape: the op-kernel engine keys the "
                                     "storage shape)")
                            : ""));
    }
    if (entry.strides.has_value() != call.strides.has_value())
        out.push_back(t + (entry.strides
                               ? "the entry's key carries strides and offset; " +
                                     std::string(line.name) + " looks up without them here"
                               : "the entry's key has no strides; " + std::string(line.name) +
                                     " looks up with them here"));
    else if (entry.strides && (*entry.strides != *call.strides || entry.offset != call.offset))
        out.push_back(t + "strides " + dims_text(*entry.strides) + " offset " +
                      std::to_string(entry.offset) + " in the entry, " + dims_text(*call.strides) +
                      " offset " + std::to_string(call.offset) + " in the call");
}

// How `entry` differs from one lookup; an unparsable key says so.
std::vector<std::string> differences(const RuntimeEntry& entry, const RuntimeCall& call,
                                     KeyPath path, bool with_strides,
                                     const kernel::LineRules& line) {
    auto parsed = kernel::parse_simplified_key(entry.key_text);
    if (!parsed || !entry.key)
        return {"the runtime cannot read this simplifiedKey"};
    std::vector<std::string> out;
    const int d = kernel::runtime_key_deterministic(call);
    const int p = kernel::runtime_key_impl_mode(path, call);
    if (parsed->deterministic != d)
        out.push_back("determinism: d=" + std::to_string(parsed->deterministic) +
                      " in the entry, d=" + std::to_string(d) + " for the call");
    if (parsed->impl_mode != p)
        out.push_back("impl mode: p=" + std::to_string(parsed->impl_mode) +
                      " in the entry, p=" + std::to_string(p) + " on this path");
    auto keyed = kernel::runtime_key_tensors(path, call, with_strides);
    if (parsed->tensors.size() != keyed.size())
        out.push_back(std::to_string(parsed->tensors.size()) + " tensors in the entry, " +
                      std::to_string(keyed.size()) + " in the call");
    for (std::size_t i = 0; i < std::min(keyed.size(), parsed->tensors.size()); ++i)
        tensor_differences(i, parsed->tensors[i], keyed[i], call.tensors[i], path, line, out);
    return out;
}

std::string platform_text(const kernel::KernelPlatform& p) {
    return std::to_string(p.aic) + " cube / " + std::to_string(p.aiv) + " vector cores" +
           (p.deterministic_level >= 0
                ? ", deterministicLevel " + std::to_string(p.deterministic_level)
                : "");
}

json entry_json(const RuntimeEntry& e) {
    json j = {
        {"package", e.package}, {"binPath", e.bin_path}, {"order", e.order}, {"key", e.key_text}};
    if (e.platform)
        j["platformInfo"] = platform_text(*e.platform);
    return j;
}

// The warnings a found kernel gets (on every line alike).
json found_warnings(const RuntimeEntry& e) {
    json w = json::array();
    if (!e.json_read)
        w.push_back("the JSON beside the kernel cannot be read: the runtime registers it "
                    "without run info");
    return w;
}

// A path's lookups on a line, in order, until one finds a kernel whose platformInfo fits.
struct Search {
    json lookups = json::array();
    const RuntimeEntry* found = nullptr;
    std::vector<const RuntimeEntry*> platform_misses; ///< the key matched, platformInfo did not
};

Search search(const RuntimeIndex& index, const RuntimeCall& call, KeyPath path,
              const kernel::LineRules& line, const std::optional<kernel::KernelPlatform>& device) {
    Search s;
    for (const auto& l : kernel::runtime_lookups(line, path, call)) {
        json lj = {{"strides", l.with_strides}, {"key", l.text}, {"found", nullptr}};
        for (const auto& e : index.entries) {
            if (e.key != l.key)
                continue;
            if (device && !kernel::platform_fits(line, e.platform, *device)) {
                s.platform_misses.push_back(&e);
                continue;
            }
            s.found = &e;
            lj["found"] = e.order;
            break;
        }
        s.lookups.push_back(std::move(lj));
        if (s.found)
            break;
    }
    return s;
}

// For a miss: the entries whose key matched but not their platformInfo, then the OpType's other
// entries ranked by how many things differ from the closest lookup; three at most.
json nearest_entries(const RuntimeIndex& index, const RuntimeCall& call, KeyPath path,
                     const kernel::LineRules& line, const Search& s,
                     const kernel::KernelPlatform* device) {
    json nearest = json::array();
    for (const auto* e : s.platform_misses) {
        json n = entry_json(*e);
        n["differences"] = {"platformInfo: the kernel is for " + platform_text(*e->platform) +
                            ", the device has " + platform_text(*device) +
                            (line.match_deterministic_level ? "" : " (core counts only)")};
        nearest.push_back(std::move(n));
    }
    std::vector<std::pair<std::vector<std::string>, const RuntimeEntry*>> ranked;
    for (const auto& e : index.entries) {
        if (e.op_type != call.op_type ||
            std::find(s.platform_misses.begin(), s.platform_misses.end(), &e) !=
                s.platform_misses.end())
            continue;
        std::optional<std::vector<std::string>> best;
        for (const auto& l : kernel::runtime_lookups(line, path, call)) {
            auto d = differences(e, call, path, l.with_strides, line);
            if (!best || d.size() < best->size())
                best = std::move(d);
        }
        ranked.emplace_back(std::move(*best), &e);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first.size() < b.first.size(); });
    for (std::size_t i = 0; i < ranked.size() && nearest.size() < 3; ++i) {
        json n = entry_json(*ranked[i].second);
        n["differences"] = ranked[i].first;
        nearest.push_back(std::move(n));
    }
    return nearest;
}

// One path on one line: its lookups in order, the entry found, or the nearest.
json explain_path(const RuntimeIndex& index, const RuntimeCall& call, KeyPath path,
                  const kernel::LineRules& line,
                  const std::optional<kernel::KernelPlatform>& cores) {
    auto device = cores;
    if (device)
        device->deterministic_level = call.deterministic_level;
    auto s = search(index, call, path, line, device);
    json j = {{"path", path_name(path)}, {"lookups", s.lookups}, {"kernel", nullptr}};
    if (s.found) {
        j["kernel"] = entry_json(*s.found);
        j["kernel"]["warnings"] = found_warnings(*s.found);
    } else {
        j["nearest"] = nearest_entries(index, call, path, line, s, device ? &*device : nullptr);
    }
    return j;
}

json call_json(const RuntimeCall& call) {
    json tensors = json::array();
    for (const auto& t : call.tensors) {
        json tj = {{"dtype", t.dtype}, {"format", t.format}, {"shape", t.storage_shape}};
        if (!t.view_shape.empty())
            tj["view_shape"] = t.view_shape;
        if (t.view_strides)
            tj["strides"] = *t.view_strides;
        if (t.offset != 0)
            tj["offset"] = t.offset;
        tensors.push_back(std::move(tj));
    }
    return {{"op_type", call.op_type},
            {"tensors", tensors},
            {"deterministic", call.deterministic_level},
            {"impl_mode", call.hostapi_impl_mode}};
}

} // namespace

json explain_call(const RuntimeIndex& index, const RuntimeCall& call,
                  const std::optional<kernel::KernelPlatform>& cores,
                  const std::vector<std::string>& notes) {
    json lines = json::array();
    for (const auto& line : kernel::cann_lines()) {
        json paths = json::array();
        for (auto path : k_paths)
            paths.push_back(explain_path(index, call, path, line, cores));
        lines.push_back({{"line", line.name}, {"paths", paths}});
    }
    json j = {{"call", call_json(call)},          {"index", index.path}, {"soc_dir", index.soc_dir},
              {"index_readable", index.readable}, {"lines", lines},      {"notes", notes}};
    if (!index.readable)
        j["notes"].push_back("the runtime cannot read " + index.path + ": " + index.why);
    if (!cores)
        j["notes"].push_back("the device's core counts are unknown (--cores or --soc): "
                             "platformInfo is not checked");
    return j;
}

std::vector<std::string> explain_text(const json& x) {
    std::vector<std::string> out;
    const auto& call = x["call"];
    out.push_back(call["op_type"].get<std::string>() + " (" +
                  std::to_string(call["tensors"].size()) + " tensors, deterministic " +
                  std::to_string(call["deterministic"].get<int>()) + ", impl mode " +
                  std::to_string(call["impl_mode"].get<int>()) + ") in " +
                  x["index"].get<std::string>());
    for (const auto& line : x["lines"])
        for (const auto& p : line["paths"]) {
            const auto& k = p["kernel"];
            std::string head =
                line["line"].get<std::string>() + " " + p["path"].get<std::string>() + ": ";
            out.push_back(head + (k.is_null()
                                      ? std::string("no static kernel")
                                      : k["binPath"].get<std::string>() + " (package " +
                                            k["package"].get<std::string>() + ", index entry " +
                                            std::to_string(k["order"].get<int>()) + ")"));
            for (const auto& l : p["lookups"])
                out.push_back("  key " +
                              std::string(l["strides"].get<bool>() ? "with" : "without") +
                              " strides " + l["key"].get<std::string>() +
                              (l["found"].is_null() ? ": none" : ": found"));
            if (!k.is_null())
                for (const auto& w : k["warnings"])
                    out.push_back("  warning: " + w.get<std::string>());
            if (k.is_null() && p["nearest"].empty())
                out.push_back("  nearest: none (no entry of " + call["op_type"].get<std::string>() +
                              ")");
            if (k.is_null())
                for (const auto& n : p["nearest"]) {
                    std::string why;
                    for (const auto& d : n["differences"])
                        why += (why.empty() ? "" : "; ") + d.get<std::string>();
                    out.push_back("  nearest " + n["binPath"].get<std::string>() + " (package " +
                                  n["package"].get<std::string>() + ", key " +
                                  n["key"].get<std::string>() + "): " + why);
                }
        }
    for (const auto& n : x["notes"])
        out.push_back("note: " + n.get<std::string>());
    return out;
}

json explain_table(const std::vector<json>& explained) {
    json rows = json::array();
    for (const auto& line : kernel::cann_lines())
        for (auto path : k_paths) {
            std::map<std::string, int> per_package;
            int found = 0;
            for (const auto& x : explained)
                for (const auto& l : x["lines"])
                    for (const auto& p : l["paths"])
                        if (l["line"] == line.name && p["path"] == path_name(path) &&
                            !p["kernel"].is_null()) {
                            ++found;
                            ++per_package[p["kernel"]["package"].get<std::string>()];
                        }
            rows.push_back({{"line", line.name},
                            {"path", path_name(path)},
                            {"calls", explained.size()},
                            {"found", found},
                            {"none", static_cast<int>(explained.size()) - found},
                            {"packages", per_package}});
        }
    return rows;
}

std::vector<std::string> explain_table_text(const json& table) {
    std::vector<std::string> out = {"line     path              calls  found  none  by package"};
    for (const auto& r : table) {
        std::string by;
        for (const auto& [name, n] : r["packages"].items())
            by += (by.empty() ? "" : ", ") + name + " " + std::to_string(n.get<int>());
        char buf[160];
        std::snprintf(buf, sizeof buf, "%-8s %-17s %5d  %5d  %4d  ",
                      r["line"].get<std::string>().c_str(), r["path"].get<std::string>().c_str(),
                      r["calls"].get<int>(), r["found"].get<int>(), r["none"].get<int>());
        out.push_back(buf + (by.empty() ? std::string("-") : by));
    }
    return out;
}

} // namespace skforge::install
