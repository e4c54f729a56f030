// SPDX-License-Identifier: Apache-2.0
// Loading a host package's program and libraries, preparing its launches, running and comparing.
#include "skforge/runtime/package.hpp"

#include "skforge/kernel/host_dtype.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/json_depth.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

namespace skforge::runtime {

using nlohmann::json;
using support::Error;

namespace {

constexpr std::size_t k_align = 64;

void* aligned_bytes(std::uint64_t bytes) {
    std::size_t n = (static_cast<std::size_t>(bytes) + k_align - 1) / k_align * k_align;
    void* p = std::aligned_alloc(k_align, n == 0 ? k_align : n);
    if (p == nullptr)
        throw Error("out of memory allocating " + std::to_string(bytes) + " bytes");
    std::memset(p, 0, n == 0 ? k_align : n);
    return p;
}

struct AlignedFree {
    void operator()(void* p) const noexcept { std::free(p); }
};
using Block = std::unique_ptr<std::byte, AlignedFree>;

Block block(std::uint64_t bytes) {
    return Block(static_cast<std::byte*>(aligned_bytes(bytes)));
}

OpKind op_kind(const std::string& text, const std::string& op, const std::string& file) {
    if (text == "kernel")
        return OpKind::kernel;
    if (text == "aicpu_tiling")
        return OpKind::aicpu_tiling;
    if (text == "prefetch")
        return OpKind::prefetch;
    throw Error(file + ": operator '" + op + "' has unknown kind '" + text + "'");
}

// Every event waited for has a notifier, or its waiter would wait forever.
void check_side_events(const std::vector<OpInfo>& ops, const std::vector<SegmentInfo>& segments,
                       const std::string& file) {
    std::set<std::int64_t> notified;
    for (const auto& op : ops)
        notified.insert(op.notify.begin(), op.notify.end());
    auto check = [&](std::int64_t e, const std::string& who) {
        if (!notified.contains(e))
            throw Error(file + ": " + who + " waits for event " + std::to_string(e) +
                        ", which no operator notifies");
    };
    for (const auto& op : ops)
        for (auto e : op.wait)
            check(e, "operator '" + op.name + "'");
    for (const auto& s : segments)
        for (const auto& slot : s.side_slots)
            check(slot.event, "SuperKernel " + s.name);
}

// A library path from the program: relative, inside the package.
std::string library_path(const std::string& dir, const std::string& rel, const std::string& file) {
    if (rel.empty() || rel[0] == '/' || rel.find("..") != std::string::npos)
        throw Error(file + ": library path '" + rel +
                    "' is not a relative path inside the package");
    return dir + "/" + rel;
}

} // namespace

void Tensors::Free::operator()(void* p) const noexcept {
    std::free(p);
}

Tensors::Tensors(const std::vector<TensorInfo>& infos, Allocate what) {
    for (const auto& t : infos) {
        bool own = what == Allocate::all || !(t.graph_input || t.graph_output);
        m_data.emplace_back(own ? static_cast<std::byte*>(aligned_bytes(t.bytes)) : nullptr);
    }
    m_bound.assign(infos.size(), nullptr);
}

Package::~Package() {
    for (void* h : m_handles)
        ::dlclose(h);
}

Package::Package(Package&& o) noexcept
    : m_graph(std::move(o.m_graph)), m_tensors(std::move(o.m_tensors)), m_ops(std::move(o.m_ops)),
      m_segments(std::move(o.m_segments)), m_steps(std::move(o.m_steps)),
      m_handles(std::move(o.m_handles)) {
    o.m_handles.clear();
}

Package Package::open(const std::string& dir) {
    const std::string file = dir + "/host/program.json";
    if (!std::filesystem::is_regular_file(file))
        throw Error(file + ": no host program here; was the package compiled with --npu-arch "
                           "host?");
    Package p;
    try {
        std::string text = support::read_file(file);
        if (auto deep = support::check_json_depth(text))
            throw Error(file + ": " + *deep);
        json j = json::parse(text);
        if (j.at("format") != "skforge-host-program" || j.at("version") != 1 ||
            j.at("abi_version") != SK_HOST_ABI_VERSION)
            throw Error(file + ": not a version 1 skforge host program (ABI " +
                        std::to_string(SK_HOST_ABI_VERSION) + ")");
        p.m_graph = j.at("graph").get<std::string>();
        for (const auto& t : j.at("tensors")) {
            TensorInfo info;
            info.name = t.at("name").get<std::string>();
            info.dtype = t.at("dtype").get<std::string>();
            auto dt = kernel::host_dtype(info.dtype);
            if (!dt)
                throw Error(file + ": tensor '" + info.name + "' has unknown dtype '" + info.dtype +
                            "'");
            info.dt = *dt;
            info.shape = t.at("shape").get<std::vector<std::int64_t>>();
            std::uint64_t n = 1;
            for (auto d : info.shape) {
                if (d < 0)
                    throw Error(file + ": tensor '" + info.name + "' has a negative dimension");
                n *= static_cast<std::uint64_t>(d);
            }
            info.bytes = n * sk_dtype_size(info.dt);
            info.graph_input = t.at("graph_input").get<bool>();
            info.graph_output = t.at("graph_output").get<bool>();
            p.m_tensors.push_back(std::move(info));
        }
        auto tensor_ref = [&](const json& v) {
            auto i = v.get<std::size_t>();
            if (i >= p.m_tensors.size())
                throw Error(file + ": tensor index " + std::to_string(i) + " out of range");
            return i;
        };
        std::map<std::string, void*> loaded;
        auto load = [&](const std::string& rel, const std::string& symbol) {
            std::string path = library_path(dir, rel, file);
            auto it = loaded.find(path);
            if (it == loaded.end()) {
                void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
                if (h == nullptr)
                    throw Error("cannot load " + path + ": " + ::dlerror());
                p.m_handles.push_back(h);
                it = loaded.emplace(path, h).first;
            }
            void* fn = ::dlsym(it->second, symbol.c_str());
            if (fn == nullptr)
                throw Error(path + ": no symbol '" + symbol + "'");
            return fn;
        };
        for (const auto& o : j.at("ops")) {
            OpInfo op;
            op.name = o.at("name").get<std::string>();
            op.type = o.at("type").get<std::string>();
            op.kind = op_kind(o.value("kind", "kernel"), op.name, file);
            op.stream = o.value("stream", 0u);
            op.notify = o.value("notify", std::vector<std::int64_t>{});
            op.wait = o.value("wait", std::vector<std::int64_t>{});
            op.library = o.at("library").get<std::string>();
            op.symbol = o.at("symbol").get<std::string>();
            op.block_dim = std::max<std::uint32_t>(1, o.at("block_dim").get<std::uint32_t>());
            op.workspace = o.at("workspace").get<std::uint64_t>();
            op.core_mask = o.at("core_mask").get<std::uint32_t>();
            if (op.core_mask < 1 || op.core_mask > 3)
                throw Error(file + ": operator '" + op.name + "' has core_mask " +
                            std::to_string(op.core_mask) + " (1 vector, 2 cube, 3 both)");
            for (const auto& i : o.at("inputs"))
                op.inputs.push_back(tensor_ref(i));
            for (const auto& i : o.at("outputs"))
                op.outputs.push_back(tensor_ref(i));
            op.segment = o.at("segment").get<int>();
            if (op.kind != OpKind::prefetch) // a prefetch runs no kernel
                op.fn = reinterpret_cast<sk_kernel_fn>(load(op.library, op.symbol));
            p.m_ops.push_back(std::move(op));
        }
        for (const auto& s : j.at("segments")) {
            SegmentInfo seg;
            seg.name = s.at("name").get<std::string>();
            seg.library = s.at("library").get<std::string>();
            seg.entry = s.at("entry").get<std::string>();
            seg.task_ration = s.at("task_ration").get<std::string>();
            seg.ops = s.at("ops").get<std::vector<std::size_t>>();
            seg.param_block_size = s.at("param_block_size").get<std::int64_t>();
            seg.workspace_param_offset = s.at("workspace_param_offset").get<std::int64_t>();
            seg.workspace_bytes = s.at("workspace_bytes").get<std::uint64_t>();
            seg.sync_slots = s.at("sync_slots").get<std::uint32_t>();
            for (const auto& a : s.at("parameters")) {
                auto off = a.at("param_offset").get<std::int64_t>();
                if (off < 0 || off + 8 > seg.param_block_size)
                    throw Error(file + ": SuperKernel " + seg.name +
                                ": parameter offset outside its block");
                seg.parameters.emplace_back(tensor_ref(a.at("tensor")), off);
            }
            if (seg.workspace_param_offset < 0 ||
                seg.workspace_param_offset + 8 > seg.param_block_size)
                throw Error(file + ": SuperKernel " + seg.name +
                            ": workspace offset outside its block");
            for (const auto& a : s.at("arena_tensors"))
                p.m_tensors[tensor_ref(a)].arena = true;
            seg.side_slot_offset = s.value("side_slot_offset", seg.param_block_size);
            if (seg.side_slot_offset < seg.workspace_param_offset + 8 ||
                seg.side_slot_offset > seg.param_block_size)
                throw Error(file + ": SuperKernel " + seg.name +
                            ": notify/wait slots outside its block");
            for (const auto& a : s.value("side_slots", json::array())) {
                auto off = a.at("param_offset").get<std::int64_t>();
                if (off < seg.side_slot_offset || off + 8 > seg.param_block_size)
                    throw Error(file + ": SuperKernel " + seg.name +
                                ": notify/wait slot outside its block");
                seg.side_slots.push_back({off, a.at("event").get<std::int64_t>(),
                                          a.at("role").get<std::string>() == "wait"});
            }
            seg.fn = reinterpret_cast<sk_entry_fn>(load(seg.library, seg.entry));
            p.m_segments.push_back(std::move(seg));
        }
        check_side_events(p.m_ops, p.m_segments, file);
        for (const auto& st : j.at("steps")) {
            bool seg = st.contains("segment");
            auto i = st.at(seg ? "segment" : "op").get<std::size_t>();
            if (i >= (seg ? p.m_segments.size() : p.m_ops.size()))
                throw Error(file + ": step index out of range");
            p.m_steps.push_back({seg, i});
        }
    } catch (const json::exception& e) {
        throw Error(file + ": damaged program: " + e.what());
    }
    return p;
}

// ---- Runner ---------------------------------------------------------------------------------

struct Runner::Prepared {
    struct Op {
        std::vector<sk_tensor> args;
        Block workspace;
    };
    struct Segment {
        Block params, workspace;
        std::vector<std::uint64_t> sync;
    };
    std::vector<Op> ops;
    std::vector<Segment> segments;
    // Notify/wait with operators beside the cores: one flag per event, each on its own cache
    // line, and the count of arrivals that sets it (the notifier's workers when it is fused).
    std::unordered_map<std::int64_t, std::size_t> flag_of;
    std::unique_ptr<std::uint64_t[]> flags;
    std::vector<std::uint64_t> target;
    std::vector<std::vector<std::size_t>> side_streams; ///< operators beside the cores, by stream
    std::uint64_t always_set = ~std::uint64_t{0};       ///< what dropped waits are pointed at
    std::atomic<std::uint64_t> touched{0};              ///< what prefetches read, kept

