// SPDX-License-Identifier: Apache-2.0
#include "skforge/graph/options.hpp"

#include <charconv>
#include <set>

namespace skforge::graph {

namespace {

std::optional<long> parse_int(std::string_view text) {
    long v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size() || text.empty())
        return std::nullopt;
    return v;
}

std::vector<std::string> split_list(std::string_view text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        auto comma = text.find(',', start);
        auto item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                                       : comma - start);
        if (!item.empty())
            out.emplace_back(item);
        if (comma == std::string_view::npos)
            break;
        start = comma + 1;
    }
    return out;
}

struct ScopeParser {
    ScopeOptions& o;
    const Location& where;
    Diagnostics& diags;

    void bad(const std::string& key, const std::string& value, const std::string& expected) {
        diags.error(where, "scope option '" + key + "=" + value + "' is invalid",
                    "expected " + expected);
    }
    std::optional<long> ranged(const std::string& key, const std::string& v, long lo, long hi) {
        auto n = parse_int(v);
        if (!n || *n < lo || *n > hi) {
            bad(key, v, std::to_string(lo) + ".." + std::to_string(hi));
            return std::nullopt;
        }
        return n;
    }
    void flag(const std::string& key, const std::string& v, bool& out) {
        if (auto n = ranged(key, v, 0, 1))
            out = *n == 1;
    }
    void patterns(const std::string& key, const std::string& v, std::vector<std::string>& out) {
        out = split_list(v);
        for (const auto& p : out)
            if (auto why = check_op_type_pattern(p))
                bad(key, v, "comma-separated OpType patterns: '" + p + "' " + *why);
    }

    // Applies one key; returns false for an unknown key.
    bool apply(const std::string& key, const std::string& v) {
        if (key == "func-align") {
            auto n = parse_int(v);
            if (!n || *n < 0 || *n > (1 << 20) || (*n != 0 && (*n < 2 || (*n & (*n - 1)) != 0)))
                bad(key, v, "0 or a power of two >= 2");
            else
                o.func_align = static_cast<std::uint32_t>(*n);
        } else if (key == "preload-code") {
            if (v == "none")
                o.preload_code = PreloadCode::none;
            else if (v == "per-func")
                o.preload_code = PreloadCode::per_func;
            else if (v == "max")
                o.preload_code = PreloadCode::max;
            else
                bad(key, v, "max, none or per-func");
        } else if (key == "early-start") {
            if (auto n = ranged(key, v, 0, 2))
                o.early_start = static_cast<int>(*n);
        } else if (key == "stream-fusion") {
            flag(key, v, o.stream_fusion);
        } else if (key == "debug-dcci-all") {
            flag(key, v, o.debug_dcci_all);
        } else if (key == "debug-sync-all") {
            flag(key, v, o.debug_sync_all);
        } else if (key == "feed-sync-all") {
            flag(key, v, o.feed_sync_all);
        } else if (key == "profiling") {
            flag(key, v, o.profiling);
        } else if (key == "compile-options") {
            o.compile_options = v;
        } else if (key == "strict-scope-check") {
            if (v == "bypass")
                o.strict_scope_check = StrictScopeCheck::bypass;
            else if (v == "abort")
                o.strict_scope_check = StrictScopeCheck::abort;
            else
                bad(key, v, "bypass or abort");
        } else if (key == "dcci-before-kernel-start") {
            patterns(key, v, o.dcci_before_kernel_start);
        } else if (key == "dcci-after-kernel-end") {
            patterns(key, v, o.dcci_after_kernel_end);
        } else if (key == "dcci-disable-on-kernel") {
            patterns(key, v, o.dcci_disable_on_kernel);
        } else if (key == "split-mode") {
            if (auto n = ranged(key, v, 1, 64))
                o.split_mode = static_cast<std::uint32_t>(*n);
        } else if (key == "debug-aic-num") {
            if (auto n = ranged(key, v, 0, 1024))
                o.debug_aic_num = static_cast<int>(*n);
        } else if (key == "debug-aiv-num") {
            if (auto n = ranged(key, v, 0, 2048))
                o.debug_aiv_num = static_cast<int>(*n);
        } else {
            return false;
        }
        return true;
    }
};

bool ratio_ok(int aic, int aiv) {
    return (aic > 0 && aiv == 0) || (aic == 0 && aiv > 0) || (aic > 0 && aiv == aic) ||
           (aic > 0 && aiv == 2 * aic);
}

} // namespace

ScopeOptions parse_scope_options(std::string_view text, const ScopeOptions& base,
                                 const Location& where, Diagnostics& diags) {
    ScopeOptions o = base;
    ScopeParser p{o, where, diags};
    std::set<std::string> seen;
    std::size_t start = 0;
    while (start <= text.size()) {
        auto colon = text.find(':', start);
        std::string pair(text.substr(start, colon == std::string_view::npos ? std::string_view::npos
                                                                            : colon - start));
        start = colon == std::string_view::npos ? text.size() + 1 : colon + 1;
        if (pair.empty())
            continue;
        auto eq = pair.find('=');
        if (eq == std::string::npos) {
            diags.warning(where, "scope option '" + pair + "' has no '=' and is ignored",
                          "write key=value");
            continue;
        }
        std::string key = pair.substr(0, eq);
        std::string value = pair.substr(eq + 1);
        if (!seen.insert(key).second) {
            diags.error(where, "scope option '" + key + "' is given twice", "keep one");
            continue;
        }
        if (!p.apply(key, value))
            diags.error(where, "unknown scope option '" + key + "'",
                        "see graph-format.md in /usr/share/doc/skforge/ for the keys");
    }
    // One count alone: the other kind gets no cores, as CANN's SuperKernel compiler reads an
    // absent count (super_kernel_op_infos.py, op_options.get('debug-aic-num', 0)).
    if (o.debug_aic_num.has_value() != o.debug_aiv_num.has_value()) {
        if (!o.debug_aic_num)
            o.debug_aic_num = 0;
        else
            o.debug_aiv_num = 0;
    }
    if (o.debug_aic_num && !ratio_ok(*o.debug_aic_num, *o.debug_aiv_num))
        diags.error(where,
                    "debug-aic-num:debug-aiv-num is " + std::to_string(*o.debug_aic_num) + ":" +
                        std::to_string(*o.debug_aiv_num),
                    "the ratio must be 1:0, 0:1, 1:1 or 1:2");
    return o;
}

