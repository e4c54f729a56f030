// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/graph/graph.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::fusion {

/// Why an operator is left out of every SuperKernel (the vendor's codes plus skforge's own, all
/// documented in share/doc/plan-format.md).
enum class Reason {
    op_unsupport, ///< TBE/AICPU kernel, unsupported kernel type or collective, supportSuperKernel 0
    dynamic_task_unsupport, ///< task_type dynamic
    not_in_scope,           ///< in no SuperKernel scope
    exceed_core_max,        ///< blockDim larger than the SoC has cores
    isolated_event,         ///< reserved: events are checked by validation
    exist_deadlock,  ///< split reason: the segment depends on an outside op that depends on it
                     ///< (directly or through other ops)
    external_depend, ///< split reason: depends on an outside op that runs after the segment starts
    unsupport_event_type, ///< reserved
    simt_op_unsupport,    ///< engine simt
    exceed_scope_max,     ///< in a scope past the 1024th
    no_fusion_mark,       ///< skforge: the operator is marked no_fusion
    fusion_disabled,      ///< skforge: super_kernel_optimize is false
    exceed_task_max,      ///< skforge split reason: a segment holds at most 1024 tasks
    cut_by_unfusible,     ///< skforge split reason: an unfusible operator of the scope came between
};

/// The code as printed, e.g. "OP_UNSUPPORT".
std::string_view reason_code(Reason r);

/// How wide a barrier between sub-kernels is.
enum class BarrierKind { vector, cube, full };

/// "vector", "cube" or "full".
std::string_view barrier_kind_name(BarrierKind k);

/// A barrier inserted before the sub-kernel at `before` (a position in Segment::ops).
struct Barrier {
    int before;
    BarrierKind kind;
};

/// One argument of a sub-kernel: which SuperKernel buffer it is and its flag slots.
struct SubArg {
    int buffer;                ///< index into Segment::buffers
    bool output;               ///< written by the sub-kernel
    std::int64_t param_offset; ///< offset of the buffer's pointer in the parameter block
    std::int64_t notify_param_offset = -1; ///< flag set after writing it for another stream, or -1
    std::int64_t wait_param_offset = -1;   ///< flag waited on before reading it, or -1
};

/// One memory-semantic notify or wait of a sub-kernel with an operator that runs beside the AI
/// cores (graph::runs_beside_cores: AICPU tiling, prefetch): an event of the graph whose other end
/// is outside every SuperKernel. The sub-kernel sets (notify) or waits on (wait) a flag whose
/// address is in an 8-byte slot of the SuperKernel's parameter block.
struct SideSync {
    std::int64_t event;       ///< the event id (send_event_list / recv_event_list)
    int peer;                 ///< the operator beside the cores, an index into Graph::ops
    std::int64_t slot = -1;   ///< offset of the flag-address slot in the parameter block
    std::vector<int> buffers; ///< arguments it guards (Segment::buffers): for a notify, outputs
                              ///< the peer reads; for a wait, inputs the peer writes or prefetches
};

/// Per sub-kernel results of the passes, in the order of Segment::ops.
struct SubKernel {
    std::uint32_t block_dim = 1;
    std::uint32_t split_mode = 1;
    bool early_start_set = false;
    bool early_start_wait = false;
    bool dcci_before = false;
    bool dcci_after = false;
    bool dcci_disabled = false;
    std::vector<std::int64_t> send_events; ///< events set inside the SuperKernel
    std::vector<std::int64_t> recv_events; ///< events waited for inside the SuperKernel
    std::vector<SideSync> notifies; ///< events it sends to operators beside the cores, in order
    std::vector<SideSync> waits;    ///< events it waits for from them, before it starts
    std::vector<SubArg> args;
    std::uint64_t workspace = 0;           ///< bytes of scratch memory (the metadata's workspace)
    std::uint64_t workspace_offset = 0;    ///< where it is in the SuperKernel's workspace block
    std::uint32_t feed_sync_all_cores = 0; ///< idle cores given a matching SyncAll
};