    static constexpr std::size_t k_stride = 8; // 64 bytes between flags
    std::uint64_t* flag(std::int64_t e) { return &flags[flag_of.at(e) * k_stride]; }
};

// The flags, targets and side streams of the package's notify/wait pairs.
void Runner::prepare_side() {
    auto& p = *m_prepared;
    const auto& ops = m_package.ops();
    std::map<std::uint32_t, std::vector<std::size_t>> streams;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].kind != OpKind::kernel)
            streams[ops[i].stream].push_back(i);
        for (auto e : ops[i].notify) {
            if (p.flag_of.contains(e))
                continue;
            std::uint32_t mask = ops[i].core_mask & 3u;
            p.flag_of.emplace(e, p.target.size());
            p.target.push_back(ops[i].segment >= 0 ? m_device.cores()[0].count_in[mask] : 1u);
        }
    }
    for (auto& [stream, list] : streams)
        p.side_streams.push_back(std::move(list));
    p.flags = std::make_unique<std::uint64_t[]>(std::max<std::size_t>(1, p.target.size()) *
                                                Prepared::k_stride);
}

Runner::Runner(const Package& package, Device& device, Tensors& tensors)
    : m_package(package), m_device(device), m_tensors(tensors),
      m_prepared(std::make_unique<Prepared>()) {
    prepare_side();
    const auto& infos = package.tensors();
    auto view = [&](std::size_t t) {
        sk_tensor v{nullptr, infos[t].dt, static_cast<std::uint32_t>(infos[t].shape.size()), {}};
        for (std::size_t d = 0; d < infos[t].shape.size() && d < SK_MAX_RANK; ++d)
            v.shape[d] = infos[t].shape[d];
        return v;
    };
    for (const auto& op : package.ops()) {
        Prepared::Op p;
        for (auto t : op.inputs)
            p.args.push_back(view(t));
        for (auto t : op.outputs)
            p.args.push_back(view(t));
        p.workspace = block(op.workspace);
        m_prepared->ops.push_back(std::move(p));
    }
    for (const auto& s : package.segments()) {
        Prepared::Segment p;
        p.params = block(static_cast<std::uint64_t>(s.param_block_size));
        p.workspace = block(s.workspace_bytes);
        p.sync.assign(s.sync_slots + 1, 0);
        void* ws = p.workspace.get();
        std::memcpy(p.params.get() + s.workspace_param_offset, &ws, sizeof ws);
        m_prepared->segments.push_back(std::move(p));
    }
    point_tensors();
    point_side_slots();
}

