// SPDX-License-Identifier: Apache-2.0
#pragma once

// What CANN's runtime (opbase's individual-op collector) reads from a static-kernel index entry:
// the core type as its integer enum, and the simplifiedKey it matches an operator's call against.
#include "skforge/kernel/kernel_meta.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace skforge::kernel {

/// Most workspace sizes an index entry's binDesc may give: opbase skips an entry with more
/// (NNOPBASE_NORM_MAX_WORKSPACE_NUMS, utils/indv_base.h).
inline constexpr std::size_t k_max_index_workspaces = 20;

/// opbase's CoreType (utils/indv_types.h): the integer an index entry's `coreType` holds.
enum class CoreType : int {
    mix = 0,
    ai_core = 1,
    vector_core = 2,
    mix_ai_core = 3,
    mix_vector_core = 4
};

/// The core type CANN's compiler gives a kernel of `type` (AIV only: VectorCore, AIC only:
/// AiCore, every mix: MIX, whose cube:vector ratio is the kernel JSON's taskRation).
CoreType core_type_of(KernelType type);
/// The core type of a kernel JSON's `coreType` text (MIX, AiCore, VectorCore, MIX_AICORE,
/// MIX_VECTOR_CORE, MIX_AIC), or nullopt.
std::optional<CoreType> parse_core_type(std::string_view text);
/// The core type of a kernel: its `coreType` text when it has a known one, else its kernel type,
/// else its magic (AIVEC: VectorCore, AICUBE: AiCore); nullopt when none of them tells.
std::optional<CoreType> kernel_core_type(const KernelMeta& meta);

/// ge::DataType's value of a graph dtype name (float16, bfloat16, int8, ...), or nullopt.
std::optional<std::uint32_t> ge_data_type(std::string_view dtype);
/// The name of a ge::DataType value (the first the table gives: float, float16, ...), or
/// nullopt.
std::optional<std::string_view> ge_data_type_name(std::uint32_t code);
/// The name of a ge::Format value without FORMAT_ (ND, NCHW, FRACTAL_NZ, ...), or nullopt.
std::optional<std::string_view> ge_format_name(std::uint32_t code);
/// ge::Format's value of a format name as GE spells it without FORMAT_ (ND, NCHW, FRACTAL_NZ,
/// ...), or nullopt.
std::optional<std::uint32_t> ge_format(std::string_view format);

/// One input or output as the runtime keys it: dtype and format codes, the dims it keys by, and
/// for the key with strides (the runtime's first lookup) the strides and offset after the dims.
struct KeyTensor {
    std::uint32_t dtype = 0;
    std::uint32_t format = 2; ///< ND
    std::vector<std::int64_t> shape;
    /// nullopt: the key without strides; otherwise these strides and `offset` follow the dims.
    std::optional<std::vector<std::int64_t>> strides = std::nullopt;
    std::int64_t offset = 0;
};

/// The static simplifiedKey of a call of `op_type` with `tensors` (inputs, then outputs):
/// `<OpType>/d=<deterministic>,p=<impl mode>/<dtype>,<format>,(<dims>)[,(<strides>),<offset>]/...`,
/// numbers in lower-case hex as the runtime's static-key parser reads them. Dims and strides must
/// be 0..2^60-1 (static shapes; the parser reads 16 hex digits differently).
std::string static_simplified_key(std::string_view op_type, int deterministic, int impl_mode,
                                  std::span<const KeyTensor> tensors);

/// A tensor of a call as its aclTensor describes it: dtype and storage format codes, storage
/// shape and view shape (the same as the storage shape unless the graph gives one).
struct CallTensor {
    std::uint32_t dtype = 0;
    std::uint32_t format = 2;
    std::vector<std::int64_t> storage_shape;
    std::vector<std::int64_t> view_shape;
};

/// The two ways opbase (at aa3cd74) builds a static call's key.
enum class KeyPath {
    /// aclnn's executor (NnopbaseSaveTensor, NnopbaseExecutorGenStaticKey): NCHW, NHWC, NCL,
    /// NCDHW and DHWCN become ND, dims are the view shape, strides the view strides (contiguous),
    /// impl mode 0.
    aclnn_executor,
    /// The op-kernel engine's NnopbaseFindStaticKernel (NnopbaseCollectorGenStaticKey): the
    /// storage format and storage shape, strides those of the gert tensor (none), impl mode the
    /// engine's choice (1 high_performance or 2 high_precision).
    hostapi,
};

/// True for the storage formats the aclnn executor keys as ND (FormatsLikeND).
bool format_keyed_as_nd(std::uint32_t format);
/// The row-major strides of `shape` (what an aclTensor without explicit strides gets).
std::vector<std::int64_t> contiguous_strides(std::span<const std::int64_t> shape);
/// How `path` keys tensor `t`, with or without its strides.
KeyTensor path_key_tensor(KeyPath path, const CallTensor& t, bool with_strides);

/// The impl-mode index (p=) the hostapi path keys a call by for a kernel whose JSON says
/// `supportInfo.implMode` (empty: not said): high_performance 1, high_precision 2, nothing said
/// both; a mode the index's key text cannot carry (p above 2) none.
std::vector<int> hostapi_impl_modes(std::string_view impl_mode);

/// Every simplifiedKey under which a call of `op_type` with `tensors` is found on both lookup
/// paths, for each of `deterministic` (0, 1): each path's key with strides (looked up first) and
/// without (the retry, and what older runtimes look up); duplicates once, in that order.
std::vector<std::string> static_call_keys(std::string_view op_type,
                                          std::span<const int> deterministic,
                                          std::span<const int> hostapi_impl,
                                          std::span<const CallTensor> tensors);

/// The cube and vector core counts of `soc` as CANN's platform_config gives them
/// (<soc>.ini, SoCInfo cube_core_cnt / vector_core_cnt), for the SoCs skforge has them from;
/// nullopt for every other SoC. What a platformInfo in a kernel's JSON is written from.
std::optional<std::pair<std::uint32_t, std::uint32_t>> platform_core_counts(std::string_view soc);

} // namespace skforge::kernel
