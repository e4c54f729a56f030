// SPDX-License-Identifier: Apache-2.0
#pragma once

// Loading an installed host package (its program and libraries) and running it: SuperKernel
// launches (fused) or one launch per operator (unfused). See share/doc/host-target.md.
#include "skforge/runtime/device.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace skforge::runtime {

/// A tensor of the program.
struct TensorInfo {
    std::string name;
    std::string dtype;
    std::uint32_t dt = 0; ///< sk_dtype
    std::vector<std::int64_t> shape;
    std::uint64_t bytes = 0;
    bool graph_input = false;
    bool graph_output = false;
    bool arena = false; ///< lives in a SuperKernel's arena when fused (not compared)
};

/// What an operator is: a kernel launched on the workers, or one that runs beside them on a
/// thread of its own stream (share/doc/host-target.md, "Operators beside the cores").
enum class OpKind { kernel, aicpu_tiling, prefetch };

/// An operator: its kernel and arguments.
struct OpInfo {
    std::string name, type, library, symbol;
    OpKind kind = OpKind::kernel;
    std::uint32_t stream = 0;
    std::vector<std::int64_t> notify; ///< events of notify/wait pairs it sends
    std::vector<std::int64_t> wait;   ///< events of notify/wait pairs it waits for
    std::uint32_t block_dim = 1;
    std::uint64_t workspace = 0;
    std::uint32_t core_mask = SK_CORE_ANY; ///< the cores its blocks run on
    std::vector<std::size_t> inputs, outputs;
    int segment = -1;
    sk_kernel_fn fn = nullptr;
};

/// A notify/wait slot of a SuperKernel's parameter block: it holds the address of the flag of
/// `event`, which the SuperKernel sets (notify) or waits on (wait).
struct SideSlot {
    std::int64_t param_offset = 0;
    std::int64_t event = 0;
    bool wait = false;
};

/// A SuperKernel: its entry and parameter block.
struct SegmentInfo {
    std::string name, library, entry, task_ration;
    std::vector<std::size_t> ops;
    std::int64_t param_block_size = 0, workspace_param_offset = 0;
    std::uint64_t workspace_bytes = 0;
    std::uint32_t sync_slots = 0;
    std::vector<std::pair<std::size_t, std::int64_t>> parameters; ///< (tensor, param offset)
    std::int64_t side_slot_offset = 0; ///< flags before it are zeroed at each launch
    std::vector<SideSlot> side_slots;
    sk_entry_fn fn = nullptr;
};

/// One step of the fused order: a SuperKernel or an operator alone.
struct Step {
    bool segment;
    std::size_t index;
};

/// Which tensors a Tensors set gives memory of its own.
enum class Allocate {
    all,         ///< every tensor
    not_graph_io ///< all but graph inputs and outputs, which the caller binds
};

/// Memory for the tensors of a program, 64-byte aligned and zeroed, each of which may be bound
/// to memory of the caller's instead.
class Tensors {
  public:
    explicit Tensors(const std::vector<TensorInfo>& infos, Allocate what = Allocate::all);
    /// The tensor's memory: the bound memory, else its own (nullptr when it has none).
    void* data(std::size_t i) const { return m_bound[i] != nullptr ? m_bound[i] : m_data[i].get(); }
    /// Binds tensor `i` to `memory` (nullptr: back to its own memory, if any).
    void bind(std::size_t i, void* memory) {
        m_bound[i] = memory;
        ++m_generation;
    }
    bool bound(std::size_t i) const { return m_bound[i] != nullptr; }
    /// Changes with every bind, so that a Runner knows to point its launches anew.
    std::uint64_t generation() const { return m_generation; }
    std::size_t size() const { return m_data.size(); }

  private:
    struct Free {
        void operator()(void* p) const noexcept;
    };
    std::vector<std::unique_ptr<std::byte, Free>> m_data;
    std::vector<void*> m_bound;
    std::uint64_t m_generation = 0;
};

/// An installed host package, its libraries loaded.
class Package {
  public:
    /// Reads `<dir>/host/program.json` and loads every library it names (RTLD_NOW | RTLD_LOCAL).
    /// Throws an Error naming the file when the program is missing, damaged or of another
    /// version, or a library or symbol cannot be loaded.
    static Package open(const std::string& dir);
    /// The program `text` (of `file`, named in errors) read and checked as open does, every
    /// count, index, rank and size and every library path, but no library loaded (no kernel
    /// can run). Throws an Error naming the file and the field.
    static Package parse(const std::string& text, const std::string& file);

    ~Package();
    Package(Package&&) noexcept;
    Package& operator=(Package&&) = delete;
    Package(const Package&) = delete;
    Package& operator=(const Package&) = delete;

    const std::string& graph() const { return m_graph; }
    const std::vector<TensorInfo>& tensors() const { return m_tensors; }
    const std::vector<OpInfo>& ops() const { return m_ops; }
    const std::vector<SegmentInfo>& segments() const { return m_segments; }
    const std::vector<Step>& steps() const { return m_steps; }

  private:
    Package() = default;
    std::string m_graph;
    std::vector<TensorInfo> m_tensors;
    std::vector<OpInfo> m_ops;
    std::vector<SegmentInfo> m_segments;
    std::vector<Step> m_steps;
    std::vector<void*> m_handles;
};

/// Runs a package over one set of tensors; everything a launch needs (argument tables,
/// parameter blocks, workspaces) is prepared up front so that a run measures launches and work.
/// A run after a bind points the launches at the tensors' new memory first.
class Runner {
  public:
    Runner(const Package& package, Device& device, Tensors& tensors);
    ~Runner();
    Runner(const Runner&) = delete;
    Runner& operator=(const Runner&) = delete;

    /// Runs the fused order (each SuperKernel one launch); returns the launches made.
    std::uint64_t run_fused();
    /// Runs every operator as its own launch; returns the launches made. Operators beside the
    /// cores run in order on the calling thread and are no launches.
    std::uint64_t run_unfused();
    /// Launches SuperKernel `segment` alone (one launch); its waits on operators beside the
    /// cores count as satisfied (whoever runs the rest ran them). Returns the launches made.
    std::uint64_t run_segment(std::size_t segment);

    /// Test only: the fused run skips every wait on an operator beside the cores and runs those
    /// operators only after everything else, their outputs cleared first (what a missing wait
    /// lets happen at worst: the consumer reads a stale tiling buffer).
    void drop_side_waits(bool drop);

  private:
    struct Prepared;
    void launch_op(std::size_t op);
    void launch_segment(std::size_t segment);
    void run_beside(std::size_t op);
    void wait_side(const std::vector<std::int64_t>& events);
    void notify_side(const std::vector<std::int64_t>& events);
    void run_side_streams();
    void prepare_side();
    void point_side_slots();
    void point_tensors();
    const Package& m_package;
    Device& m_device;
    Tensors& m_tensors;
    std::unique_ptr<Prepared> m_prepared;
    bool m_drop_side_waits = false;
    std::uint64_t m_pointed = 0; ///< the Tensors generation the launches point at
};

} // namespace skforge::runtime