// Every argument table and parameter block to the tensors' memory as bound now.
void Runner::point_tensors() {
    const auto& ops = m_package.ops();
    for (std::size_t i = 0; i < ops.size(); ++i) {
        auto& args = m_prepared->ops[i].args;
        std::size_t k = 0;
        for (auto t : ops[i].inputs)
            args[k++].data = m_tensors.data(t);
        for (auto t : ops[i].outputs)
            args[k++].data = m_tensors.data(t);
    }
    const auto& segments = m_package.segments();
    for (std::size_t i = 0; i < segments.size(); ++i)
        for (const auto& [t, off] : segments[i].parameters) {
            void* ptr = m_tensors.data(t);
            std::memcpy(m_prepared->segments[i].params.get() + off, &ptr, sizeof ptr);
        }
    m_pointed = m_tensors.generation();
}

void Runner::drop_side_waits(bool drop) {
    m_drop_side_waits = drop;
    point_side_slots();
}

void Runner::point_side_slots() {
    for (std::size_t i = 0; i < m_package.segments().size(); ++i)
        for (const auto& slot : m_package.segments()[i].side_slots) {
            void* flag = slot.wait && m_drop_side_waits ? &m_prepared->always_set
                                                        : m_prepared->flag(slot.event);
            std::memcpy(m_prepared->segments[i].params.get() + slot.param_offset, &flag,
                        sizeof flag);
        }
}