/// A distinct tensor the SuperKernel touches.
struct Buffer {
    std::string tensor;
    std::uint64_t bytes = 0;  ///< aligned to 512
    bool arena = false;       ///< produced and consumed only inside the segment
    std::uint64_t offset = 0; ///< in the arena, when `arena`
    int first = -1;           ///< producing position, -1 when produced outside
    int last = -1;            ///< last consuming position
};

/// One copy of a sub-kernel's code in the SuperKernel's code layout.
struct CodeCopy {
    int sub;
    std::uint32_t copy;
    std::uint64_t offset;
    std::uint64_t size;
};

/// How a SuperKernel is launched on an NPU, by the vendor's rule: the kernel type summarised from
/// its sub-kernels' types (always a MIX type) and its blockDim, never more than the SoC's cores.
struct NpuLaunch {
    kernel::KernelType type = kernel::KernelType::mix_aiv_1_0;
    std::uint32_t block_dim = 1;
};

/// A run of operators fused into one SuperKernel.
struct Segment {
    std::string name; ///< the scope's name, or `<scope>_split_<begin>_<end>` when the scope was cut
    std::string scope;
    std::vector<int> ops; ///< indices into Graph::ops, in execution order
    graph::ScopeOptions options;
    std::optional<Reason> split_reason; ///< why this segment does not continue the previous one
    std::string split_detail;
    int scope_begin = 0; ///< position of the first op among its scope's ops
    int scope_end = 0;   ///< position of the last op

    // Filled by the passes after segmentation.
    std::vector<SubKernel> subs;
    std::uint32_t largest_block_dim = 1; ///< the largest sub-kernel blockDim (the host's launch)
    std::string core_type;   ///< AiCore, VectorCore or MIX: the kinds of core the sub-kernels use
    std::string task_ration; ///< aic:aiv of the sub-kernels' types, e.g. "1:2" (the host's)
    std::optional<NpuLaunch> launch; ///< on an NPU target (npu_arch not host): the launch there
    std::vector<Barrier> barriers;
    std::vector<std::pair<int, int>> early_start_pairs; ///< (setter, waiter) positions
    std::vector<std::pair<int, int>> event_pairs;       ///< (sender, receiver) positions
    std::vector<Buffer> buffers;
    std::uint64_t arena_peak = 0;
    std::uint64_t arena_lower_bound = 0;
    std::uint64_t workspace_total = 0;
    std::uint64_t workspace_naive = 0;
    std::vector<CodeCopy> layout;
    std::vector<std::uint64_t> preload_bytes; ///< per sub-kernel
    bool code_size_estimated = false;
    std::int64_t param_block_size = 0; ///< opParaSize
    std::int64_t workspace_param_offset = 0;
    std::vector<std::pair<int, std::int64_t>>
        argument_offsets; ///< (buffer, param offset) of arguments
    std::vector<std::pair<std::int64_t, std::int64_t>>
        event_slots; ///< (event, param offset of its 8-byte flag) of the pairs inside
    std::int64_t side_slot_offset = 0; ///< first notify/wait flag-address slot (after the flags)
};

/// A notify/wait pair: an event between an operator beside the cores (AICPU tiling, prefetch) and
/// another operator, with where each end's flag-address slot is when that end is fused.
struct NotifyWait {
    std::int64_t event;
    int notifier;                  ///< the sending operator, an index into Graph::ops
    int waiter;                    ///< the receiving operator
    int notify_segment = -1;       ///< the notifier's segment, or -1 when it is not fused
    int wait_segment = -1;         ///< the waiter's segment, or -1
    std::int64_t notify_slot = -1; ///< the notifier's slot in its parameter block, or -1
    std::int64_t wait_slot = -1;   ///< the waiter's slot in its parameter block, or -1
};

