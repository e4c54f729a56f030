// SPDX-License-Identifier: Apache-2.0
#include "skforge/kernel/static_index.hpp"

#include <algorithm>
#include <utility>

namespace skforge::kernel {

namespace {

template <class T, std::size_t N>
std::optional<T> lookup(const std::pair<std::string_view, T> (&table)[N], std::string_view name) {
    for (const auto& [n, v] : table)
        if (n == name)
            return v;
    return std::nullopt;
}

// The names opbase maps to CoreType (executor/indv_bininfo.h, g_nnopbaseKernelTypeMap).
constexpr std::pair<std::string_view, CoreType> k_core_types[] = {
    {"MIX", CoreType::mix},
    {"AiCore", CoreType::ai_core},
    {"VectorCore", CoreType::vector_core},
    {"MIX_AICORE", CoreType::mix_ai_core},
    {"MIX_VECTOR_CORE", CoreType::mix_vector_core},
    {"MIX_AIC", CoreType::mix},
};

// ge::DataType (metadef inc/external/graph/c_types.h), by the names graphs use.
constexpr std::pair<std::string_view, std::uint32_t> k_dtypes[] = {
    {"float", 0},        {"float32", 0},      {"float16", 1},      {"half", 1},
    {"int8", 2},         {"int32", 3},        {"uint8", 4},        {"int16", 6},
    {"uint16", 7},       {"uint32", 8},       {"int64", 9},        {"uint64", 10},
    {"double", 11},      {"float64", 11},     {"bool", 12},        {"complex64", 16},
    {"complex128", 17},  {"qint8", 18},       {"qint16", 19},      {"qint32", 20},
    {"quint8", 21},      {"quint16", 22},     {"bfloat16", 27},    {"bf16", 27},
    {"int4", 29},        {"uint1", 30},       {"int2", 31},        {"uint2", 32},
    {"complex32", 33},   {"hifloat8", 34},    {"float8_e5m2", 35}, {"float8_e4m3fn", 36},
    {"float8_e8m0", 37}, {"float6_e3m2", 38}, {"float6_e2m3", 39}, {"float4_e2m1", 40},
    {"float4_e1m2", 41}, {"hifloat4", 42},
};

// ge::Format (metadef inc/external/graph/c_types.h), without the FORMAT_ prefix.
constexpr std::pair<std::string_view, std::uint32_t> k_formats[] = {
    {"NCHW", 0},
    {"NHWC", 1},
    {"ND", 2},
    {"NC1HWC0", 3},
    {"FRACTAL_Z", 4},
    {"NC1C0HWPAD", 5},
    {"NHWC1C0", 6},
    {"FSR_NCHW", 7},
    {"FRACTAL_DECONV", 8},
    {"C1HWNC0", 9},
    {"FRACTAL_DECONV_TRANSPOSE", 10},
    {"FRACTAL_DECONV_SP_STRIDE_TRANS", 11},
    {"NC1HWC0_C04", 12},
    {"FRACTAL_Z_C04", 13},
    {"CHWN", 14},
    {"FRACTAL_DECONV_SP_STRIDE8_TRANS", 15},
    {"HWCN", 16},
    {"NC1KHKWHWC0", 17},
    {"BN_WEIGHT", 18},
    {"FILTER_HWCK", 19},
    {"C1HWNCoC0", 25},
    {"MD", 26},
    {"NDHWC", 27},
    {"FRACTAL_ZZ", 28},
    {"FRACTAL_NZ", 29},
    {"NCDHW", 30},
    {"DHWCN", 31},
    {"NDC1HWC0", 32},
    {"FRACTAL_Z_3D", 33},
    {"CN", 34},
    {"NC", 35},
    {"DHWNC", 36},
    {"FRACTAL_Z_3D_TRANSPOSE", 37},
    {"FRACTAL_ZN_LSTM", 38},
    {"FRACTAL_Z_G", 39},
    {"ND_RNN_BIAS", 43},
    {"FRACTAL_ZN_RNN", 44},
    {"NYUV", 45},
    {"NYUV_A", 46},
    {"NCL", 47},
    {"FRACTAL_Z_WINO", 48},
    {"C1HWC0", 49},
    {"FRACTAL_NZ_C0_16", 50},
    {"FRACTAL_NZ_C0_32", 51},
    {"FRACTAL_NZ_C0_2", 52},
    {"FRACTAL_NZ_C0_4", 53},
    {"FRACTAL_NZ_C0_8", 54},
};

void append_hex(std::string& out, std::uint64_t v) {
    static constexpr char k_digits[] = "0123456789abcdef";
    char buf[16];
    int n = 0;
    do {
        buf[n++] = k_digits[v & 0xf];
        v >>= 4;
    } while (v != 0);
    while (n > 0)
        out += buf[--n];
}

} // namespace

CoreType core_type_of(KernelType type) {
    switch (type) {
    case KernelType::aiv_only:
        return CoreType::vector_core;
    case KernelType::aic_only:
        return CoreType::ai_core;
    default:
        return CoreType::mix;
    }
}

std::optional<CoreType> parse_core_type(std::string_view text) {
    return lookup(k_core_types, text);
}

std::optional<CoreType> kernel_core_type(const KernelMeta& meta) {
    if (auto named = parse_core_type(meta.core_type))
        return named;
    if (meta.kernel_type)
        return core_type_of(*meta.kernel_type);
    if (meta.magic_name == "RT_DEV_BINARY_MAGIC_ELF_AIVEC")
        return CoreType::vector_core;
    if (meta.magic_name == "RT_DEV_BINARY_MAGIC_ELF_AICUBE")
        return CoreType::ai_core;
    return std::nullopt;
}

std::optional<std::uint32_t> ge_data_type(std::string_view dtype) {
    return lookup(k_dtypes, dtype);
}

std::optional<std::uint32_t> ge_format(std::string_view format) {
    return lookup(k_formats, format);
}

namespace {

template <class T, std::size_t N>
std::optional<std::string_view> name_of(const std::pair<std::string_view, T> (&table)[N], T value) {
    for (const auto& [n, v] : table)
        if (v == value)
            return n;
    return std::nullopt;
}

} // namespace

std::optional<std::string_view> ge_data_type_name(std::uint32_t code) {
    return name_of(k_dtypes, code);
}

std::optional<std::string_view> ge_format_name(std::uint32_t code) {
    return name_of(k_formats, code);
}

namespace {

void append_list(std::string& key, std::span<const std::int64_t> values) {
    key += '(';
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i != 0)
            key += ',';
        append_hex(key, static_cast<std::uint64_t>(values[i]));
    }
    key += ')';
}