Runner::~Runner() = default;

void Runner::launch_op(std::size_t i) {
    const auto& op = m_package.ops()[i];
    auto& p = m_prepared->ops[i];
    sk_kernel_ctx ctx{SK_HOST_ABI_VERSION,
                      0,
                      op.block_dim,
                      0,
                      static_cast<std::uint32_t>(op.inputs.size()),
                      static_cast<std::uint32_t>(op.outputs.size()),
                      p.args.data(),
                      p.workspace.get(),
                      op.workspace};
    m_device.launch([&](const sk_core& core) { sk_run_blocks(&core, op.core_mask, op.fn, ctx); });
}

void Runner::launch_segment(std::size_t i) {
    const auto& s = m_package.segments()[i];
    auto& p = m_prepared->segments[i];
    // Event flags follow the workspace pointer; they and the early-start flags start at zero.
    // The notify/wait slots after them hold the flags' addresses.
    std::int64_t flags = s.workspace_param_offset + 8;
    if (s.side_slot_offset > flags)
        std::memset(p.params.get() + flags, 0,
                    static_cast<std::size_t>(s.side_slot_offset - flags));
    std::fill(p.sync.begin(), p.sync.end(), 0);
    auto* params = reinterpret_cast<unsigned char*>(p.params.get());
    std::uint64_t* sync = p.sync.data();
    m_device.launch([&](const sk_core& core) { s.fn(&core, params, sync); });
}

