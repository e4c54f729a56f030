// SPDX-License-Identifier: Apache-2.0
// How a SuperKernel is launched: on the NPU targets by the vendor's rule (graph-autofusion
// super_kernel/src/superkernel/super_kernel_op_infos.py, get_summary_type_and_options and
// get_finale_type_and_block_dim), which `skc plan` reports and `skc compile` builds alike.
#include "skforge/fusion/plan.hpp"

#include "report_counts.hpp"
#include "skforge/kernel/soc.hpp"

#include <algorithm>

namespace skforge::fusion {

using kernel::KernelType;

const kernel::KernelMeta& sub_kernel_meta(const graph::Graph& g, const Segment& s, std::size_t p) {
    const auto& op = g.ops[static_cast<std::size_t>(s.ops[p])];
    return g.kernels[static_cast<std::size_t>(op.kernel_index)].meta;
}

namespace {

// The vendor's choice of kernel type and block count from the most cores of each kind.
NpuLaunch launch_of(std::uint32_t aic, std::uint32_t aiv, bool vector_only, bool cube_only,
                    bool all_one_to_one) {
    if (vector_only)
        return {KernelType::mix_aiv_1_0, aiv};
    if (cube_only)
        return {KernelType::mix_aic_1_0, aic};
    if (all_one_to_one || aiv <= aic)
        return {KernelType::mix_aic_1_1, aic};
    return {KernelType::mix_aic_1_2, std::max(aic, (aiv + 1) / 2)};
}

} // namespace

NpuLaunch sub_kernel_launch(const graph::Graph& g, const Segment& s) {
    // Which kinds of sub-kernel there are, and the most cores of each kind they ask for (a 1:2
    // sub-kernel asks for two vector cores per block).
    bool vector_only = true, cube_only = true, all_one_to_one = true;
    std::uint32_t aic = 0, aiv = 0;
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        KernelType t = *sub_kernel_meta(g, s, p).kernel_type;
        std::uint32_t bd = s.subs[p].block_dim;
        vector_only = vector_only && kernel::is_vector_only(t);
        cube_only = cube_only && kernel::is_cube_only(t);
        all_one_to_one = all_one_to_one && t == KernelType::mix_aic_1_1;
        if (!kernel::is_vector_only(t))
            aic = std::max(aic, bd);
        if (!kernel::is_cube_only(t))
            aiv = std::max(aiv, t == KernelType::mix_aic_1_2 ? 2 * bd : bd);
    }
    return launch_of(aic, aiv, vector_only, cube_only, all_one_to_one);
}

NpuLaunch npu_launch(const graph::Graph& g, const Segment& s, std::string_view soc,
                     std::string_view npu_arch) {
    NpuLaunch l = sub_kernel_launch(g, s);
    if (s.options.debug_aic_num.value_or(0) > 0 || s.options.debug_aiv_num.value_or(0) > 0) {
        auto aic = static_cast<std::uint32_t>(s.options.debug_aic_num.value_or(0));
        auto aiv = static_cast<std::uint32_t>(s.options.debug_aiv_num.value_or(0));
        l = launch_of(aic, aiv, aic == 0, aiv == 0, aic == aiv);
    }
    // The cap is skforge's: the vendor launches what the counts say.
    auto cores = kernel::soc_cores(soc, npu_arch);
    auto cap = static_cast<std::uint32_t>(kernel::is_vector_only(l.type) ? cores.aiv : cores.aic);
    l.block_dim = std::max<std::uint32_t>(1, std::min(l.block_dim, cap));
    return l;
}

std::string_view task_ration_of(KernelType t) {
    // asc-devkit ascendc_compile_gen_json.py, _get_kernel_type_dict.
    if (kernel::is_vector_only(t))
        return "0:1";
    if (kernel::is_cube_only(t))
        return "1:0";
    return t == KernelType::mix_aic_1_1 ? "1:1" : "1:2";
}

LaunchSummary launch_summary(const Segment& s) {
    if (!s.launch)
        return {s.largest_block_dim, s.core_type, s.task_ration, std::nullopt};
    // On the NPU every SuperKernel is a MIX kernel (its metadata's coreType).
    return {s.launch->block_dim, "MIX", task_ration_of(s.launch->type), s.launch->type};
}

std::string launch_text(const Segment& s) {
    auto l = launch_summary(s);
    std::string out = "blockDim " + std::to_string(l.block_dim) + ", " + std::string(l.core_type) +
                      ", taskRation " + std::string(l.task_ration);
    if (l.type)
        out += ", " + std::string(kernel::kernel_type_name(*l.type)) +
               " (largest sub-kernel blockDim " + std::to_string(s.largest_block_dim) + ")";
    return out;
}

std::uint32_t idle_cores(std::optional<KernelType> launch_type, std::uint32_t launch_block_dim,
                         KernelType type, std::uint32_t block_dim) {
    // graph-autofusion super_kernel.py, judge_need_feed_sync_all: in a 1:2 launch the vector
    // cores are two per block, and a vector-only sub-kernel's blockDim counts vector cores.
    bool vector_cores = launch_type == KernelType::mix_aic_1_2 && kernel::is_vector_only(type);
    std::uint32_t cores = (vector_cores ? 2 : 1) * launch_block_dim;
    return block_dim < cores ? cores - block_dim : 0;
}

} // namespace skforge::fusion
