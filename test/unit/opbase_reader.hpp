// SPDX-License-Identifier: Apache-2.0
#pragma once

// A reader of an installed static-kernel tree that does what CANN's runtime does, written from
// opbase's code at aa3cd74 (src/nnopbase/individual_op/executor/indv_collector.cpp and the
// files named below; nothing copied):
//   NnopbaseCollectorGetStaticKernelPathAndReadConfig: <opp>/static_kernel/ai_core/config/<soc
//     dir>/binary_info_config.json, the SoC directory being the SoC family in lower case;
//   NnopbaseCollectorReadStaticKernelOpInfoConfig: for every OpType only its `staticList`;
//   NnopbaseUpdateCommonJsonInfo: simplifiedKey (a list of strings, or one string), an integer
//     coreType, binPath relative to static_kernel/ai_core/; a bad entry is skipped, silently;
//   NnopbaseUpdateStaticJsonInfo: binDesc {blockDim, kernelName, workspace (at most 20)};
//   UpdateStaticJsonExtraInfo (UpdateRunInfoForStaticJson, UpdatePlatformInfoForStaticJson):
//     the kernel's JSON is binPath cut at its first ".o", plus ".json"; from it the run info
//     (runInfo, else blockDim, localMemorySize and schedule_mode; then workspace.num and its
//     sizes) and platformInfo {cubeCoreCnt, vectorCoreCnt, deterministicLevel}; what it cannot
//     read costs the run info and a warning. The state is kept per OpType, so a JSON without
//     platformInfo inherits the previous entry's;
//   NnopbaseCollectorConvertStaticVerbKey: the byte key a simplifiedKey is turned into;
//   NnopbaseCollectorAddBinInfo / NnopbaseCollectorFindBinInfo / MatchBinWithPlatformInfo: the
//     first kernel registered under a byte key wins, when its platformInfo fits the device;
//   a call's key, built by one of two paths, each looked up with strides first and then, after
//     a warning, without:
//     - the aclnn executor (indv_executor_tensor.cpp NnopbaseSaveTensor: NCL, NCDHW, DHWCN, NHWC
//       and NCHW become ND, the view shape is keyed; indv_executor_ext.cpp
//       NnopbaseExecutorGenStaticKey: precision 0, the view strides and offset; indv_executor.cpp
//       NnopbaseExecutorGetStaticBinInfo);
//     - the op-kernel engine (composite_op/aclnn_engine/op_kernel.h GenerateStaticParam: impl
//       mode ToIndex(GetCurrentImplMode()), 1 or 2; individual_op_api.cpp
//       NnopbaseFindStaticKernel, indv_collector.cpp NnopbaseCollectorGenStaticKey: the storage
//       format and shape, the gert tensor's strides (none for an aclCreateTensor tensor) and
//       offset). That engine reads simplifiedKey as one string (op_kernel.cpp AppendStaticBin).
// The release lines hosts run differ from master in a few of these rules; `Line` selects them
// (line_rules below names the vendor file and commit of each difference).
// The base (<opp> above), from opbase's master at aa3cd74 and 9.1.0 at 0e247b8 (where the
// collector is indv_collecter.cpp; 9.0.0 has no reselect with a path):
//   GetBuiltInBasePath, read when the runtime starts: $ASCEND_HOME_PATH/opp_latest, as written,
//     when it resolves; else $ASCEND_OPP_PATH as written; else none (no static kernels);
//   aclnnReselectStaticKernelWithPath(P) (common/api/acl_op_api.cpp): realpath(P), or the call
//     fails (ACLNN_ERR_PARAM_INVALID) and nothing is reloaded; NnopbaseReloadStaticBinJsonInfos
//     hands that base to NnopbaseCollectorGetStaticKernelPathAndReadConfig in place of the
//     built-in one, whose kernels stay registered: the reload adds ("incremental update static
//     bin" in NnopbaseCollectorAddBinInfo), and a byte key already registered keeps its kernel.
// Used by unit tests and by the opbase_read program the whole-program tests run.
#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <stdlib.h>

