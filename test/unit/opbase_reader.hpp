// SPDX-License-Identifier: Apache-2.0
#pragma once

// A reader of an installed static-kernel tree that does what CANN's runtime does, written from
// opbase's code (src/nnopbase/individual_op/executor/indv_collector.cpp; nothing copied):
//   NnopbaseCollectorGetStaticKernelPathAndReadConfig: <opp>/static_kernel/ai_core/config/<soc
//     dir>/binary_info_config.json, the SoC directory being the SoC family in lower case;
//   NnopbaseCollectorReadStaticKernelOpInfoConfig: for every OpType only its `staticList`;
//   NnopbaseUpdateCommonJsonInfo: simplifiedKey (a list of strings, or one string), an integer
//     coreType, binPath relative to static_kernel/ai_core/; a bad entry is skipped, silently;
//   NnopbaseUpdateStaticJsonInfo: binDesc {blockDim, kernelName, workspace (at most 20)};
//   UpdateStaticJsonExtraInfo: the kernel's JSON is binPath cut at its first ".o", plus ".json";
//   NnopbaseCollectorConvertStaticVerbKey / NnopbaseCollectorGenStaticKey: the byte keys a
//     simplifiedKey and a call are turned into; a kernel is found when they are equal.
// Used by unit tests and by the opbase_read program the whole-program tests run.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::test::opbase {

/// A key as the runtime compares them: bytes.
using Key = std::vector<std::uint8_t>;

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
};

/// Everything the runtime would take from one SoC's index, and what it would skip.
struct Reading {
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

/// One tensor of a call: ge::DataType, ge::Format (storage), storage shape.
struct CallTensor {
    std::uint64_t dtype;
    std::uint64_t format;
    std::vector<std::int64_t> dims;
};

/// The byte key the runtime builds for a call without strides (its second lookup) of an
/// operator without attributes or value-dependent inputs.
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

// The keys of an entry: a list of strings, or one string.
inline bool entry_keys(const nlohmann::json& entry, std::vector<std::string>& keys) {
    auto it = entry.find("simplifiedKey");
    if (it == entry.end())
        return false;
    if (it->is_string()) {
        keys = {it->get<std::string>()};
        return true;
    }
    if (!it->is_array())
        return false;
    for (const auto& k : *it) {
        if (!k.is_string())
            return false;
        keys.push_back(k.get<std::string>());
    }
    return true;
}

// The entry as the runtime takes it, or the reason it drops it.
inline std::string read_entry(const nlohmann::json& entry, const std::string& base,
                              StaticKernel& k) {
    if (!entry.is_object() || !entry_keys(entry, k.keys))
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

/// Reads `<opp>/static_kernel/ai_core/config/<soc_dir>/binary_info_config.json` as the runtime
/// does.
inline Reading read_static_kernels(const std::string& opp, const std::string& soc_dir) {
    Reading r;
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
        for (const auto& entry : op["staticList"]) {
            StaticKernel k;
            k.op_type = op_type;
            if (auto why = read_entry(entry, base, k); !why.empty())
                r.skipped.push_back(op_type + ": " + why);
            else
                r.kernels.push_back(std::move(k));
        }
    }
    return r;
}

} // namespace skforge::test::opbase
