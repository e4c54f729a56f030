// SPDX-License-Identifier: Apache-2.0
#include "skforge/kernel/runtime_key.hpp"

#include <charconv>

namespace skforge::kernel {

namespace {

// opbase's branches (share/doc/explain.md, "The runtime's rules per line").
constexpr LineRules k_lines[] = {
    {CannLine::v9_0, "9.0.x", false, false, false, false},
    {CannLine::v9_1, "9.1.x", true, true, false, true},
    {CannLine::master, "master", true, true, true, true},
};

void append8(RuntimeKey& key, std::uint64_t v) {
    for (int i = 0; i < 8; ++i)
        key.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

bool hex_digit(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// "(a,b,c)" in hex at `text`, advancing it; nullopt when it is not one.
std::optional<std::vector<std::int64_t>> parse_list(std::string_view& text) {
    if (text.empty() || text.front() != '(')
        return std::nullopt;
    auto close = text.find(')');
    if (close == std::string_view::npos)
        return std::nullopt;
    std::string_view body = text.substr(1, close - 1);
    text.remove_prefix(close + 1);
    std::vector<std::int64_t> values;
    while (!body.empty()) {
        std::uint64_t v = 0;
        auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), v, 16);
        if (ec != std::errc())
            return std::nullopt;
        values.push_back(static_cast<std::int64_t>(v));
        body.remove_prefix(static_cast<std::size_t>(end - body.data()));
        if (!body.empty() && body.front() == ',')
            body.remove_prefix(1);
        else if (!body.empty())
            return std::nullopt;
    }
    return values;
}

std::optional<std::uint64_t> parse_hex(std::string_view& text) {
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 16);
    if (ec != std::errc())
        return std::nullopt;
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    return v;
}

// One "<dtype>,<format>,(<dims>)[,(<strides>),<offset>]" segment.
std::optional<KeyTensor> parse_tensor(std::string_view seg) {
    KeyTensor t;
    auto dtype = parse_hex(seg);
    if (!dtype || seg.empty() || seg.front() != ',')
        return std::nullopt;
    seg.remove_prefix(1);
    auto format = parse_hex(seg);
    if (!format || seg.empty() || seg.front() != ',')
        return std::nullopt;
    seg.remove_prefix(1);
    auto dims = parse_list(seg);
    if (!dims)
        return std::nullopt;
    t.dtype = static_cast<std::uint32_t>(*dtype);
    t.format = static_cast<std::uint32_t>(*format);
    t.shape = *dims;
    if (seg.empty())
        return t;
    if (seg.front() != ',')
        return std::nullopt;
    seg.remove_prefix(1);
    t.strides = parse_list(seg);
    if (!t.strides || seg.empty() || seg.front() != ',')
        return std::nullopt;
    seg.remove_prefix(1);
    auto offset = parse_hex(seg);
    if (!offset || !seg.empty())
        return std::nullopt;
    t.offset = static_cast<std::int64_t>(*offset);
    return t;
}

} // namespace

std::span<const LineRules> cann_lines() {
    return k_lines;
}

const LineRules& line_rules(CannLine line) {
    for (const auto& r : k_lines)
        if (r.line == line)
            return r;
    return k_lines[0];
}

std::optional<CannLine> cann_line_of(std::string_view version) {
    if (version == "master")
        return CannLine::master;
    int major = 0;
    int minor = 0;
    auto [p, ec] = std::from_chars(version.data(), version.data() + version.size(), major);
    if (ec != std::errc() || p == version.data() + version.size() || *p != '.')
        return std::nullopt;
    auto [q, ec2] = std::from_chars(p + 1, version.data() + version.size(), minor);
    if (ec2 != std::errc())
        return std::nullopt;
    if (major < 9)
        return std::nullopt;
    if (major == 9 && minor == 0)
        return CannLine::v9_0;
    if (major == 9 && minor == 1)
        return CannLine::v9_1;
    return CannLine::master;
}

