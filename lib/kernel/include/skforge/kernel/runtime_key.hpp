// SPDX-License-Identifier: Apache-2.0
#pragma once

// The runtime's side of a static-kernel lookup: the byte key each of CANN's two lookup paths
// builds for an operator call, on each CANN release line hosts run, and the byte key it makes of
// an index's simplifiedKey. Written from hicann/opbase (9.0.0 branch = v9.0.0/v9.0.1, 9.1.0 at
// 0e247b8, master at aa3cd74): indv_collecter.cpp / indv_collector.cpp
// (NnopbaseCollectorConvertStaticVerbKey, NnopbaseCollectorGenStaticKey,
// MatchBinWithPlatformInfo / MatchBinWithCoreNum, UpdateRunInfoForStaticJson),
// indv_executor.cpp, indv_executor_ext.cpp, indv_executor_tensor.cpp (share/doc/explain.md).
// static_index.hpp is the writer's side; this unit is what the reader does with a call.
#include "skforge/kernel/static_index.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::kernel {

/// A key as the runtime compares them: bytes.
using RuntimeKey = std::vector<std::uint8_t>;

/// The CANN release lines whose lookup rules differ.
enum class CannLine { v9_0, v9_1, master };

/// What one line's runtime does (a table, not branches: share/doc/explain.md).
struct LineRules {
    CannLine line;
    std::string_view name;          ///< "9.0.x", "9.1.x", "master"
    bool stride_lookup;             ///< the first lookup's key carries strides and offset
    bool retry_without_strides;     ///< a miss is looked up again without them
    bool match_deterministic_level; ///< platformInfo.deterministicLevel must equal the call's
    bool top_level_run_info;        ///< without `runInfo`, blockDim etc. are read at the top level
};

/// The lines, oldest first.
std::span<const LineRules> cann_lines();
/// The rules of `line`.
const LineRules& line_rules(CannLine line);
/// The line of a CANN version text ("9.0.1" → 9.0.x, "9.1.0.pre" → 9.1.x, 9.2 and later or
/// "master" → master); nullopt for a version before 9.0 or text that is no version.
std::optional<CannLine> cann_line_of(std::string_view version);

/// A tensor of a call as the caller's aclTensor holds it.
struct RuntimeTensor {
    std::uint32_t dtype = 0;
    std::uint32_t format = 2; ///< the storage format (ge::Format)
    std::vector<std::int64_t> storage_shape;
    std::vector<std::int64_t> view_shape; ///< empty: the storage shape
    /// The view strides; nullopt: none given (contiguous, op::ToContiguousStrides).
    std::optional<std::vector<std::int64_t>> view_strides;
    std::int64_t offset = 0;
};

/// An operator call as the runtime keys it (no attributes, no value-dependent inputs).
struct RuntimeCall {
    std::string op_type;
    std::vector<RuntimeTensor> tensors; ///< inputs, then outputs
    int deterministic_level = 0;        ///< 0: not deterministic
    int hostapi_impl_mode = 2;          ///< the op-kernel engine's ToIndex(GetCurrentImplMode())
};

/// How `path` keys the call's tensors, with or without strides (strides and offset only when
/// `with_strides`; the op-kernel engine's gert tensor has no strides, offset 0).
std::vector<KeyTensor> runtime_key_tensors(KeyPath path, const RuntimeCall& call,
                                           bool with_strides);
/// The key head: d (0 or 1) and p (0 on the aclnn executor's path).
int runtime_key_deterministic(const RuntimeCall& call);
int runtime_key_impl_mode(KeyPath path, const RuntimeCall& call);

/// The byte key `path` builds for `call`, with or without strides.
RuntimeKey runtime_call_key(KeyPath path, const RuntimeCall& call, bool with_strides);
/// The same key as simplifiedKey text (what an index entry must say to be found by it).
std::string runtime_call_key_text(KeyPath path, const RuntimeCall& call, bool with_strides);

/// One lookup a line makes: with or without strides.
struct RuntimeLookup {
    bool with_strides;
    RuntimeKey key;
    std::string text;
};
/// The lookups `rules` makes for `call` on `path`, in the order it makes them.
std::vector<RuntimeLookup> runtime_lookups(const LineRules& rules, KeyPath path,
                                           const RuntimeCall& call);

/// The byte key the runtime makes of an index entry's simplifiedKey
/// (NnopbaseCollectorConvertStaticVerbKey); nullopt for a run of 16 hex digits or more, which
/// it reads differently.
std::optional<RuntimeKey> runtime_index_key(std::string_view simplified_key);

/// A simplifiedKey read back into its parts, for saying how two keys differ.
struct ParsedKey {
    std::string op_type;
    int deterministic = 0;
    int impl_mode = 0;
    std::vector<KeyTensor> tensors;
};
/// Parses `<Op>/d=<d>,p=<p>/<dtype>,<format>,(<dims>)[,(<strides>),<offset>]/...`; nullopt for
/// any other text.
std::optional<ParsedKey> parse_simplified_key(std::string_view text);

/// platformInfo: cube and vector cores, deterministicLevel (-1: not given).
struct KernelPlatform {
    std::uint32_t aic = 0;
    std::uint32_t aiv = 0;
    int deterministic_level = -1;
};
/// Whether a kernel with `kernel`'s platformInfo (nullopt: none) runs on `device` on `rules`'s
/// line: the core counts always, the deterministic level only where the line matches it.
bool platform_fits(const LineRules& rules, const std::optional<KernelPlatform>& kernel,
                   const KernelPlatform& device);

} // namespace skforge::kernel