/// What happened to one operator.
struct OpResult {
    int segment = -1; ///< index into Plan::segments, or -1 when left out
    std::optional<Reason> reason;
    std::string detail;
};

/// The plan: segments and a result for every operator.
struct Plan {
    std::vector<Segment> segments;
    std::vector<OpResult> ops;
    std::vector<NotifyWait> notify_waits; ///< sorted by event, then waiter
};

/// Everything the planning passes share.
/// What one CANN line's SuperKernel compiler refuses that the planner checks (the release table,
/// codegen/cann_release.hpp, fills it; the default checks nothing more than skforge's own rules).
struct ReleaseChecks {
    /// debug-aic-num/debug-aiv-num above the SoC's cores, or below the block count the
    /// sub-kernels give the launch for a kind of core it uses, are errors (graph-autofusion
    /// e1cbeb9b super_kernel_op_infos.py, check_debug_aic_aiv_num_exceed_platform_num_blocks and
    /// check_debug_aic_aiv_num_exceed_sub_op_aic_aiv_num).
    bool debug_cores_in_range = false;
    /// The line's name ("9.0"), for the messages.
    std::string_view release;
};

struct PlanContext {
    const graph::Graph& graph;
    graph::Diagnostics& diags;
    const graph::Dependencies& deps;
    std::string_view arch; ///< the target planned for: skc compile's, else the graph's npu_arch
    Plan plan;
    /// What a scope option neither the scope nor the graph sets is (nullptr: skforge's
    /// ScopeOptions defaults); on the NPU targets the CANN release's (codegen/cann_release.hpp).
    const graph::ScopeOptions* option_defaults = nullptr;
    /// The CANN line's refusals the planner applies on the NPU targets.
    ReleaseChecks checks{};
};

/// True for the OpTypes segmentation ignores (Send, Recv, Data, Variable, Const and their kin, as
/// GE's SuperKernel pass does): they are never fused and never cut a scope.
bool ignored_by_segmentation(std::string_view type);

/// Why `op` cannot be fused, or nullopt (its scope's position among scopes is `scope_index`).
std::optional<std::pair<Reason, std::string>> unfusible(const graph::Graph& g, const graph::Op& op,
                                                        int scope_index);

/// Pass over the whole graph: cuts every scope into segments by the fusion rules.
void segment_pass(PlanContext& ctx);

// The passes below each plan one segment, from what the passes before them left in it;
// make_plan runs them segment by segment on every core (segments are independent).

/// Pass: block dim, core type, task ration, the NPU launch, full-core synchronisation.
void cores_pass(const PlanContext& ctx, Segment& s, graph::Diagnostics& diags);

/// The launch of segment `s` (its sub-kernels' blockDims set) on SoC `soc` of `npu_arch` by the
/// vendor's rule: the largest blockDim of the kind of core that leads, for a 1:2 MIX SuperKernel
/// max(cube, ceil(vector / 2)); debug-aic-num/debug-aiv-num replace the counts; at most the SoC's
/// cores (share/doc/npu-target.md, "Launch").
/// The metadata of sub-kernel `p` (a position in `s.ops`) of `s`.
const kernel::KernelMeta& sub_kernel_meta(const graph::Graph& g, const Segment& s, std::size_t p);

NpuLaunch npu_launch(const graph::Graph& g, const Segment& s, std::string_view soc,
                     std::string_view npu_arch);

/// The launch the sub-kernels of `s` ask for by the vendor's rule, before debug-aic-num /
/// debug-aiv-num and the SoC's cap (the vendor's block count its debug counts are checked with).
NpuLaunch sub_kernel_launch(const graph::Graph& g, const Segment& s);

/// The taskRation (cube:vector) the runtime reads for a SuperKernel of kernel type `t`.
std::string_view task_ration_of(kernel::KernelType t);