namespace {
struct GraphKey {
    const char* name;
    long lo, hi;
    bool list;
};
constexpr GraphKey k_graph_keys[] = {
    {"preload_code", 0, 2, false},
    {"split_mode", 1, 4, false},
    {"stream_fusion", 0, 1, false},
    {"early_start", 0, 1, false},
    {"constant_codegen", 0, 1, false},
    {"auto_op_parallel", 0, 1, false},
    {"debug_sync_all", 0, 1, false},
    {"debug_op_exec_trace", 0, 1, false},
    {"debug_cross_core_sync_check", 0, 1, false},
    {"debug_per_op_max_core_num", 0, 1, false},
    {"dcci_before_kernel_start", 0, 0, true},
    {"dcci_after_kernel_end", 0, 0, true},
    {"dcci_disable_on_kernel", 0, 0, true},
    {"ubuf_lock_ignore_kernel", 0, 0, true},
};
} // namespace

std::optional<std::string> check_graph_option(const std::string& key, const std::string& scalar,
                                              const std::vector<std::string>* list,
                                              const Location& where, Diagnostics& diags) {
    for (const auto& k : k_graph_keys) {
        if (key != k.name)
            continue;
        if (k.list) {
            std::vector<std::string> items = list ? *list : split_list(scalar);
            std::string joined;
            for (const auto& p : items) {
                if (auto why = check_op_type_pattern(p)) {
                    diags.error(where, "'" + key + "' item '" + p + "' " + *why);
                    return std::nullopt;
                }
                joined += (joined.empty() ? "" : ",") + p;
            }
            return joined;
        }
        auto n = list ? std::nullopt : parse_int(scalar);
        if (!n || *n < k.lo || *n > k.hi) {
            diags.error(where, "'" + key + "' must be an integer " + std::to_string(k.lo) + ".." +
                                   std::to_string(k.hi));
            return std::nullopt;
        }
        return std::to_string(*n);
    }
    diags.error(where, "unknown super_kernel_optimize_options key '" + key + "'",
                "see graph-format.md in /usr/share/doc/skforge/ for the keys");
    return std::nullopt;
}

std::string flatten_graph_options(const GraphOptionMap& options) {
    std::string out;
    for (const auto& [k, v] : options)
        out += (out.empty() ? "" : ":") + k + "=" + v;
    return out;
}

ScopeOptions scope_defaults(const GraphOptionMap& g, const ScopeOptions& base) {
    ScopeOptions o = base;
    auto num = [&](const char* key, long fallback) {
        auto it = g.find(key);
        return it == g.end() ? fallback : parse_int(it->second).value_or(fallback);
    };
    auto list = [&](const char* key, const std::vector<std::string>& fallback) {
        auto it = g.find(key);
        return it == g.end() ? fallback : split_list(it->second);
    };
    static constexpr PreloadCode k_preload[] = {PreloadCode::none, PreloadCode::per_func,
                                                PreloadCode::max};
    o.preload_code = k_preload[num("preload_code", static_cast<long>(base.preload_code))];
    o.split_mode = static_cast<std::uint32_t>(num("split_mode", base.split_mode));
    o.stream_fusion = num("stream_fusion", base.stream_fusion ? 1 : 0) == 1;
    o.early_start = static_cast<int>(num("early_start", base.early_start));
    o.debug_sync_all = num("debug_sync_all", base.debug_sync_all ? 1 : 0) == 1;
    o.dcci_before_kernel_start = list("dcci_before_kernel_start", base.dcci_before_kernel_start);
    o.dcci_after_kernel_end = list("dcci_after_kernel_end", base.dcci_after_kernel_end);
    o.dcci_disable_on_kernel = list("dcci_disable_on_kernel", base.dcci_disable_on_kernel);
    o.ubuf_lock_ignore_kernel = list("ubuf_lock_ignore_kernel", base.ubuf_lock_ignore_kernel);
    return o;
}

std::optional<std::string> check_op_type_pattern(std::string_view p) {
    if (p.empty())
        return "is empty";
    if (p.front() == '*')
        return "may not start with '*'";
    for (char c : p)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.' || c == '*'))
            return "may contain only letters, digits and '_-.*'";
    return std::nullopt;
}

bool op_type_matches(std::string_view pattern, std::string_view s) {
    // Iterative glob with backtracking to the last '*'.
    std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
    while (t < s.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            mark = t;
        } else if (p < pattern.size() && pattern[p] == s[t]) {
            ++p;
            ++t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++mark;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

} // namespace skforge::graph