std::vector<KeyTensor> runtime_key_tensors(KeyPath path, const RuntimeCall& call,
                                           bool with_strides) {
    std::vector<KeyTensor> keyed;
    for (const auto& t : call.tensors) {
        KeyTensor k{t.dtype, t.format, t.storage_shape};
        if (path == KeyPath::aclnn_executor) {
            if (format_keyed_as_nd(t.format))
                k.format = *ge_format("ND");
            if (!t.view_shape.empty())
                k.shape = t.view_shape;
            if (with_strides) {
                k.strides = t.view_strides.value_or(contiguous_strides(k.shape));
                k.offset = t.offset;
            }
        } else if (with_strides) {
            k.strides = std::vector<std::int64_t>{}; // an aclCreateTensor's gert tensor: none
        }
        keyed.push_back(std::move(k));
    }
    return keyed;
}

int runtime_key_deterministic(const RuntimeCall& call) {
    return call.deterministic_level == 0 ? 0 : 1;
}

int runtime_key_impl_mode(KeyPath path, const RuntimeCall& call) {
    return path == KeyPath::aclnn_executor ? 0 : call.hostapi_impl_mode;
}

RuntimeKey runtime_call_key(KeyPath path, const RuntimeCall& call, bool with_strides) {
    RuntimeKey key(call.op_type.begin(), call.op_type.end());
    append8(key, static_cast<std::uint64_t>(runtime_key_deterministic(call)));
    append8(key, static_cast<std::uint64_t>(runtime_key_impl_mode(path, call)));
    for (const auto& t : runtime_key_tensors(path, call, with_strides)) {
        append8(key, t.dtype);
        append8(key, t.format);
        for (auto d : t.shape)
            append8(key, static_cast<std::uint64_t>(d));
        if (!t.strides)
            continue;
        for (auto s : *t.strides)
            append8(key, static_cast<std::uint64_t>(s));
        append8(key, static_cast<std::uint64_t>(t.offset));
    }
    return key;
}

std::string runtime_call_key_text(KeyPath path, const RuntimeCall& call, bool with_strides) {
    auto keyed = runtime_key_tensors(path, call, with_strides);
    return static_simplified_key(call.op_type, runtime_key_deterministic(call),
                                 runtime_key_impl_mode(path, call), keyed);
}

std::vector<RuntimeLookup> runtime_lookups(const LineRules& rules, KeyPath path,
                                           const RuntimeCall& call) {
    std::vector<RuntimeLookup> lookups;
    auto add = [&](bool strides) {
        lookups.push_back({strides, runtime_call_key(path, call, strides),
                           runtime_call_key_text(path, call, strides)});
    };
    if (rules.stride_lookup)
        add(true);
    if (!rules.stride_lookup || rules.retry_without_strides)
        add(false);
    return lookups;
}

std::optional<RuntimeKey> runtime_index_key(std::string_view text) {
    RuntimeKey key;
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
        if (c == '_') { // an absent tensor: appended without ending a run of digits
            append8(key, '_');
            continue;
        }
        if (hex_digit(c)) {
            value = (value << 4) | static_cast<std::uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
            if (++digits == 16)
                return std::nullopt;
            continue;
        }
        if (digits > 0)
            append8(key, value);
        value = 0;
        digits = 0;
    }
    return key;
}

std::optional<ParsedKey> parse_simplified_key(std::string_view text) {
    ParsedKey k;
    auto slash = text.find('/');
    if (slash == std::string_view::npos)
        return std::nullopt;
    k.op_type = std::string(text.substr(0, slash));
    text.remove_prefix(slash + 1);
    slash = text.find('/');
    std::string_view head = text.substr(0, slash);
    if (head.size() != 7 || head.substr(0, 2) != "d=" || head.substr(3, 3) != ",p=")
        return std::nullopt;
    k.deterministic = head[2] - '0';
    k.impl_mode = head[6] - '0';
    while (slash != std::string_view::npos) {
        text.remove_prefix(slash + 1);
        slash = text.find('/');
        auto t = parse_tensor(text.substr(0, slash));
        if (!t)
            return std::nullopt;
        k.tensors.push_back(std::move(*t));
    }
    return k;
}

bool platform_fits(const LineRules& rules, const std::optional<KernelPlatform>& kernel,
                   const KernelPlatform& device) {
    if (!kernel)
        return true;
    if (kernel->aic != device.aic || kernel->aiv != device.aiv)
        return false;
    return !rules.match_deterministic_level || kernel->deterministic_level == -1 ||
           kernel->deterministic_level == device.deterministic_level;
}

} // namespace skforge::kernel