/// How segment `s` is launched on the target it was planned for, as its metadata says it.
struct LaunchSummary {
    std::uint32_t block_dim;                ///< NPU: the launch's; host: the largest sub-kernel's
    std::string_view core_type;             ///< NPU: MIX; host: the cores pass's
    std::string_view task_ration;           ///< NPU: the launch type's; host: the cores pass's
    std::optional<kernel::KernelType> type; ///< NPU: the launch's kernel type; host: none
};

/// The launch of segment `s` on its plan's target (Segment::launch, else the host's).
LaunchSummary launch_summary(const Segment& s);

/// How many cores of a launch of `launch_block_dim` (of type `launch_type`; none on the host) a
/// sub-kernel of type `type` on `block_dim` of them leaves idle, so that a SyncAll in it would
/// wait for them forever unless they are fed one: a vector-only sub-kernel in a 1:2 launch
/// counts vector cores (two per block), every other sub-kernel blocks.
std::uint32_t idle_cores(std::optional<kernel::KernelType> launch_type,
                         std::uint32_t launch_block_dim, kernel::KernelType type,
                         std::uint32_t block_dim);

/// Pass: stream queues, events as set/wait pairs, deadlock check.
void stream_pass(const PlanContext& ctx, Segment& s, graph::Diagnostics& diags);
/// Pass: the narrowest barriers, and early-start set/wait flags.
void barrier_pass(const PlanContext& ctx, Segment& s);
/// Pass: dcci flags by OpType pattern.
void cache_pass(const PlanContext& ctx, Segment& s);
/// Pass: arguments, workspace reuse, the arena of internal tensors.
void memory_pass(const PlanContext& ctx, Segment& s);
/// Pass: code layout (func-align, split-mode copies, preload).
void layout_pass(const PlanContext& ctx, Segment& s);
/// Pass over the whole graph, after segmentation: the notify/wait pairs (Plan::notify_waits),
/// sorted by event then waiter, their slots not yet known.
void notify_wait_pass(PlanContext& ctx);
/// Pass: notify/wait with operators beside the cores: each sub-kernel's SideSync lists (after
/// the memory pass, whose buffers they name).
void side_sync_pass(const PlanContext& ctx, Segment& s);
/// Pass: the SuperKernel's parameter block: argument, workspace and event flag offsets, then
/// the notify/wait flag-address slots (SideSync::slot, SubArg notify/wait offsets).
void metadata_pass(Segment& s);
/// After every segment's passes: each notify/wait pair's slots, from its ends' SideSync.
void notify_wait_slots(Plan& plan);

/// The notify/wait pairs (Plan::notify_waits) at the edges of segment `s` that the vendor's
/// SuperKernel compiler refuses: its first sub-kernel waiting for an operator beside the cores,
/// or its last one notifying one (the graph engine moves such an event to the launch).
std::vector<NotifyWait> edge_notify_waits(const graph::Graph& g, const Plan& plan,
                                          const Segment& s);

/// Pass over the whole plan for target `arch` (skc compile --npu-arch, else the graph's): on an
/// NPU (dav-2201, dav-3510) an error at the operator for each of edge_notify_waits and, on
/// dav-3510, for each aicpu_tiling operator (CANN has no tiling sink there yet); on any other
/// target nothing (the host runtime fills every flag itself).
void npu_side_rules_pass(const graph::Graph& g, const Plan& plan, std::string_view arch,
                         graph::Diagnostics& diags);

/// An event one sub-kernel of a SuperKernel sends and a later one on the same stream receives.
struct SameStreamEvent {
    std::int64_t event;
    int sender;   ///< an index into Graph::ops
    int receiver; ///< a later sub-kernel of the same segment, on the sender's stream
};

/// The events of segment `s` the vendor's SuperKernel compiler refuses as a "self send/receive
/// pair within 1 real stream" (an event from a sub-kernel to a later one of the same stream), in
/// sub-kernel order.
std::vector<SameStreamEvent> same_stream_events(const graph::Graph& g, const Segment& s);

