// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace skforge::kernel {

/// `sub_operator_kernel_type`: which cores a kernel runs on.
enum class KernelType { aiv_only, aic_only, mix_aiv_1_0, mix_aic_1_0, mix_aic_1_1, mix_aic_1_2 };

/// The KERNEL_TYPE_* text of a kernel type.
std::string_view kernel_type_name(KernelType type);
/// The kernel type of its KERNEL_TYPE_* text, or nullopt.
std::optional<KernelType> parse_kernel_type(std::string_view text);
/// True for kernels that use only vector cores (barriers between two of them are vector-only).
bool is_vector_only(KernelType type);
/// True for kernels that use only cube cores.
bool is_cube_only(KernelType type);

/// One row of the device-binary magic table.
struct Magic {
    std::string_view name;
    std::uint32_t value;
    bool aicpu; ///< an AICPU binary: never fusible
};

/// The magic table: the vendor's RT_DEV_BINARY_MAGIC_* values plus skforge's host magic.
const std::vector<Magic>& magic_table();
/// The row for `name`, or nullptr.
const Magic* find_magic(std::string_view name);
/// skforge's magic for host-target kernels: "SKFH" read as a big-endian word.
inline constexpr std::uint32_t k_host_magic = 0x534b4648;
/// Its name in kernel metadata.
inline constexpr std::string_view k_host_magic_name = "RT_DEV_BINARY_MAGIC_SKFORGE_HOST";

/// `workspace`: how much scratch memory a kernel needs.
struct Workspace {
    std::vector<std::uint64_t> size;
    std::vector<std::int64_t> type;
    /// The sum of `size`.
    std::uint64_t total() const;
};

/// One entry of `sub_operator_kernel_name`: the symbol the op compiler renamed for SuperKernel
/// use and the object file(s) that define it (the vendor writes one path as a string).
struct SubKernelName {
    std::string func_name;
    std::vector<std::string> obj_files;
    /// obj_files_split1, _split2, …: the split copies the op compiler packed beside obj_files in
    /// the sub-kernel's archive (their functions already renamed <func_name>_split<k>).
    std::vector<std::string> split_obj_files;
};

/// The fields skforge reads from a compiled kernel's metadata JSON, including the
/// `sub_operator_*` fields CANN's op compiler adds when it compiles a SuperKernel sub-operator.
struct KernelMeta {
    std::string kernel_name;
    std::uint32_t block_dim = 1;
    std::string magic_name;
    std::uint32_t magic = 0;
    bool aicpu = false;
    std::uint64_t op_para_size = 0;
    std::string bin_file_name;
    std::string bin_file_suffix = ".o";
    std::string sha256; ///< of the binary; empty when not given
    Workspace workspace;
    std::optional<KernelType> kernel_type; ///< nullopt: missing or not one of the six
    std::string kernel_type_text;
    std::string deterministic; ///< `deterministic` (true, false, ignore); empty when not given
    bool support_super_kernel = false;
    bool sync_all = false;        ///< sub_op_with_sync_all
    std::uint32_t split_mode = 0; ///< 0 when not given
    /// `sub_operator_kernel_name`, keyed exactly as the vendor writes it: "AiCore" for single-core
    /// kernels, "dav-c220-vec"/"dav-c220-cube" for the halves of a MIX kernel.
    std::map<std::string, SubKernelName> sub_kernel_names;
    /// `sub_operator_params`: the kernel's GM parameter names in call order (the count is the
    /// size).
    std::vector<std::string> sub_operator_params;
    bool early_start_set_flag = false;          ///< sub_operator_early_start_set_flag
    bool early_start_wait_flag = false;         ///< sub_operator_early_start_wait_flag
    bool call_dcci_before_kernel_start = false; ///< sub_operator_call_dcci_before_kernel_start
    bool call_dcci_after_kernel_end = false;    ///< sub_operator_call_dcci_after_kernel_end
    bool call_dcci_disable_on_kernel = false;   ///< sub_operator_call_dcci_disable_on_kernel
    std::string op_type;                        ///< sub_operator_op_type; empty when not given
    bool timestamp_option = false;              ///< timestamp_option (the vendor writes a boolean)
    std::uint64_t debug_buf_size = 0;           ///< debugBufSize
    std::string debug_options;                  ///< debugOptions, e.g. "printf,assert,timestamp"
    std::string task_ration; ///< taskRation, "<cube>:<vector>" such as "0:1" or "1:2"
    std::string core_type;   ///< coreType: "AiCore", "VectorCore", "MIX", ...
    /// What CANN's runtime reads beside a static kernel (opbase UpdateStaticJsonExtraInfo); the op
    /// compiler writes localMemorySize only when it is not -1 and schedule_mode only when it is
    /// not 0 (asc-devkit compile_op.py). nullopt: not given.
    std::optional<std::uint32_t> local_memory_size; ///< localMemorySize
    std::optional<std::uint32_t> schedule_mode;     ///< schedule_mode
    std::string run_info_json;      ///< runInfo (checked), as JSON text; empty when not given
    std::string platform_info_json; ///< platformInfo (checked), as JSON text; empty when not given
    std::string impl_mode;          ///< supportInfo.implMode; empty when not given
    /// Every top-level field not listed above, kept verbatim as the text of one JSON object ("{}"
    /// when there is none), so nothing the op compiler wrote is lost.
    std::string extra_json = "{}";
};

/// `json_text` (a kernel's metadata that parse_kernel_meta accepted) with what CANN's runtime
/// reads beside a static kernel filled in where the op compiler left it out: localMemorySize 0,
/// schedule_mode 0, workspace {num 0}, and platformInfo {cubeCoreCnt, vectorCoreCnt} from
/// `platform_cores` when given and the JSON has none. Nothing it has is changed.
std::string with_runtime_fields(
    std::string_view json_text,
    std::optional<std::pair<std::uint32_t, std::uint32_t>> platform_cores = std::nullopt);

/// True when the kernel writes a debug buffer (debugOptions names timestamp, printf or assert),
/// the test the vendor's SuperKernel compiler applies before it reserves debugBufSize.
bool uses_debug_buffer(const KernelMeta& meta);

/// A problem in a metadata file: a message and the JSON key it concerns.
struct MetaProblem {
    std::string key;
    std::string message;
};

/// Parses kernel metadata JSON; problems (wrong types, unknown magic, bad sha256) are appended to
/// `problems`, and what could be read is returned.
KernelMeta parse_kernel_meta(std::string_view json_text, std::vector<MetaProblem>& problems);

} // namespace skforge::kernel
