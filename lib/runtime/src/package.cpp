// SPDX-License-Identifier: Apache-2.0
// Loading a host package's program and libraries, preparing its launches, running and comparing.
#include "skforge/runtime/package.hpp"

#include "program_check.hpp"
#include "skforge/kernel/host_dtype.hpp"
#include "skforge/support/checked.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/json_depth.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <limits>
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
    auto n = check::block_size(bytes);
    void* p = n ? std::aligned_alloc(k_align, static_cast<std::size_t>(*n)) : nullptr;
    if (p == nullptr)
        throw Error("out of memory allocating " + std::to_string(bytes) + " bytes");
    std::memset(p, 0, static_cast<std::size_t>(*n));
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

namespace {

// Tensor `i` of the program (`t`), checked: its shape, its size and that its block fits.
TensorInfo read_tensor(const json& t, std::size_t i, const std::string& file) {
    const std::string where = "tensors[" + std::to_string(i) + "]";
    TensorInfo info;
    info.name = t.at("name").get<std::string>();
    info.dtype = t.at("dtype").get<std::string>();
    auto dt = kernel::host_dtype(info.dtype);
    if (!dt)
        throw Error(file + ": tensor '" + info.name + "' has unknown dtype '" + info.dtype + "'");
    info.dt = *dt;
    info.shape = check::integers(t.at("shape"), file, where + ".shape");
    auto bytes = support::checked_mul(check::elements(info, file, where), sk_dtype_size(info.dt));
    if (!bytes || !check::block_size(*bytes))
        throw Error(file + ": " + where + ": tensor '" + info.name + "' of " + info.dtype +
                    " is larger than memory can hold");
    info.bytes = *bytes;
    info.graph_input = t.at("graph_input").get<bool>();
    info.graph_output = t.at("graph_output").get<bool>();
    return info;
}

// Operator `i` of the program, checked; its kernel is not loaded yet.
OpInfo read_op(const json& o, std::size_t i, std::size_t tensors, const std::string& file) {
    const std::string where = "ops[" + std::to_string(i) + "]";
    OpInfo op;
    op.name = o.at("name").get<std::string>();
    op.type = o.at("type").get<std::string>();
    op.kind = op_kind(o.value("kind", "kernel"), op.name, file);
    op.stream = check::member<std::uint32_t>(o, "stream", file, where, 0u);
    op.notify = o.contains("notify") ? check::integers(o["notify"], file, where + ".notify")
                                     : std::vector<std::int64_t>{};
    op.wait = o.contains("wait") ? check::integers(o["wait"], file, where + ".wait")
                                 : std::vector<std::int64_t>{};
    op.library = o.at("library").get<std::string>();
    op.symbol = o.at("symbol").get<std::string>();
    op.block_dim =
        std::max<std::uint32_t>(1, check::member<std::uint32_t>(o, "block_dim", file, where));
    op.workspace = check::member<std::uint64_t>(o, "workspace", file, where);
    check::allocatable(op.workspace, file, where + ".workspace");
    op.core_mask = check::member<std::uint32_t>(o, "core_mask", file, where);
    if (op.core_mask < 1 || op.core_mask > 3)
        throw Error(file + ": operator '" + op.name + "' has core_mask " +
                    std::to_string(op.core_mask) + " (1 vector, 2 cube, 3 both)");
    std::size_t k = 0;
    for (const auto& t : o.at("inputs"))
        op.inputs.push_back(check::index(t, tensors, "tensors", file,
                                         where + ".inputs[" + std::to_string(k++) + "]"));
    k = 0;
    for (const auto& t : o.at("outputs"))
        op.outputs.push_back(check::index(t, tensors, "tensors", file,
                                          where + ".outputs[" + std::to_string(k++) + "]"));
    op.segment = check::member<int>(o, "segment", file, where); // its range once segments are read
    return op;
}

// An offset of an 8-byte pointer in a parameter block of `size` bytes (size >= 8).
std::int64_t param_offset(const json& v, std::int64_t size, const std::string& file,
                          const std::string& field) {
    return check::integer(v, 0, size - 8, file, field);
}

// SuperKernel `i` of the program, checked against the operators and tensors; not loaded yet.
SegmentInfo read_segment(const json& s, std::size_t i, std::vector<TensorInfo>& tensors,
                         std::size_t ops, const std::string& file) {
    const std::string where = "segments[" + std::to_string(i) + "]";
    SegmentInfo seg;
    seg.name = s.at("name").get<std::string>();
    seg.library = s.at("library").get<std::string>();
    seg.entry = s.at("entry").get<std::string>();
    seg.task_ration = s.at("task_ration").get<std::string>();
    std::size_t k = 0;
    for (const auto& o : s.at("ops"))
        seg.ops.push_back(
            check::index(o, ops, "operators", file, where + ".ops[" + std::to_string(k++) + "]"));
    // The block holds at least the workspace pointer.
    seg.param_block_size =
        check::integer(s.at("param_block_size"), 8, std::numeric_limits<std::int64_t>::max(), file,
                       where + ".param_block_size");
    check::allocatable(static_cast<std::uint64_t>(seg.param_block_size), file,
                       where + ".param_block_size");
    seg.workspace_param_offset = param_offset(s.at("workspace_param_offset"), seg.param_block_size,
                                              file, where + ".workspace_param_offset");
    seg.workspace_bytes = check::member<std::uint64_t>(s, "workspace_bytes", file, where);
    check::allocatable(seg.workspace_bytes, file, where + ".workspace_bytes");
    seg.sync_slots = static_cast<std::uint32_t>(check::unsigned_integer(
        s.at("sync_slots"), check::k_max_slots, file, where + ".sync_slots"));
    k = 0;
    for (const auto& a : s.at("parameters")) {
        std::string at = where + ".parameters[" + std::to_string(k++) + "]";
        auto t = check::index(a.at("tensor"), tensors.size(), "tensors", file, at + ".tensor");
        seg.parameters.emplace_back(t, param_offset(a.at("param_offset"), seg.param_block_size,
                                                    file, at + ".param_offset"));
    }
    k = 0;
    for (const auto& a : s.at("arena_tensors"))
        tensors[check::index(a, tensors.size(), "tensors", file,
                             where + ".arena_tensors[" + std::to_string(k++) + "]")]
            .arena = true;
    // The event flags lie between the workspace pointer and the notify/wait slots.
    seg.side_slot_offset =
        s.contains("side_slot_offset")
            ? check::integer(s["side_slot_offset"], seg.workspace_param_offset + 8,
                             seg.param_block_size, file, where + ".side_slot_offset")
            : seg.param_block_size;
    k = 0;
    for (const auto& a : s.value("side_slots", json::array())) {
        std::string at = where + ".side_slots[" + std::to_string(k++) + "]";
        auto off = check::integer(a.at("param_offset"), seg.side_slot_offset,
                                  seg.param_block_size - 8, file, at + ".param_offset");
        seg.side_slots.push_back({off, check::member<std::int64_t>(a, "event", file, at),
                                  a.at("role").get<std::string>() == "wait"});
    }
    return seg;
}

} // namespace