void Runner::run_beside(std::size_t i) {
    const auto& op = m_package.ops()[i];
    auto& p = m_prepared->ops[i];
    if (op.kind == OpKind::prefetch) {
        // Reads one byte of every cache line, as a CMO prefetch brings the lines into the cache.
        std::uint64_t sum = 0;
        for (auto t : op.inputs) {
            const auto* bytes = static_cast<const unsigned char*>(m_tensors.data(t));
            for (std::uint64_t k = 0; k < m_package.tensors()[t].bytes; k += 64)
                sum += bytes[k];
        }
        m_prepared->touched.fetch_add(sum, std::memory_order_relaxed);
        return;
    }
    // An AICPU tiling kernel: every block in turn, on this thread.
    sk_kernel_ctx ctx{SK_HOST_ABI_VERSION,
                      0,
                      op.block_dim,
                      SK_CORE_ANY,
                      static_cast<std::uint32_t>(op.inputs.size()),
                      static_cast<std::uint32_t>(op.outputs.size()),
                      p.args.data(),
                      p.workspace.get(),
                      op.workspace};
    for (std::uint32_t b = 0; b < op.block_dim; ++b) {
        ctx.block_idx = b;
        op.fn(&ctx);
    }
}

void Runner::wait_side(const std::vector<std::int64_t>& events) {
    for (auto e : events)
        sk_flag_wait(m_prepared->flag(e), m_prepared->target[m_prepared->flag_of.at(e)]);
}

void Runner::notify_side(const std::vector<std::int64_t>& events) {
    for (auto e : events)
        __atomic_store_n(m_prepared->flag(e), m_prepared->target[m_prepared->flag_of.at(e)],
                         __ATOMIC_RELEASE);
}

void Runner::run_side_streams() {
    std::vector<std::jthread> threads;
    for (const auto& stream : m_prepared->side_streams)
        threads.emplace_back([this, &stream] {
            for (auto i : stream) {
                wait_side(m_package.ops()[i].wait);
                run_beside(i);
                notify_side(m_package.ops()[i].notify);
            }
        });
}

std::uint64_t Runner::run_fused() {
    if (m_pointed != m_tensors.generation())
        point_tensors();
    std::uint64_t before = m_device.launches();
    auto& p = *m_prepared;
    std::fill_n(p.flags.get(), std::max<std::size_t>(1, p.target.size()) * Prepared::k_stride, 0);
    if (m_drop_side_waits) {
        for (const auto& stream : p.side_streams)
            for (auto i : stream)
                for (auto t : m_package.ops()[i].outputs)
                    std::memset(m_tensors.data(t), 0, m_package.tensors()[t].bytes);
    }
    std::optional<std::jthread> beside;
    if (!m_drop_side_waits && !p.side_streams.empty())
        beside.emplace([this] { run_side_streams(); });
    for (const auto& step : m_package.steps()) {
        if (step.segment) {
            launch_segment(step.index);
            continue;
        }
        const auto& op = m_package.ops()[step.index];
        if (op.kind != OpKind::kernel)
            continue; // on its stream's thread
        if (!m_drop_side_waits)
            wait_side(op.wait);
        launch_op(step.index);
        notify_side(op.notify);
    }
    beside.reset(); // joins
    if (m_drop_side_waits)
        run_side_streams();
    return m_device.launches() - before;
}

std::uint64_t Runner::run_unfused() {
    if (m_pointed != m_tensors.generation())
        point_tensors();
    std::uint64_t before = m_device.launches();
    for (std::size_t i = 0; i < m_package.ops().size(); ++i) {
        if (m_package.ops()[i].kind == OpKind::kernel)
            launch_op(i);
        else
            run_beside(i);
    }
    return m_device.launches() - before;
}

std::uint64_t Runner::run_segment(std::size_t segment) {
    if (m_pointed != m_tensors.generation())
        point_tensors();
    std::uint64_t before = m_device.launches();
    bool dropped = m_drop_side_waits;
    m_drop_side_waits = true; // the waits of this one SuperKernel point at a set flag
    point_side_slots();
    launch_segment(segment);
    m_drop_side_waits = dropped;
    point_side_slots();
    return m_device.launches() - before;
}

} // namespace skforge::runtime
