// SPDX-License-Identifier: Apache-2.0
#pragma once

// The conventions of each CANN release line that skforge follows, as one table row per line
// (share/doc/cann-conformance.md, "Conventions per CANN release"): the vendor generator's
// option defaults, the SuperKernel JSON's field names, synchronisation rules and refusals. The
// code reads the row; it never asks which release it is.
#include "skforge/fusion/plan.hpp"
#include "skforge/graph/options.hpp"
#include "skforge/kernel/kernel_meta.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::codegen {

/// A CANN release line skforge knows the conventions of.
enum class CannVersion { v8_5, v9_0, v9_1 };

/// The line used when neither --cann-version nor an installed toolkit names one.
inline constexpr CannVersion k_default_cann_version = CannVersion::v9_0;

/// A set of kernel types, one bit per kernel::KernelType.
using KernelTypeSet = unsigned;

/// The set holding `t`.
constexpr KernelTypeSet types_of(kernel::KernelType t) {
    return 1u << static_cast<unsigned>(t);
}

/// An extra synchronisation before a sub-kernel that waits for an event from outside, after a
/// sub-kernel of another kind: the inter-kernel barrier that follows does not hold the cores
/// block 0 waits on.
struct WaitExtraSync {
    KernelTypeSet before;  ///< kernel types of the sub-kernel before
    KernelTypeSet current; ///< kernel types of the waiting sub-kernel
    bool vector_cores;     ///< true: AscendC::SyncAll<true>(); false: the cube cores' flag
};

/// How a dav-3510 entry sets and waits for the cross-core flags.
enum class C310Flags {
    /// AscendC::CrossCoreSetFlag / CrossCoreWaitFlag (skforge's choice where the line's generator
    /// writes dav-2201's `wait_flag_dev(id)`, which has no pipe argument on that chip).
    cross_core,
    /// `ffts_cross_core_sync(...)` and `wait_flag_dev(PIPE_S, id)`, as asc-devkit's generator
    /// (get_wait_flag_for_chip) and AscendC's own dav_3510 SyncAll write them.
    ffts_pipe_s,
};

/// One release line's conventions.
struct CannRelease {
    CannVersion version;
    std::string_view name;             ///< "8.5", "9.0", "9.1": what --cann-version takes
    std::string_view graph_autofusion; ///< the hicann/graph-autofusion commit read
    std::string_view asc_devkit;       ///< the cannmirror/asc-devkit commit read
    /// What the vendor's generator uses for a scope option not given (the NPU targets' defaults).
    graph::ScopeOptions option_defaults;
    /// SuperkernelInfo.kernelList entries: the key of the sub-kernel's blockDim, and whether
    /// `sub_operator_op_type` and `sub_operator_call_dcci_disable_on_kernel` are written.
    fusion::KernelListKeys kernel_list;
    /// The sub-kernel JSON's sub_operator_call_dcci_disable_on_kernel turns off its own dcci.
    bool honours_dcci_disable_flag = false;
    /// super_kernel_options takes `dcci-disable-on-kernel` (else the parser refuses the key).
    bool option_dcci_disable_on_kernel = false;
    /// A sub-kernel's own dcci before and after it (dcci-before-kernel-start,
    /// dcci-after-kernel-end) is done inside its block-index guard, by the cores that run it;
    /// else by every core of its kind.
    bool dcci_inside_block_guard = false;
    /// Code of one kind of core (the kernel-type records, g_opSystemRunCfg) is guarded by
    /// `#if defined(__DAV_C220_CUBE__)` (the chip's macro); else by
    /// `#if (defined(__DAV_CUBE__) && __NPU_ARCH__ == 2201)`.
    bool core_macros_by_chip = false;
    /// Extra synchronisations before a wait (graph-autofusion gen_wait_block_extra_sync).
    std::vector<WaitExtraSync> wait_extra_sync;
    /// What the planner refuses as this line's generator does (debug-aic-num/debug-aiv-num
    /// above the SoC's cores or below the launch's block count for a kind of core it uses).
    fusion::ReleaseChecks plan_checks;
    /// The op compiler writes debugOptions/debugBufSize into an operator's JSON compiled with
    /// printf, assert or timestamp dumps, which is how skforge's generator knows to refuse such a
    /// sub-kernel; else (asc-devkit 883c0f8b, "Printf switch to FIFO", on 9.1.0 and master) it
    /// writes them only into a SuperKernel's JSON and nothing in an operator's says so.
    bool operator_json_debug_fields = true;
    /// dav-3510 cross-core flags (see C310Flags).
    C310Flags c310_flags = C310Flags::cross_core;
    /// The two programs of two-stream mode (`auto_gen_<K>_kernel_aic/_aiv`) are
    /// `__attribute__((always_inline))`, as the entry inlines them into its one function.
    bool two_stream_always_inline = false;
    /// A MIX 1:1 SuperKernel on dav-3510 is compiled with `-D__ASCENDC_DAVID_SPLIT_CORE__`.
    bool c310_mix_1_1_split_core_define = false;
    /// The AscendC register-compute headers are `{impl,include}/basic_api/reg_compute` and the
    /// `asc` directory itself is searched (else `{impl,include}/micro_api`, gone since 9.0).
    bool reg_compute_includes = false;
};

/// The row of `version`.
const CannRelease& cann_release(CannVersion version);

/// Every row, oldest first.
const std::vector<CannRelease>& cann_releases();

/// The line of a version text: "8.5", "9.0" or "9.1" as --cann-version takes them, or a
/// toolkit's full version ("8.5.0", "8.5.0-beta.1", "9.0.1", "9.1.0", "9.2.RC1": the 9.x lines
/// after 9.1 write what 9.1 writes, as asc-devkit's master does). nullopt for anything else.
std::optional<CannVersion> parse_cann_version(std::string_view text);

/// The version an installed toolkit names: the `Version=` line of
/// `<ascend_home>/compiler/version.info` (what asc-devkit's gen_version_info.sh reads), else of
/// `<ascend_home>/version.info`. nullopt when neither file exists or has that line; throws when
/// one cannot be read.
std::optional<std::string> installed_cann_version(const std::string& ascend_home);

/// The release a compile follows: `requested` (--cann-version) when given, else the installed
/// toolkit's, else k_default_cann_version. `where` says which (for the compile log). Throws a
/// usage error for a requested text that names no known line, and an error naming the file for
/// an installed version skforge has no conventions for.
const CannRelease& select_cann_release(const std::string& requested, const std::string& ascend_home,
                                       std::string& where);

} // namespace skforge::codegen
