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
    exist_deadlock,  ///< split reason: an outside op depends on the segment and the segment on it
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
};

/// Everything the planning passes share.
struct PlanContext {
    const graph::Graph& graph;
    graph::Diagnostics& diags;
    std::vector<std::vector<int>> deps; ///< graph::dependencies
    Plan plan;
};

/// Why `op` cannot be fused, or nullopt (its scope's position among scopes is `scope_index`).
std::optional<std::pair<Reason, std::string>> unfusible(const graph::Graph& g, const graph::Op& op,
                                                        int scope_index);

/// Pass: cuts every scope into segments by the fusion rules.
void segment_pass(PlanContext& ctx);

/// Runs the planning passes over a validated graph.
Plan make_plan(const graph::Graph& graph, graph::Diagnostics& diags);

} // namespace skforge::fusion
