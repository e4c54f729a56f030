// SPDX-License-Identifier: Apache-2.0
#pragma once

// `skinstall explain`: what CANN's runtime finds for one operator call in an installed tree, on
// each CANN release line (kernel/runtime_key.hpp), and when it finds nothing, the nearest
// entries and why they differ (share/doc/explain.md).
#include "skforge/install/layout.hpp"
#include "skforge/kernel/runtime_key.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace skforge::install {

/// One staticList entry of a global index as the runtime registers it.
struct RuntimeEntry {
    std::string op_type;
    std::string key_text; ///< the simplifiedKey ("" when it has none the runtime reads)
    std::optional<kernel::RuntimeKey> key;
    std::string bin_path; ///< as the index says, relative to ai_core/
    std::string package;  ///< binPath's first component
    std::size_t order = 0;
    std::optional<kernel::KernelPlatform> platform; ///< carried from entry to entry per OpType
    bool json_read = false;                         ///< the JSON beside the kernel parsed
    bool run_info = false;                          ///< it has `runInfo`
    bool top_level_run_info = false; ///< it has blockDim, localMemorySize, schedule_mode
};

/// A global index as the runtime reads it.
struct RuntimeIndex {
    std::string soc_dir;
    std::string path; ///< shown
    bool readable = false;
    std::string why; ///< when not readable
    std::vector<RuntimeEntry> entries;
    std::vector<std::string> skipped; ///< "<OpType>: why" for entries the runtime drops
};

/// Reads ai_core/config/<soc_dir>/binary_info_config.json and the JSON beside each kernel.
RuntimeIndex read_runtime_index(const InstallTree& tree, const std::string& soc_dir);

/// The SoC directories with a global index under ai_core/config/.
std::vector<std::string> index_soc_dirs(const InstallTree& tree);

/// A call from a dump JSON as aclopStartDumpArgs writes it (op_type, inputs, outputs with
/// dtype, format, shape, origin_shape, stride, offset; deterministic; impl_mode); throws an
/// Error naming `where` and the field.
kernel::RuntimeCall call_from_dump(const nlohmann::json& dump, const std::string& where);
/// A tensor given as text: `DTYPE:FORMAT:DIMS[:VIEW_DIMS[:STRIDES[:OFFSET]]]`, dims comma
/// separated (`float16:ND:16`, `bfloat16:FRACTAL_NZ:2,1,16,16:16,32`); throws a usage Error.
kernel::RuntimeTensor tensor_from_text(const std::string& text);
/// The op-kernel engine's impl-mode index of a dump's or option's text ("" → 2).
int impl_mode_index(const std::string& text);

/// What each line's lookup paths find for `call` in `index`; `cores` are the device's cube and
/// vector cores (nullopt: unknown, platformInfo not checked). `notes` go into the result.
nlohmann::json explain_call(const RuntimeIndex& index, const kernel::RuntimeCall& call,
                            const std::optional<kernel::KernelPlatform>& cores,
                            const std::vector<std::string>& notes = {});
/// The text of explain_call's result.
std::vector<std::string> explain_text(const nlohmann::json& explained);

/// Per line and path, how many of the explained calls find a kernel, per package.
nlohmann::json explain_table(const std::vector<nlohmann::json>& explained);
std::vector<std::string> explain_table_text(const nlohmann::json& table);

} // namespace skforge::install