// FormatsLikeND (opbase src/nnopbase/individual_op/executor/indv_executor_tensor.cpp).
constexpr std::uint32_t k_formats_like_nd[] = {47 /*NCL*/, 30 /*NCDHW*/, 31 /*DHWCN*/, 1 /*NHWC*/,
                                               0 /*NCHW*/};

// The SoCs whose platform_config core counts skforge has from a source it can cite
// (share/doc/cann-conformance.md, "platformInfo"); others get no platformInfo.
constexpr std::pair<std::string_view, std::pair<std::uint32_t, std::uint32_t>> k_platform_cores[] =
    {
        {"Ascend910B1", {24, 48}},
        {"Ascend910B2", {24, 48}},
        {"Ascend910B4", {20, 40}},
        {"Ascend950PR_958b", {32, 64}},
};

void add_once(std::vector<std::string>& keys, std::string key) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
        keys.push_back(std::move(key));
}

} // namespace

std::string static_simplified_key(std::string_view op_type, int deterministic, int impl_mode,
                                  std::span<const KeyTensor> tensors) {
    std::string key(op_type);
    key += "/d=" + std::to_string(deterministic) + ",p=" + std::to_string(impl_mode);
    for (const auto& t : tensors) {
        key += '/';
        append_hex(key, t.dtype);
        key += ',';
        append_hex(key, t.format);
        key += ',';
        append_list(key, t.shape);
        if (t.strides) {
            key += ',';
            append_list(key, *t.strides);
            key += ',';
            append_hex(key, static_cast<std::uint64_t>(t.offset));
        }
    }
    return key;
}

bool format_keyed_as_nd(std::uint32_t format) {
    return std::find(std::begin(k_formats_like_nd), std::end(k_formats_like_nd), format) !=
           std::end(k_formats_like_nd);
}

std::vector<std::int64_t> contiguous_strides(std::span<const std::int64_t> shape) {
    std::vector<std::int64_t> strides(shape.size());
    std::int64_t step = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
        strides[i] = step;
        step *= shape[i];
    }
    return strides;
}

KeyTensor path_key_tensor(KeyPath path, const CallTensor& t, bool with_strides) {
    KeyTensor k{t.dtype, t.format, t.storage_shape};
    if (path == KeyPath::aclnn_executor) {
        if (format_keyed_as_nd(t.format))
            k.format = *ge_format("ND");
        k.shape = t.view_shape.empty() ? t.storage_shape : t.view_shape;
        if (with_strides)
            k.strides = contiguous_strides(k.shape);
    } else if (with_strides) {
        k.strides = std::vector<std::int64_t>{}; // an aclTensor's gert tensor has none
    }
    return k;
}

std::vector<int> hostapi_impl_modes(std::string_view impl_mode) {
    if (impl_mode.empty())
        return {1, 2};
    if (impl_mode == "high_performance")
        return {1};
    if (impl_mode == "high_precision")
        return {2};
    return {};
}

std::vector<std::string> static_call_keys(std::string_view op_type,
                                          std::span<const int> deterministic,
                                          std::span<const int> hostapi_impl,
                                          std::span<const CallTensor> tensors) {
    std::vector<std::string> keys;
    auto add = [&](KeyPath path, int d, int p) {
        for (bool strides : {true, false}) {
            std::vector<KeyTensor> keyed;
            for (const auto& t : tensors)
                keyed.push_back(path_key_tensor(path, t, strides));
            add_once(keys, static_simplified_key(op_type, d, p, keyed));
        }
    };
    for (int d : deterministic) {
        add(KeyPath::aclnn_executor, d, 0);
        for (int p : hostapi_impl)
            add(KeyPath::hostapi, d, p);
    }
    return keys;
}

std::optional<std::pair<std::uint32_t, std::uint32_t>> platform_core_counts(std::string_view soc) {
    for (const auto& [name, cores] : k_platform_cores)
        if (name == soc)
            return cores;
    return std::nullopt;
}

} // namespace skforge::kernel
