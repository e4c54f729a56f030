// SPDX-License-Identifier: Apache-2.0
#include "skforge/kernel/kernel_meta.hpp"
#include "skforge/support/json.hpp"

#include "skforge/support/hex.hpp"
#include "skforge/support/json_depth.hpp"
#include "skforge/support/safe_path.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <type_traits>

namespace skforge::kernel {

using nlohmann::json;

namespace {
constexpr std::array<std::pair<KernelType, std::string_view>, 6> k_type_names = {{
    {KernelType::aiv_only, "KERNEL_TYPE_AIV_ONLY"},
    {KernelType::aic_only, "KERNEL_TYPE_AIC_ONLY"},
    {KernelType::mix_aiv_1_0, "KERNEL_TYPE_MIX_AIV_1_0"},
    {KernelType::mix_aic_1_0, "KERNEL_TYPE_MIX_AIC_1_0"},
    {KernelType::mix_aic_1_1, "KERNEL_TYPE_MIX_AIC_1_1"},
    {KernelType::mix_aic_1_2, "KERNEL_TYPE_MIX_AIC_1_2"},
}};
} // namespace

std::string_view kernel_type_name(KernelType type) {
    for (const auto& [t, n] : k_type_names)
        if (t == type)
            return n;
    return "KERNEL_TYPE_UNKNOWN";
}

std::optional<KernelType> parse_kernel_type(std::string_view text) {
    for (const auto& [t, n] : k_type_names)
        if (n == text)
            return t;
    return std::nullopt;
}

bool is_vector_only(KernelType type) {
    return type == KernelType::aiv_only || type == KernelType::mix_aiv_1_0;
}

bool is_cube_only(KernelType type) {
    return type == KernelType::aic_only || type == KernelType::mix_aic_1_0;
}

const std::vector<Magic>& magic_table() {
    static const std::vector<Magic> table = {
        {"RT_DEV_BINARY_MAGIC_PLAIN", 0xabceed50, false},
        {"RT_DEV_BINARY_MAGIC_PLAIN_AICPU", 0xabceed51, true},
        {"RT_DEV_BINARY_MAGIC_PLAIN_AIVEC", 0xabceed52, false},
        {"RT_DEV_BINARY_MAGIC_ELF", 0x43554245, false},
        {"RT_DEV_BINARY_MAGIC_ELF_AICPU", 0x41415243, true},
        {"RT_DEV_BINARY_MAGIC_ELF_AIVEC", 0x41415246, false},
        {"RT_DEV_BINARY_MAGIC_ELF_AICUBE", 0x41494343, false},
        {k_host_magic_name, k_host_magic, false},
    };
    return table;
}

const Magic* find_magic(std::string_view name) {
    for (const auto& m : magic_table())
        if (m.name == name)
            return &m;
    return nullptr;
}

std::uint64_t Workspace::total() const {
    return std::accumulate(size.begin(), size.end(), std::uint64_t{0});
}

namespace {

// `v` as the integer type T in `out`, or why it is not one. nlohmann converts a negative number
// to an unsigned one without complaint, and a float out of range with undefined behaviour (a
// fuzz finding: "blockDim": 2e30); a whole float within range is taken.
template <class T> std::optional<std::string> integer_value(const json& v, T& out) {
    using limits = std::numeric_limits<T>;
    if (v.is_number_float()) {
        const double d = v.get<double>();
        // max() + 1 as a double is exact for every width (2^64 when max() itself rounds up).
        if (!(d >= static_cast<double>(limits::min()) &&
              d < static_cast<double>(limits::max()) + 1.0) ||
            std::trunc(d) != d)
            return "must be an integer in range";
        out = static_cast<T>(d);
        return std::nullopt;
    }
    if (!v.is_number_integer())
        return "has the wrong type";
    if (auto u = support::json_as<std::uint64_t>(v)) {
        if (*u > static_cast<std::uint64_t>(limits::max()))
            return "is out of range";
        out = static_cast<T>(*u);
        return std::nullopt;
    }
    if constexpr (std::is_unsigned_v<T>) {
        return "must not be negative";
    } else {
        const std::int64_t n = *support::json_as<std::int64_t>(v);
        if (n < static_cast<std::int64_t>(limits::min()))
            return "is out of range";
        out = static_cast<T>(n);
        return std::nullopt;
    }
}

template <class T> constexpr bool is_integer_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T> struct integer_vector : std::false_type {};
template <class U> struct integer_vector<std::vector<U>> : std::bool_constant<is_integer_v<U>> {};

template <class T>
void read(const json& doc, const char* key, T& out, std::vector<MetaProblem>& problems) {
    auto it = doc.find(key);
    if (it == doc.end())
        return;
    std::optional<std::string> why;
    if constexpr (is_integer_v<T>) {
        why = integer_value(*it, out);
    } else if constexpr (integer_vector<T>::value) {
        // Each element as a scalar is read: the same conversions, the same problems.
        T values(it->is_array() ? it->size() : 0);
        if (!it->is_array())
            why = "has the wrong type";
        for (std::size_t i = 0; !why && i < values.size(); ++i)
            why = integer_value((*it)[i], values[i]);
        if (!why)
            out = std::move(values);
    } else {
        try {
            out = it->get<T>();
        } catch (const json::exception&) {
            why = "has the wrong type";
        }
    }
    if (why)
        problems.push_back({key, std::string("'") + key + "' " + *why});
}

void read_workspace(const json& doc, Workspace& ws, std::vector<MetaProblem>& problems) {
    auto it = doc.find("workspace");
    if (it == doc.end())
        return;
    if (!it->is_object()) {
        problems.push_back({"workspace", "'workspace' must be an object {num, size[], type[]}"});
        return;
    }
    read(*it, "size", ws.size, problems);
    read(*it, "type", ws.type, problems);
    std::uint64_t num = ws.size.size();
    read(*it, "num", num, problems);
    if (num != ws.size.size())
        problems.push_back({"workspace", "'workspace.num' is " + std::to_string(num) +
                                             " but 'size' has " + std::to_string(ws.size.size()) +
                                             " entries"});
}

// supportSuperKernel and friends appear as 0/1 or as booleans.
bool read_flag(const json& doc, const char* key, std::vector<MetaProblem>& problems) {
    auto it = doc.find(key);
    if (it == doc.end())
        return false;
    if (it->is_boolean())
        return it->get<bool>();
    if (it->is_number_integer())
        return it->get<std::int64_t>() != 0;
    problems.push_back({key, std::string("'") + key + "' must be 0, 1, true or false"});
    return false;
}

// The vendor writes obj_files as one path; a list is accepted too.
void read_obj_files(const json& entry, const std::string& key, std::vector<std::string>& out,
                    std::vector<MetaProblem>& problems) {
    auto it = entry.find("obj_files");
    if (it == entry.end())
        return;
    if (it->is_string())
        out.push_back(it->get<std::string>());
    else if (it->is_array() &&
             std::all_of(it->begin(), it->end(), [](const json& v) { return v.is_string(); }))
        out = it->get<std::vector<std::string>>();
    else
        problems.push_back({key, "'" + key + ".obj_files' must be a path or a list of paths"});
}

// Entries without func_name (a dynamic op's "dynamic_func_names") are not sub-kernels skforge
// can call; they are skipped, not reported.
void read_sub_kernel_names(const json& doc, std::map<std::string, SubKernelName>& out,
                           std::vector<MetaProblem>& problems) {
    const char* key = "sub_operator_kernel_name";
    auto it = doc.find(key);
    if (it == doc.end())
        return;
    if (!it->is_object()) {
        problems.push_back({key, "'sub_operator_kernel_name' must be an object keyed by core"});
        return;
    }
    for (const auto& [core, entry] : it->items()) {
        const std::string entry_key = std::string(key) + "." + core;
        if (!entry.is_object() || !entry.contains("func_name"))
            continue;
        SubKernelName name;
        if (!entry["func_name"].is_string()) {
            problems.push_back({entry_key, "'" + entry_key + ".func_name' must be a string"});
            continue;
        }
        name.func_name = entry["func_name"].get<std::string>();
        read_obj_files(entry, entry_key, name.obj_files, problems);
        // asc-devkit super_kernel_sub_op_compile.py split_sub_kernel_objs: obj_files_split1..
        // split_mode-1, each one path.
        for (int k = 1;; ++k) {
            auto split = entry.find("obj_files_split" + std::to_string(k));
            if (split == entry.end())
                break;
            if (!split->is_string()) {
                problems.push_back({entry_key, "'" + entry_key + ".obj_files_split" +
                                                   std::to_string(k) + "' must be a path"});
                break;
            }
            name.split_obj_files.push_back(split->get<std::string>());
        }
        out.emplace(core, std::move(name));
    }
}

// Every key parse_kernel_meta models; the rest go to extra_json untouched.
constexpr std::array<std::string_view, 30> k_known_keys = {
    "kernelName",
    "blockDim",
    "magic",
    "opParaSize",
    "binFileName",
    "binFileSuffix",
    "sha256",
    "workspace",
    "sub_operator_kernel_type",
    "split_mode",
    "supportSuperKernel",
    "sub_op_with_sync_all",
    "sub_operator_kernel_name",
    "sub_operator_params",
    "sub_operator_early_start_set_flag",
    "sub_operator_early_start_wait_flag",
    "sub_operator_call_dcci_before_kernel_start",
    "sub_operator_call_dcci_after_kernel_end",
    "sub_operator_call_dcci_disable_on_kernel",
    "sub_operator_op_type",
    "timestamp_option",
    "debugBufSize",
    "debugOptions",
    "taskRation",
    "coreType",
    "deterministic",
    "localMemorySize",
    "schedule_mode",
    "runInfo",
    "platformInfo"};

std::string unknown_fields(const json& doc) {
    json extra = json::object();
    for (const auto& [key, value] : doc.items())
        if (std::find(k_known_keys.begin(), k_known_keys.end(), key) == k_known_keys.end())
            extra[key] = value;
    return support::dump_json(extra);
}

// A field `key` of `obj` (named `where` in messages) that must be an unsigned number of at most
// `max`, as the runtime's get<uint32_t>() / get<uint64_t>() reads it.
void check_count(const json& obj, const std::string& where, const char* key, std::uint64_t max,
                 std::vector<MetaProblem>& problems) {
    auto it = obj.find(key);
    const std::string name = where + "." + key;
    if (it == obj.end())
        problems.push_back({where, "'" + name + "' is missing: CANN's runtime " +
                                       "(UpdateStaticJsonExtraInfo) would drop the kernel's " +
                                       where + " with a warning"});
    else if (!it->is_number_unsigned() || it->get<std::uint64_t>() > max)
        problems.push_back(
            {where, "'" + name + "' must be a number from 0 to " + std::to_string(max)});
}

// The object `key` of `doc`, checked by `check(object)` (which adds problems), as JSON text into
// `out` when nothing is wrong with it; nothing when `doc` has none.
template <class F>
void read_checked_object(const json& doc, const char* key, std::string& out,
                         std::vector<MetaProblem>& problems, F&& check) {
    auto it = doc.find(key);
    if (it == doc.end())
        return;
    if (!it->is_object()) {
        problems.push_back({key, std::string("'") + key + "' must be an object"});
        return;
    }
    const std::size_t before = problems.size();
    check(*it);
    if (problems.size() == before)
        out = it->dump();
}

// runInfo: every field UpdateRunInfoForStaticJson reads, with its tiling data as hex bytes.
void check_run_info(const json& run, std::vector<MetaProblem>& problems) {
    for (const char* key : {"aicpu_block_dim", "block_dim", "local_memory_size", "schedule_mode",
                            "tiling_cond", "clear_atomic"})
        check_count(run, "runInfo", key, 0xffffffffu, problems);
    check_count(run, "runInfo", "tiling_key", ~std::uint64_t{0}, problems);
    auto data = run.find("tiling_data");
    if (data == run.end() || !data->is_string() ||
        !support::is_lower_hex(data->get<std::string>(), data->get<std::string>().size()) ||
        data->get<std::string>().size() % 2 != 0)
        problems.push_back({"runInfo", "'runInfo.tiling_data' must be the tiling data as an even "
                                       "number of lower-case hex digits"});
}

// platformInfo: the core counts (and optional deterministicLevel, an int8 to the runtime)
// MatchBinWithPlatformInfo compares with the device's. One without either core count is what
// the op compiler writes when it does not know them (asc-devkit 12c80e5d compile_op.py: only
// deterministicLevel); CANN's runtime drops it with a warning and the kernel then fits every
// device and level (share/doc/cann-conformance.md, "opbase's rules per release"), so it is
// accepted and kept as written.
void check_platform_info(const json& info, std::vector<MetaProblem>& problems) {
    if (info.contains("cubeCoreCnt") || info.contains("vectorCoreCnt")) {
        check_count(info, "platformInfo", "cubeCoreCnt", 0xffffffffu, problems);
        check_count(info, "platformInfo", "vectorCoreCnt", 0xffffffffu, problems);
    }
    if (auto level = info.find("deterministicLevel");
        level != info.end() && (!level->is_number_integer() || level->get<std::int64_t>() < -1 ||
                                level->get<std::int64_t>() > 127))
        problems.push_back({"platformInfo", "'platformInfo.deterministicLevel' must be a number "
                                            "from -1 to 127"});
}

void read_runtime_fields(const json& doc, KernelMeta& m, std::vector<MetaProblem>& problems) {
    if (doc.contains("localMemorySize")) {
        m.local_memory_size = 0;
        read(doc, "localMemorySize", *m.local_memory_size, problems);
    }
    if (doc.contains("schedule_mode")) {
        m.schedule_mode = 0;
        read(doc, "schedule_mode", *m.schedule_mode, problems);
    }
    read_checked_object(doc, "runInfo", m.run_info_json, problems,
                        [&](const json& run) { check_run_info(run, problems); });
    read_checked_object(doc, "platformInfo", m.platform_info_json, problems,
                        [&](const json& info) { check_platform_info(info, problems); });
    if (auto info = doc.find("supportInfo"); info != doc.end() && info->is_object())
        if (auto mode = info->find("implMode"); mode != info->end() && mode->is_string())
            m.impl_mode = mode->get<std::string>();
}

void read_sub_operator_fields(const json& doc, KernelMeta& m, std::vector<MetaProblem>& problems) {
    read_sub_kernel_names(doc, m.sub_kernel_names, problems);
    read(doc, "sub_operator_params", m.sub_operator_params, problems);
    read(doc, "sub_operator_op_type", m.op_type, problems);
    m.early_start_set_flag = read_flag(doc, "sub_operator_early_start_set_flag", problems);
    m.early_start_wait_flag = read_flag(doc, "sub_operator_early_start_wait_flag", problems);
    m.call_dcci_before_kernel_start =
        read_flag(doc, "sub_operator_call_dcci_before_kernel_start", problems);
    m.call_dcci_after_kernel_end =
        read_flag(doc, "sub_operator_call_dcci_after_kernel_end", problems);
    m.call_dcci_disable_on_kernel =
        read_flag(doc, "sub_operator_call_dcci_disable_on_kernel", problems);
    m.timestamp_option = read_flag(doc, "timestamp_option", problems);
    read(doc, "debugBufSize", m.debug_buf_size, problems);
    read(doc, "debugOptions", m.debug_options, problems);
    read(doc, "taskRation", m.task_ration, problems);
    read(doc, "coreType", m.core_type, problems);
    read_runtime_fields(doc, m, problems);
    m.extra_json = unknown_fields(doc);
}

// Kernel names become file names (<kernelName>.o, .so, .cpp) in the build and package trees:
// each must be one safe path component. False (with a problem) when it is not.
bool check_file_name(const char* key, std::string_view what, const std::string& value,
                     std::vector<MetaProblem>& problems) {
    auto bad = support::check_name_component(value);
    if (bad)
        problems.push_back({key, std::string(what) + " '" + support::printable(value) + "' " +
                                     *bad + " (it names files, so it must be one path component)"});
    return !bad;
}

// `deterministic` is "true", "false" or "ignore"; a boolean is taken for its text.
std::string read_deterministic(const json& doc, std::vector<MetaProblem>& problems) {
    auto it = doc.find("deterministic");
    if (it == doc.end())
        return "";
    if (it->is_boolean())
        return it->get<bool>() ? "true" : "false";
    if (it->is_string() && (*it == "true" || *it == "false" || *it == "ignore"))
        return it->get<std::string>();
    problems.push_back(
        {"deterministic", "'deterministic' must be \"true\", \"false\" or \"ignore\""});
    return "";
}

} // namespace

std::string with_runtime_fields(std::string_view json_text,
                                std::optional<std::pair<std::uint32_t, std::uint32_t>> cores) {
    json doc = json::parse(json_text);
    if (!doc.contains("localMemorySize"))
        doc["localMemorySize"] = 0;
    if (!doc.contains("schedule_mode"))
        doc["schedule_mode"] = 0;
    if (!doc.contains("workspace"))
        doc["workspace"] = {{"num", 0}, {"size", json::array()}, {"type", json::array()}};
    else if (!doc["workspace"].contains("num"))
        doc["workspace"]["num"] = doc["workspace"].value("size", json::array()).size();
    if (cores && !doc.contains("platformInfo"))
        doc["platformInfo"] = {{"cubeCoreCnt", cores->first}, {"vectorCoreCnt", cores->second}};
    return support::dump_json(doc, 2) + "\n";
}

bool uses_debug_buffer(const KernelMeta& meta) {
    for (std::string_view word : {"timestamp", "printf", "assert"})
        if (meta.debug_options.find(word) != std::string::npos)
            return true;
    return false;
}

KernelMeta parse_kernel_meta(std::string_view json_text, std::vector<MetaProblem>& problems) {
    KernelMeta m;
    // Parsing is iterative but copying and dumping recurse: refuse deep nesting first.
    if (auto deep = support::check_json_depth(json_text)) {
        problems.push_back({"", *deep});
        return m;
    }
    json doc = json::parse(json_text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        problems.push_back({"", "not a JSON object"});
        return m;
    }
    read(doc, "kernelName", m.kernel_name, problems);
    read(doc, "blockDim", m.block_dim, problems);
    read(doc, "magic", m.magic_name, problems);
    read(doc, "opParaSize", m.op_para_size, problems);
    read(doc, "binFileName", m.bin_file_name, problems);
    read(doc, "binFileSuffix", m.bin_file_suffix, problems);
    read(doc, "sha256", m.sha256, problems);
    read(doc, "sub_operator_kernel_type", m.kernel_type_text, problems);
    m.deterministic = read_deterministic(doc, problems);
    read(doc, "split_mode", m.split_mode, problems);
    read_workspace(doc, m.workspace, problems);
    m.support_super_kernel = read_flag(doc, "supportSuperKernel", problems);
    m.sync_all = read_flag(doc, "sub_op_with_sync_all", problems);
    read_sub_operator_fields(doc, m, problems);
    if (m.kernel_name.empty())
        problems.push_back({"kernelName", "'kernelName' is missing"});
    else
        check_file_name("kernelName", "'kernelName'", m.kernel_name, problems);
    // The binary is found by binFileName + binFileSuffix beside the metadata.
    if (!m.bin_file_name.empty() &&
        check_file_name("binFileName", "'binFileName'", m.bin_file_name, problems))
        check_file_name("binFileSuffix", "'binFileName' + 'binFileSuffix'",
                        m.bin_file_name + m.bin_file_suffix, problems);
    if (const Magic* magic = find_magic(m.magic_name)) {
        m.magic = magic->value;
        m.aicpu = magic->aicpu;
    } else {
        problems.push_back({"magic", "unknown magic '" + m.magic_name + "'"});
    }
    m.kernel_type = parse_kernel_type(m.kernel_type_text);
    if (!m.sha256.empty() && !support::is_lower_hex(m.sha256, 64))
        problems.push_back({"sha256", "'sha256' must be 64 lower-case hex digits"});
    if (m.block_dim == 0)
        problems.push_back({"blockDim", "'blockDim' must be at least 1"});
    return m;
}

} // namespace skforge::kernel