namespace skforge::test::opbase {

/// A key as the runtime compares them: bytes.
using Key = std::vector<std::uint8_t>;

/// A release line of opbase whose rules the reader follows.
enum class Line { v9_0, v9_1, master };

/// What differs between the lines (one row per line, line_rules). Read from hicann/opbase:
/// branch 9.0.0 at 94c65c3 (v9.0.0 a533410 and v9.0.1 d838911 have the same executor and
/// collector files), branch 9.1.0 at 0e247b8 (v9.1.0.pre 5884fea: the same, but for MC2
/// launch lines), master at aa3cd74.
struct LineRules {
    std::string_view name; ///< "9.0", "9.1", "master": what opbase_read --cann-line takes
    /// A call is looked up with strides first, then without. 9.0.x: one lookup, no strides
    /// (9.0.0 indv_executor_ext.cpp NnopbaseExecutorGenTensorsKey, indv_executor.cpp
    /// NnopbaseExecutorGetStaticBinInfo; indv_collecter.cpp NnopbaseCollecterGenStaticKey,
    /// individual_op_api.cpp NnopbaseFindStaticKernel).
    bool stride_lookup;
    /// platformInfo.deterministicLevel is read and compared (master indv_collector.cpp
    /// UpdatePlatformInfoForStaticJson, MatchBinWithPlatformInfo). 9.0.x and 9.1.x compare the
    /// core counts only (indv_collecter.cpp MatchBinWithCoreNum).
    bool deterministic_match;
    /// Without runInfo the run info is blockDim, localMemorySize, schedule_mode and the
    /// workspace (9.1.0 and master UpdateRunInfoForStaticJson). 9.0.x reads runInfo only, the
    /// workspace inside that branch; a JSON without runInfo leaves the OpType's previous run
    /// info in place (9.0.0 indv_collecter.cpp UpdateRunInfoForStaticJson).
    bool run_info_fallback;
    /// aclnnReselectStaticKernelWithPath exists (common/api/acl_op_api.cpp: not on branch
    /// 9.0.0, on 9.1.0 and master).
    bool reselect_with_path;
};

/// The row of `line`.
inline const LineRules& line_rules(Line line) {
    static const LineRules rows[] = {
        {"9.0", false, false, false, false},
        {"9.1", true, false, true, true},
        {"master", true, true, true, true},
    };
    return rows[static_cast<int>(line)];
}

/// The line named "9.0", "9.1" or "master", or nullopt.
inline std::optional<Line> parse_line(std::string_view name) {
    for (Line l : {Line::v9_0, Line::v9_1, Line::master})
        if (line_rules(l).name == name)
            return l;
    return std::nullopt;
}

/// platformInfo: cube cores, vector cores, deterministicLevel (-1: not given).
struct Platform {
    std::uint32_t aic = 0;
    std::uint32_t aiv = 0;
    int deterministic_level = -1;
    bool operator==(const Platform&) const = default;
};

/// What the runtime registers for one staticList entry.
struct StaticKernel {
    std::string op_type;
    std::vector<std::string> keys;
    int core_type = -1;
    std::string bin_path;  ///< <opp>/static_kernel/ai_core/<binPath>, the file it loads
    std::string json_path; ///< the kernel JSON it reads beside the binary
    std::uint32_t block_dim = 0;
    std::string kernel_name;
    std::vector<std::uint64_t> workspace;
    /// False when simplifiedKey is a list, which the op-kernel engine cannot read.
    bool key_is_string = true;
    /// UpdateStaticJsonExtraInfo's warnings about the JSON beside the kernel.
    std::vector<std::string> warnings;
    bool has_run_info = false;
    /// 9.0.x: the JSON has no runInfo and the run info is the previous entry's of its OpType.
    bool run_info_inherited = false;
    std::optional<Platform> platform;
};

/// Everything the runtime would take from one SoC's index, and what it would skip.
struct Reading {
    Line line = Line::master;
    std::string index_path;
    bool index_read = false; ///< the file opened and parsed (the runtime is silent otherwise)
    std::vector<StaticKernel> kernels;
    std::vector<std::string> skipped; ///< "<OpType>: why", one per entry the runtime drops
};

inline void append8(Key& key, std::uint64_t v) {
    for (int i = 0; i < 8; ++i)
        key.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

/// The byte key of a static simplifiedKey: the OpType's bytes up to the first '/'; then each
/// '0', '1' or '2' up to the next '/' as a number (d=, p=); then every run of lower-case hex
/// digits as a number and every '_' (an absent tensor) as itself. Runs of 16 digits or more are
/// handled differently by the runtime; they are returned as an empty key here.
inline Key convert_static_key(std::string_view text) {
    Key key;
    std::size_t i = 0;
    for (; i < text.size() && text[i] != '/'; ++i)
        key.push_back(static_cast<std::uint8_t>(text[i]));
    for (++i; i < text.size() && text[i] != '/'; ++i)
        if (text[i] >= '0' && text[i] <= '2')
            append8(key, static_cast<std::uint64_t>(text[i] - '0'));
    std::uint64_t value = 0;
    int digits = 0;
    for (++i; i <= text.size(); ++i) {
        const char c = i < text.size() ? text[i] : '\0';
        const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        if (c == '_') { // appended at once, without ending a run of digits
            append8(key, '_');
            continue;
        }
        if (hex) {
            value = (value << 4) | static_cast<std::uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
            if (++digits == 16)
                return {};
            continue;
        }
        if (digits > 0)
            append8(key, value);
        value = 0;
        digits = 0;
    }
    return key;
}

/// One tensor of a call as a key holds it: ge::DataType, ge::Format, dims.
struct CallTensor {
    std::uint64_t dtype;
    std::uint64_t format;
    std::vector<std::int64_t> dims;
};

/// The byte key of a call without strides of an operator without attributes or value-dependent
/// inputs, from its tensors as keyed.
inline Key call_key(std::string_view op_type, bool deterministic, std::uint64_t impl_mode,
                    std::span<const CallTensor> tensors) {
    Key key(op_type.begin(), op_type.end());
    append8(key, deterministic ? 1 : 0);
    append8(key, impl_mode);
    for (const auto& t : tensors) {
        append8(key, t.dtype);
        append8(key, t.format);
        for (auto d : t.dims)
            append8(key, static_cast<std::uint64_t>(d));
    }
    return key;
}

/// A tensor of a call as the caller's aclTensor (aclCreateTensor) holds it.
struct AclTensor {
    std::uint64_t dtype = 0;
    std::uint64_t storage_format = 2;
    std::vector<std::int64_t> storage_dims;
    std::vector<std::int64_t> view_dims;
    /// nullopt: none given, so the view's contiguous strides (op::ToContiguousStrides).
    std::optional<std::vector<std::int64_t>> view_strides;
    std::int64_t view_offset = 0;
};

/// Which of the runtime's two key builders.
enum class Path { aclnn_executor, hostapi };

/// The state of the runtime a call is made in.
struct Context {
    int deterministic_level = 0;         ///< the executor's level; the engine's deterMode (0, 1)
    std::uint64_t hostapi_impl_mode = 2; ///< ToIndex(GetCurrentImplMode()): 1 or 2
    std::uint32_t aic = 24;              ///< aclrtGetResInCurrentThread: cube cores
    std::uint32_t aiv = 48;              ///< vector cores
    /// The PCIe flag segment of the search-index opbase (pcie_call_key); nullopt: none.
    std::optional<bool> pcie;
};

// FormatsLikeND: NCL, NCDHW, DHWCN, NHWC, NCHW.
inline bool format_like_nd(std::uint64_t format) {
    for (std::uint64_t f : {47u, 30u, 31u, 1u, 0u})
        if (f == format)
            return true;
    return false;
}

inline std::vector<std::int64_t> contiguous(const std::vector<std::int64_t>& dims) {
    std::vector<std::int64_t> strides(dims.size());
    std::int64_t step = 1;
    for (std::size_t i = dims.size(); i-- > 0;) {
        strides[i] = step;
        step *= dims[i];
    }
    return strides;
}

/// The byte key `path` builds for a call (no attributes, no value-dependent inputs), with or
/// without strides.
inline Key path_call_key(Path path, std::string_view op_type, const Context& ctx,
                         std::span<const AclTensor> tensors, bool using_stride) {
    Key key(op_type.begin(), op_type.end());
    append8(key, ctx.deterministic_level == 0 ? 0u : 1u);
    append8(key, path == Path::aclnn_executor ? std::uint64_t{0} : ctx.hostapi_impl_mode);
    for (const auto& t : tensors) {
        append8(key, t.dtype);
        const bool executor = path == Path::aclnn_executor;
        append8(key,
                executor && format_like_nd(t.storage_format) ? std::uint64_t{2} : t.storage_format);
        const auto& dims = executor ? t.view_dims : t.storage_dims;
        for (auto d : dims)
            append8(key, static_cast<std::uint64_t>(d));
        if (!using_stride)
            continue;
        if (executor)
            for (auto s : t.view_strides.value_or(contiguous(t.view_dims)))
                append8(key, static_cast<std::uint64_t>(s));
        append8(key, executor ? static_cast<std::uint64_t>(t.view_offset) : std::uint64_t{0});
    }
    return key;
}

/// The key with strides as the opbase the search index holds builds it (hicann/opbase c362be6c
/// src/nnopbase/individual_op/executor/static_kernel_helper.cpp, StaticKeySegments,
/// FindStaticBinWithStride; no release branch nor master aa3cd74 has it): when PCIe is enabled
/// (*ctx.pcie), an 8-byte 1 between the head (OpType, determinism, impl mode) and the tensors;
/// when not, no segment. The lookup without strides never has one. What sets the flag
/// (NnopbaseStaticRuntimeInfo::enablePcie, the executor's isEnablePcie) is not in that file.
inline Key pcie_call_key(Path path, std::string_view op_type, const Context& ctx,
                         std::span<const AclTensor> tensors) {
    Key key = path_call_key(path, op_type, ctx, tensors, true);
    if (ctx.pcie.value_or(false)) {
        Key flag;
        append8(flag, 1);
        key.insert(key.begin() + static_cast<std::ptrdiff_t>(op_type.size() + 16), flag.begin(),
                   flag.end());
    }
    return key;
}

// The keys of an entry: a list of strings, or one string.
inline bool entry_keys(const nlohmann::json& entry, StaticKernel& k) {
    auto it = entry.find("simplifiedKey");
    if (it == entry.end())
        return false;
    if (it->is_string()) {
        k.keys = {it->get<std::string>()};
        return true;
    }
    if (!it->is_array())
        return false;
    k.key_is_string = false;
    for (const auto& key : *it) {
        if (!key.is_string())
            return false;
        k.keys.push_back(key.get<std::string>());
    }
    return true;
}

// The run info UpdateRunInfoForStaticJson reads, by the same lookups (a missing field is a null,
// which get<> refuses); the warnings it would log.
inline bool read_run_info(nlohmann::json j, std::vector<std::string>& warnings) {
    try {
        if (j.contains("runInfo")) {
            auto& run = j["runInfo"];
            for (const char* f : {"aicpu_block_dim", "block_dim", "local_memory_size",
                                  "schedule_mode", "tiling_cond", "clear_atomic"})
                (void)run[f].get<std::uint32_t>();
            (void)run["tiling_key"].get<std::uint64_t>();
            if (run["tiling_data"].get<std::string>().size() % 2 == 1)
                warnings.push_back("runInfo.tiling_data has an odd number of hex digits");
        } else {
            for (const char* f : {"blockDim", "localMemorySize", "schedule_mode"})
                (void)j[f].get<std::uint32_t>();
        }
        const auto num = j["workspace"]["num"].get<std::size_t>();
        for (std::size_t i = 0; i < num; ++i)
            (void)j["workspace"]["size"][i].get<std::size_t>();
        return true;
    } catch (const nlohmann::json::exception& e) {
        warnings.push_back(std::string("Failed to read static kernel json file of runInfo, "
                                       "reason: ") +
                           e.what());
        return false;
    }
}

// platformInfo as UpdatePlatformInfoForStaticJson reads it; unchanged when the JSON has none.
inline void read_platform(nlohmann::json j, std::optional<Platform>& platform,
                          std::vector<std::string>& warnings) {
    if (!j.contains("platformInfo"))
        return;
    try {
        auto& p = j["platformInfo"];
        Platform got{p["cubeCoreCnt"].get<std::uint32_t>(),
                     p["vectorCoreCnt"].get<std::uint32_t>()};
        if (p.contains("deterministicLevel"))
            got.deterministic_level = p["deterministicLevel"].get<std::int8_t>();
        platform = got;
    } catch (const nlohmann::json::exception& e) {
        platform.reset();
        warnings.push_back(std::string("Failed to read static kernel json file of platformInfo, "
                                       "reason: ") +
                           e.what());
    }
}

// 9.0.x's UpdateRunInfoForStaticJson (branch 9.0.0 94c65c3 indv_collecter.cpp): runInfo only,
// the workspace read inside that branch; without runInfo nothing is read and the OpType's
// previous run info stays (`carried`, as NnopbaseJsonInfo lives as long as the OpType).
// Whatever the result, 9.0.x applies a static kernel's run info only
// to an MC2 operator (9.0.0 indv_executor.cpp NnopbaseExecutorTilingAndUpdateBinInfo).
inline bool read_run_info_9_0(const nlohmann::json& j, bool& carried, StaticKernel& k) {
    if (!j.contains("runInfo")) {
        k.run_info_inherited = carried;
        return carried;
    }
    carried = read_run_info(j, k.warnings); // with runInfo, master reads the same fields
    return carried;
}

// The run info and platformInfo `line` reads for `k` from its JSON `j`; `platform` and
// `run_info` are the OpType's state.
inline void read_extra_info_line(const nlohmann::json& j, Line line, StaticKernel& k,
                                 std::optional<Platform>& platform, bool& run_info) {
    const auto& rules = line_rules(line);
    k.has_run_info =
        rules.run_info_fallback ? read_run_info(j, k.warnings) : read_run_info_9_0(j, run_info, k);
    read_platform(j, platform, k.warnings);
    if (platform && !rules.deterministic_match)
        platform->deterministic_level = -1; // not read by 9.0.x and 9.1.x
}

// UpdateStaticJsonExtraInfo for `k`; `platform` is the OpType's state, carried from entry to
// entry as the runtime carries it.
inline void read_extra_info(StaticKernel& k, std::optional<Platform>& platform,
                            Line line = Line::master, bool* run_info = nullptr) {
    nlohmann::json j;
    if (k.json_path.empty()) {
        k.warnings.push_back("binPath has no '.o': no kernel JSON is read");
    } else {
        std::ifstream in(k.json_path);
        j = nlohmann::json::parse(in, nullptr, false);
        if (!in.is_open() || j.is_discarded())
            k.warnings.push_back("cannot read " + k.json_path);
    }
    bool unused = false;
    if (k.warnings.empty())
        read_extra_info_line(j, line, k, platform, run_info != nullptr ? *run_info : unused);
    k.platform = platform;
}

// The entry as the runtime takes it, or the reason it drops it.
inline std::string read_entry(const nlohmann::json& entry, const std::string& base,
                              StaticKernel& k) {
    if (!entry.is_object() || !entry_keys(entry, k))
        return "no simplifiedKey (a string or a list of strings)";
    auto core = entry.find("coreType");
    auto path = entry.find("binPath");
    if (core == entry.end() || !core->is_number_integer() || path == entry.end() ||
        !path->is_string())
        return "no integer coreType or no binPath string";
    k.core_type = core->get<int>();
    k.bin_path = base + path->get<std::string>();
    auto cut = k.bin_path.find(".o");
    k.json_path = cut == std::string::npos ? "" : k.bin_path.substr(0, cut) + ".json";
    auto desc = entry.find("binDesc");
    if (desc == entry.end() || !desc->is_object())
        return "no binDesc";
    auto block = desc->find("blockDim");
    auto name = desc->find("kernelName");
    if (block == desc->end() || !block->is_number_unsigned() || name == desc->end() ||
        !name->is_string())
        return "binDesc without blockDim or kernelName";
    k.block_dim = block->get<std::uint32_t>();
    k.kernel_name = name->get<std::string>();
    if (auto ws = desc->find("workspace"); ws != desc->end()) {
        if (!ws->is_array() || ws->size() > 20)
            return "binDesc.workspace is not a list of at most 20 sizes";
        for (const auto& w : *ws) {
            if (!w.is_number_unsigned())
                return "binDesc.workspace has a size that is not a number";
            k.workspace.push_back(w.get<std::uint64_t>());
        }
    }
    return "";
}

/// realpath(path) as mmRealPath gives it (a buffer of PATH_MAX), "" when it does not resolve.
inline std::string real_path(const std::string& path) {
    char resolved[PATH_MAX];
    return ::realpath(path.c_str(), resolved) == nullptr ? std::string() : std::string(resolved);
}

/// GetBuiltInBasePath: the base the runtime reads static kernels from when it starts, given
/// $ASCEND_HOME_PATH and $ASCEND_OPP_PATH (nullptr: unset); "" for none.
inline std::string builtin_base_path(const char* home, const char* opp_path) {
    if (home != nullptr) {
        const std::string latest = std::string(home) + "/opp_latest";
        if (!real_path(latest).empty())
            return latest; // as written: its symbolic links stay in every binPath
    }
    return opp_path != nullptr ? opp_path : "";
}

/// aclnnReselectStaticKernelWithPath(path): the base its reload reads in place of the built-in
/// one, realpath(path) (a file resolves too: its index is then simply not found); "" when the
/// call fails (ACLNN_ERR_PARAM_INVALID "Invalid static kernel path") and reloads nothing.
inline std::string reselect_base_path(const std::string& path) {
    return real_path(path);
}

/// Reads `<opp>/static_kernel/ai_core/config/<soc_dir>/binary_info_config.json` as the runtime
/// of `line` does.
inline Reading read_static_kernels(const std::string& opp, const std::string& soc_dir,
                                   Line line = Line::master) {
    Reading r;
    r.line = line;
    if (opp.empty()) // no base: the runtime reads no static kernels
        return r;
    const std::string base = opp + "/static_kernel/ai_core/";
    r.index_path = base + "config/" + soc_dir + "/binary_info_config.json";
    std::ifstream in(r.index_path);
    nlohmann::json index = nlohmann::json::parse(in, nullptr, false);
    if (!in.is_open() || index.is_discarded() || !index.is_object())
        return r;
    r.index_read = true;
    for (const auto& [op_type, op] : index.items()) {
        if (!op.is_object() || !op.contains("staticList"))
            continue;
        std::optional<Platform> platform; // NnopbaseJsonInfo lives as long as the OpType
        bool run_info = false;
        for (const auto& entry : op["staticList"]) {
            StaticKernel k;
            k.op_type = op_type;
            if (auto why = read_entry(entry, base, k); !why.empty()) {
                r.skipped.push_back(op_type + ": " + why);
                continue;
            }
            read_extra_info(k, platform, line, &run_info);
            r.kernels.push_back(std::move(k));
        }
    }
    return r;
}

/// What the runtime has registered after it read `start` and a reselect then reloaded
/// `reload`: the start's kernels first, the reload's after them (the index read is the
/// reload's). A Registry over it lets a kernel of the start hide the reload's under one key.
inline Reading reloaded(const Reading& start, const Reading& reload) {
    Reading r = reload;
    r.kernels = start.kernels;
    r.kernels.insert(r.kernels.end(), reload.kernels.begin(), reload.kernels.end());
    return r;
}

// MatchBinWithPlatformInfo: a kernel with platformInfo runs only on a device with its core
// counts (and its deterministicLevel, when it gives one).
inline bool platform_fits(const StaticKernel& k, const Platform& device) {
    if (!k.platform)
        return true;
    const bool cores = k.platform->aic == device.aic && k.platform->aiv == device.aiv;
    return k.platform->deterministic_level == -1
               ? cores
               : cores && k.platform->deterministic_level == device.deterministic_level;
}

/// What a lookup found: the kernel (nullptr: none) and whether the key with strides missed
/// first (the runtime's "Cannot find static kernel bin with stride information" warning).
struct Selection {
    const StaticKernel* kernel = nullptr;
    bool retried = false;
};

/// The kernels registered from a reading, in the runtime's order, by byte key.
class Registry {
  public:
    explicit Registry(const Reading& r) : m_line(r.line) {
        for (const auto& k : r.kernels)
            for (const auto& text : k.keys) {
                Key key = convert_static_key(text);
                // A byte key already registered (with a fitting platformInfo) is not added again.
                if (!find(key, k.platform ? &*k.platform : nullptr))
                    m_entries.push_back({std::move(key), &k});
            }
    }

    /// NnopbaseCollectorFindBinInfo: the first kernel under `key` whose platformInfo fits
    /// `device` (nullptr: any fits).
    const StaticKernel* find(const Key& key, const Platform* device) const {
        for (const auto& e : m_entries)
            if (e.key == key && (device == nullptr || platform_fits(*e.kernel, *device)))
                return e.kernel;
        return nullptr;
    }

    /// A call of `op_type` looked up as `path` does: with strides, then without.
    /// On a line without the stride lookup (9.0.x): one lookup, without strides. With
    /// ctx.pcie, the key with strides carries the PCIe segment (pcie_call_key).
    Selection select(Path path, std::string_view op_type, const Context& ctx,
                     std::span<const AclTensor> tensors) const {
        const Platform device{ctx.aic, ctx.aiv, ctx.deterministic_level};
        if (!line_rules(m_line).stride_lookup)
            return {find(path_call_key(path, op_type, ctx, tensors, false), &device), false};
        const Key strided = ctx.pcie ? pcie_call_key(path, op_type, ctx, tensors)
                                     : path_call_key(path, op_type, ctx, tensors, true);
        if (auto k = find(strided, &device))
            return {k, false};
        return {find(path_call_key(path, op_type, ctx, tensors, false), &device), true};
    }

  private:
    struct Entry {
        Key key;
        const StaticKernel* kernel;
    };
    Line m_line;
    std::vector<Entry> m_entries;
};

} // namespace skforge::test::opbase