/// What is wrong with `e` (of segment `s`), for the plan's error and the vendor backend's refusal.
std::string same_stream_event_text(const graph::Graph& g, const Segment& s,
                                   const SameStreamEvent& e);

/// Pass over the whole plan for target `arch`: on an NPU (dav-2201, dav-3510) an error at the
/// operator for each SuperKernel the vendor's SuperKernel compiler refuses: a sub-kernel compiled
/// for early start under early-start=0, a sub-kernel split_mode other than the SuperKernel's
/// split-mode, a second real stream (consecutive sub-kernels on different streams without an
/// event between them) without stream fusion, and an event between two sub-kernels of one stream
/// (same_stream_events).
void npu_generator_rules_pass(const graph::Graph& g, const Plan& plan, std::string_view arch,
                              graph::Diagnostics& diags);

/// The SuperKernel metadata JSON of segment `s` (compact, keys sorted) for the graph's npu_arch.
/// Written on demand: `skc check` and the text plan do not need it.
std::string kernel_meta_json(const graph::Graph& g, const Segment& s);
/// The same for target `arch`: skforge's shape on "host"; else the vendor's compiled-SuperKernel
/// shape (expect_compiled_json.json) with skforge's plan under the key `skforge`.
std::string kernel_meta_json(const graph::Graph& g, const Segment& s, std::string_view arch);

/// What a CANN release's asc-devkit writes in each SuperkernelInfo.kernelList entry beyond the
/// fields every line has (the release table, codegen/cann_release.hpp, chooses).
struct KernelListKeys {
    std::string_view block_key = "blockDim"; ///< the sub-kernel's blockDim is written under this
    bool op_type = false;      ///< sub_operator_op_type (the sub-kernel JSON's, else "")
    bool dcci_disable = false; ///< sub_operator_call_dcci_disable_on_kernel (else false)
};

/// The same for an NPU `arch`, with the kernel list written as `keys` say.
std::string kernel_meta_json(const graph::Graph& g, const Segment& s, std::string_view arch,
                             const KernelListKeys& keys);

/// Where one sub-kernel's arguments are in the vendor's SuperKernel parameter table, in 8-byte
/// slots: its sub_operator_params from `param`, then one notify slot per event it sends (from
/// `notify`, -1 when none), then one wait slot per event it receives (from `wait`, or -1).
struct VendorParamSlots {
    std::int64_t param = 0;
    std::int64_t count = 0; ///< sub_operator_params (else inputs + outputs + workspace)
    std::int64_t notify = -1;
    std::int64_t wait = -1;
};

/// The vendor's parameter table of segment `s` on `arch`, per sub-kernel in order: slot 0 holds
/// the FFTS address on dav-2201 (so the first sub-kernel starts at 1), not on dav-3510.
std::vector<VendorParamSlots> vendor_param_slots(const graph::Graph& g, const Segment& s,
                                                 std::string_view arch);

/// Bytes of one element of `dtype`, or 0 when unknown (int4 counts as 1).
std::uint32_t dtype_size(std::string_view dtype);

/// How far make_plan goes: the passes that can find problems, or all of them.
enum class PlanDepth { checks, full };

/// Runs the planning passes over a validated graph, for the graph's own npu_arch.
Plan make_plan(const graph::Graph& graph, graph::Diagnostics& diags,
               PlanDepth depth = PlanDepth::full);
/// The same, with the graph's dependencies already found (validation needs them too), for
/// target `arch` (what skc compile builds for; empty: the graph's npu_arch), whose rules
/// npu_side_rules_pass applies, with `option_defaults` for what no scope or graph option sets
/// (PlanContext::option_defaults) and the CANN line's `checks` (PlanContext::checks).
Plan make_plan(const graph::Graph& graph, const graph::Dependencies& deps,
               graph::Diagnostics& diags, PlanDepth depth = PlanDepth::full,
               std::string_view arch = {}, const graph::ScopeOptions* option_defaults = nullptr,
               ReleaseChecks checks = {});

} // namespace skforge::fusion
