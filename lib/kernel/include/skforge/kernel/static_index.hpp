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
/// ge::Format's value of a format name as GE spells it without FORMAT_ (ND, NCHW, FRACTAL_NZ,
/// ...), or nullopt.
std::optional<std::uint32_t> ge_format(std::string_view format);

/// One input or output as the runtime keys it: dtype and format codes and the storage shape.
struct KeyTensor {
    std::uint32_t dtype = 0;
    std::uint32_t format = 2; ///< ND
    std::vector<std::int64_t> shape;
};

/// The static simplifiedKey of a call of `op_type` with `tensors` (inputs, then outputs):
/// `<OpType>/d=<deterministic>,p=<impl mode>/<dtype>,<format>,(<dims>)/...`, numbers in
/// lower-case hex as the runtime's static-key parser reads them. Dims must be 0..2^60-1
/// (static shapes; the parser reads 16 hex digits differently).
std::string static_simplified_key(std::string_view op_type, int deterministic, int impl_mode,
                                  std::span<const KeyTensor> tensors);

} // namespace skforge::kernel