Package Package::parse(const std::string& text, const std::string& file) {
    Package p;
    try {
        if (auto deep = support::check_json_depth(text))
            throw Error(file + ": " + *deep);
        json j = json::parse(text);
        if (j.at("format") != "skforge-host-program" || j.at("version") != 1 ||
            j.at("abi_version") != SK_HOST_ABI_VERSION)
            throw Error(file + ": not a version 1 skforge host program (ABI " +
                        std::to_string(SK_HOST_ABI_VERSION) + ")");
        p.m_graph = j.at("graph").get<std::string>();
        for (const auto& t : j.at("tensors"))
            p.m_tensors.push_back(read_tensor(t, p.m_tensors.size(), file));
        check::unique_names(p.m_tensors, file);
        for (const auto& o : j.at("ops"))
            p.m_ops.push_back(read_op(o, p.m_ops.size(), p.m_tensors.size(), file));
        for (const auto& s : j.at("segments"))
            p.m_segments.push_back(
                read_segment(s, p.m_segments.size(), p.m_tensors, p.m_ops.size(), file));
        for (std::size_t i = 0; i < p.m_ops.size(); ++i)
            if (p.m_ops[i].segment < -1 ||
                p.m_ops[i].segment >= static_cast<std::int64_t>(p.m_segments.size()))
                throw Error(file + ": ops[" + std::to_string(i) + "].segment: " +
                            std::to_string(p.m_ops[i].segment) + " is out of range (" +
                            std::to_string(p.m_segments.size()) + " segments; -1: none)");
        check_side_events(p.m_ops, p.m_segments, file);
        std::size_t k = 0;
        for (const auto& st : j.at("steps")) {
            bool seg = st.contains("segment");
            std::string field = "steps[" + std::to_string(k++) + "]." + (seg ? "segment" : "op");
            auto i = seg ? check::index(st["segment"], p.m_segments.size(), "segments", file, field)
                         : check::index(st.at("op"), p.m_ops.size(), "operators", file, field);
            p.m_steps.push_back({seg, i});
        }
        // Every library path, before any is loaded.
        for (const auto& op : p.m_ops)
            if (op.kind != OpKind::prefetch)
                library_path("", op.library, file);
        for (const auto& s : p.m_segments)
            library_path("", s.library, file);
    } catch (const json::exception& e) {
        throw Error(file + ": damaged program: " + e.what());
    }
    return p;
}

Package Package::open(const std::string& dir) {
    const std::string file = dir + "/host/program.json";
    if (!std::filesystem::is_regular_file(file))
        throw Error(file + ": no host program here; was the package compiled with --npu-arch "
                           "host?");
    Package p = parse(support::read_file(file), file);
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
    for (auto& op : p.m_ops)
        if (op.kind != OpKind::prefetch) // a prefetch runs no kernel
            op.fn = reinterpret_cast<sk_kernel_fn>(load(op.library, op.symbol));
    for (auto& s : p.m_segments)
        s.fn = reinterpret_cast<sk_entry_fn>(load(s.library, s.entry));
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
