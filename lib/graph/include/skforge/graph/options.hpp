// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/graph/diagnostics.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::graph {

/// `preload-code`: how the next sub-kernel's code is prefetched.
enum class PreloadCode { none, per_func, max };
/// `strict-scope-check`: what to do when a scope cannot be fused whole.
enum class StrictScopeCheck { bypass, abort };

/// The options of one SuperKernel scope, after the graph's options and the scope's own string.
struct ScopeOptions {
    std::uint32_t func_align = 2048;
    PreloadCode preload_code = PreloadCode::per_func;
    int early_start = 0;
    bool stream_fusion = true;
    bool debug_dcci_all = false;
    bool debug_sync_all = false;
    bool feed_sync_all = false;
    bool profiling = false;
    std::string compile_options;
    StrictScopeCheck strict_scope_check = StrictScopeCheck::bypass;
    std::vector<std::string> dcci_before_kernel_start;
    std::vector<std::string> dcci_after_kernel_end;
    std::vector<std::string> dcci_disable_on_kernel;
    std::vector<std::string> ubuf_lock_ignore_kernel;
    std::uint32_t split_mode = 4;
    std::optional<int> debug_aic_num;
    std::optional<int> debug_aiv_num;
};

/// Parses a scope's `key=value:key=value` string over `base`: split on ':', then on the first
/// '='; a duplicate or unknown key or a bad value is an error, a pair without '=' a warning.
ScopeOptions parse_scope_options(std::string_view text, const ScopeOptions& base,
                                 const Location& where, Diagnostics& diags);

/// The graph-level `super_kernel_optimize_options` mapping, validated, as ordered key -> text
/// (lists joined with ','), ready to flatten.
using GraphOptionMap = std::map<std::string, std::string>;

/// Checks one graph option; returns its text form, or nullopt after adding a diagnostic.
/// `list` holds the items when the option is list-valued.
std::optional<std::string> check_graph_option(const std::string& key, const std::string& scalar,
                                              const std::vector<std::string>* list,
                                              const Location& where, Diagnostics& diags);

/// The flattened string form of graph options: `k=v:k=v`, lists as `a,b`.
std::string flatten_graph_options(const GraphOptionMap& options);

/// The scope defaults that graph options imply (preload_code, split_mode, stream_fusion,
/// early_start, debug_sync_all and the dcci lists) over `base`, whose values stand where the
/// graph says nothing.
ScopeOptions scope_defaults(const GraphOptionMap& options, const ScopeOptions& base = {});

/// True when `pattern` (letters, digits, `_ - . *`, `*` matching any run) matches `op_type`.
bool op_type_matches(std::string_view pattern, std::string_view op_type);

/// Why `pattern` is not a valid OpType pattern, or nullopt.
std::optional<std::string> check_op_type_pattern(std::string_view pattern);

} // namespace skforge::graph
