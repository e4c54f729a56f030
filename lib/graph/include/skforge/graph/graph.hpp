// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/graph/diagnostics.hpp"
#include "skforge/graph/options.hpp"
#include "skforge/kernel/kernel_meta.hpp"
#include "skforge/support/file.hpp"

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace skforge::graph {

/// A named tensor with its shape and dtype.
struct Tensor {
    std::string name;
    std::vector<std::int64_t> shape;
    std::string dtype;
    std::string format; ///< GE's name (ND, FRACTAL_NZ, ...); empty: not given (ND)
    /// The view shape (what an aclTensor's view dims say) where it differs from the storage
    /// `shape`, as for FRACTAL_NZ; empty: not given (the same as `shape`).
    std::vector<std::int64_t> view_shape;
    Location where;
};

/// `task_type`.
enum class TaskType { normal, dynamic };

/// Which engine runs an operator. Only aicore (AscendC) kernels and the supported collectives can
/// be fused; TBE and AICPU kernels and SIMT operators cannot.
enum class Engine { aicore, tbe, aicpu, simt, hccl };

/// Text of an engine ("aicore", ...).
std::string_view engine_name(Engine e);

/// What an operator is. A `kernel` runs a compiled kernel (the default). The other kinds run
/// beside the AI cores and are never fused: `aicpu_tiling` computes, on the AICPU, the tiling
/// data of another operator (Op::tiling_for) from its inputs into its one output, the tiling
/// buffer; `prefetch` brings its inputs into the cache (a CMO task on an SDMA stream) and runs
/// no kernel. Both talk to SuperKernels by events, which become memory-semantic notify/wait.
enum class OpKind { kernel, aicpu_tiling, prefetch };

/// Text of a kind ("kernel", "aicpu_tiling", "prefetch").
std::string_view op_kind_name(OpKind k);

/// True for the kinds that run beside the AI cores, on a stream of their own (aicpu_tiling,
/// prefetch).
constexpr bool runs_beside_cores(OpKind k) {
    return k != OpKind::kernel;
}

/// Where an operator's compiled kernel is, as written in the graph (relative to the graph file).
struct KernelRef {
    std::string json_path;
    std::string bin_path;    ///< may be empty: planning needs only the metadata
    std::string source_path; ///< host target: C++ source, compiled when no binary is given
    Location where;
};

/// One operator, in execution order.
struct Op {
    std::string name;
    std::string type; ///< the OpType
    KernelRef kernel;
    std::uint32_t stream_id = 0;
    TaskType task_type = TaskType::normal;
    Engine engine = Engine::aicore;
    std::vector<Tensor> inputs;
    std::vector<Tensor> outputs;
    std::vector<std::int64_t> send_events;
    std::vector<std::int64_t> recv_events;
    std::string scope;      ///< empty: in no scope
    bool no_fusion = false; ///< explicit mark; wins over any scope
    OpKind kind = OpKind::kernel;
    std::string tiling_for; ///< aicpu_tiling: the name of the operator whose tiling it computes
    Location kind_where;    ///< of `kind`; no file when absent
    Location tiling_for_where;
    Location where;
    int kernel_index = -1; ///< into Graph::kernels, set by the loader
};

/// A SuperKernel scope.
struct Scope {
    std::string name;
    std::string options; ///< `key=value:key=value`
    Location where;
};

/// A loaded kernel metadata file.
struct LoadedKernel {
    std::string path; ///< resolved
    kernel::KernelMeta meta;
    bool binary_checked = false;   ///< a binary was present and matched its sha256
    std::uint64_t binary_size = 0; ///< bytes of the binary, 0 when none was given
};

/// The graph IR.
struct Graph {
    std::string file;                            ///< as given
    std::shared_ptr<const std::string> file_ref; ///< the same, shared by every Location
    std::string dir;                             ///< directory the kernel paths are relative to
    std::string name;
    std::string npu_arch;
    std::string soc_version;
    Location name_where;        ///< of `name`; no file when absent (the name is the file's stem)
    Location soc_version_where; ///< of `soc_version`
    bool super_kernel_optimize = true;
    GraphOptionMap options;
    std::vector<Tensor> inputs;
    std::vector<Scope> scopes;
    std::vector<Op> ops;
    std::vector<LoadedKernel> kernels;
    /// Read from the vendor's kernel_info (parse_kernel_info): its operators have no tensors,
    /// so each depends on the one before it on its stream (dependencies()).
    bool from_kernel_info = false;

    /// The scope named `name`, or nullptr.
    const Scope* find_scope(const std::string& name) const;
};

/// A kernel path as written in the graph, resolved against the graph file's directory (absolute
/// paths stay as they are).
std::string resolve_path(const Graph& g, const std::string& path);

/// Reads the YAML graph at `path` (or the vendor's kernel_info JSON, is_kernel_info) and every
/// kernel metadata file it names; every problem goes to `diags` with its file, line and column.
/// The graph is usable for planning only when `diags` has no errors afterwards.
Graph load_graph(const std::string& path, Diagnostics& diags);

/// True when `text` is a JSON object with an `op_list`: the kernel_info CANN's graph engine
/// hands the vendor's SuperKernel compiler, rather than a graph.
bool is_kernel_info(std::string_view text);

/// A kernel_info as a graph named after the file's stem, for dav-2201: one scope `superkernel`
/// with the super_kernel_options, one operator `op<i>` per op_list entry (bin_path, json_path,
/// stream_id, task_type, send/recv_event_list), in order, without tensors (Graph::
/// from_kernel_info). Kernel metadata is not read yet (load_graph does).
Graph parse_kernel_info(std::string_view text, const std::string& file, Diagnostics& diags);

/// After the kernels are loaded: each kernel_info operator's OpType, its metadata's
/// sub_operator_op_type, else its kernelName.
void name_kernel_info_ops(Graph& g);

/// How finely a large graph's operator list is cut to be parsed on every core (bytes per piece).
inline constexpr std::size_t k_graph_piece_bytes = 64 * 1024;

/// Parses graph YAML text: like load_graph but without reading kernel files. `piece_bytes` is
/// for tests: a graph longer than it is parsed in pieces of about that size (0: always whole);
/// the result is the same either way.
Graph parse_graph_text(support::SharedText text, const std::string& file, Diagnostics& diags,
                       std::size_t piece_bytes = k_graph_piece_bytes);
/// The same, copying the text.
Graph parse_graph_text(const std::string& text, const std::string& file, Diagnostics& diags,
                       std::size_t piece_bytes = k_graph_piece_bytes);

/// For each op, the ops it depends on (producers of its inputs and senders of the events it
/// receives), each list sorted and unique; all lists in one array. Also what each input reads,
/// so later passes can tell tensors apart by number instead of by name.
class Dependencies {
  public:
    /// What an input reads that no earlier operator produces and no graph input declares.
    static constexpr int k_unknown = std::numeric_limits<int>::min();

    /// Number of operators.
    std::size_t size() const { return m_start.size() - 1; }
    /// What operator `i` depends on.
    std::span<const int> operator[](std::size_t i) const {
        return {m_list.data() + m_start[i], m_start[i + 1] - m_start[i]};
    }
    /// What each input of operator `i` reads: an output's number (output_id), a graph input as
    /// -1 - its index in Graph::inputs, or k_unknown.
    std::span<const int> sources(std::size_t i) const {
        return {m_sources.data() + m_first_input[i], m_first_input[i + 1] - m_first_input[i]};
    }
    /// The number of output `j` of operator `i` among all operators' outputs, in order.
    int output_id(std::size_t i, std::size_t j) const {
        return static_cast<int>(m_first_output[i] + j);
    }
    /// The operator and output index of output number `id`.
    std::pair<int, int> output(int id) const {
        auto op = m_output_op[static_cast<std::size_t>(id)];
        return {op, id - static_cast<int>(m_first_output[static_cast<std::size_t>(op)])};
    }
    /// How many inputs, of all operators, read output number `id`.
    std::uint32_t reads(int id) const { return m_reads[static_cast<std::size_t>(id)]; }
    /// Graph inputs (by index) whose name an earlier graph input already has, in order.
    std::span<const std::size_t> repeated_inputs() const { return m_repeated_inputs; }
    /// Outputs (by number) whose name a graph input or an earlier output already has, in order.
    std::span<const int> repeated_outputs() const { return m_repeated_outputs; }

  private:
    friend Dependencies dependencies(const Graph& graph);
    friend Dependencies dependencies_in_order(const Graph& graph);
    friend struct DependenciesBuilder;
    std::vector<std::size_t> m_start{0}; ///< operator i's list is [m_start[i], m_start[i + 1])
    std::vector<int> m_list;
    std::vector<std::size_t> m_first_input{0};
    std::vector<int> m_sources;
    std::vector<std::size_t> m_first_output{0};
    std::vector<int> m_output_op;
    std::vector<std::uint32_t> m_reads;
    std::vector<std::size_t> m_repeated_inputs;
    std::vector<int> m_repeated_outputs;
};

/// The dependencies of every operator, found on every core. An input reads the first tensor of
/// its name, when that comes before its operator; an event, its first sender before the
/// receiver. Meaningful for planning only when the graph validates.
Dependencies dependencies(const Graph& graph);
/// The same, found on one thread, one operator after another: what dependencies() must equal
/// (it uses this for small graphs and for graphs with repeated tensor names).
Dependencies dependencies_in_order(const Graph& graph);

/// Checks everything about a loaded graph that needs no metadata: unique names, inputs produced
/// earlier on the stream or behind an event, events paired, scope limits, and that every name
/// that becomes a path component (graph name, SoC, scope, OpType) is one safe component.
void validate_graph(const Graph& graph, Diagnostics& diags);
/// The same, with the graph's dependencies already found (planning needs them too).
void validate_graph(const Graph& graph, const Dependencies& deps, Diagnostics& diags);

/// Most scopes a graph may have.
inline constexpr std::size_t k_max_scopes = 1024;
/// Longest scope name (bytes).
inline constexpr std::size_t k_max_scope_name = 255;

} // namespace skforge::graph
