// SPDX-License-Identifier: Apache-2.0
// The NPU backend's entry source, written the way the vendor's SuperKernel compiler writes its
// own (share/doc/npu-target.md, share/doc/cann-conformance.md): the sub-kernels are the op
// compiler's SuperKernel builds, `<func>(uint64_t args_offset)`, reading their arguments from
// the parameter table at `args_offset`; the entry only orders them, synchronises the cores
// between them and prefetches their code.
#include "skforge/codegen/ascendc.hpp"

#include "ascendc_code.hpp"
#include "skforge/kernel/code_size.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/identifier.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>

namespace skforge::codegen {

using kernel::KernelType;

namespace {

// ---- What the entry knows about each sub-kernel -------------------------------------------

const graph::Op& op_at(const graph::Graph& g, const fusion::Segment& s, std::size_t p) {
    return g.ops[static_cast<std::size_t>(s.ops[p])];
}

// An event whose other end is outside the segment: a lock in the parameter table, and what
// the other end is (for the comment the entry carries).
struct Lock {
    std::int64_t event;
    std::uint32_t slot;
    std::string peer;
};

struct Sub {
    std::string op;
    KernelType type = KernelType::aiv_only;
    std::string aic, aiv; // functions on the cube / vector cores, empty where it has none
    std::uint32_t block_dim = 1;
    std::uint32_t split = 1;
    std::uint32_t preload_aic = 0, preload_aiv = 0; // 2 KiB units of code on each kind
    std::uint32_t args = 0;                         // args_offset
    std::uint32_t stream = 0;
    bool es_set = false, es_wait = false; // the sub-kernel starts/waits early itself
    bool dcci_before = false, dcci_after = false;
    bool dcci_in_guard = false; // the release puts them inside the block-index guard
    bool sync_all = false;
    std::vector<Lock> notify, wait;
};

std::string function(const Sub& sub, Side side) {
    return side == Side::aic ? sub.aic : sub.aiv;
}

// Preload counts 2 KiB lines of at most 16 KiB of code (the vector core's instruction cache),
// of the .text the vendor measures (16 KiB when nothing is known).
std::uint32_t preload_units(std::uint64_t code_bytes) {
    std::uint64_t bytes = std::min<std::uint64_t>(code_bytes == 0 ? 16384 : code_bytes, 16384);
    return static_cast<std::uint32_t>((bytes + 2047) / 2048);
}

// Events both of whose ends are in the segment.
std::set<std::int64_t> inner_events(const graph::Graph& g, const fusion::Segment& s) {
    std::set<std::int64_t> sent, inner;
    for (std::size_t p = 0; p < s.ops.size(); ++p)
        sent.insert(op_at(g, s, p).send_events.begin(), op_at(g, s, p).send_events.end());
    for (std::size_t p = 0; p < s.ops.size(); ++p)
        for (auto e : op_at(g, s, p).recv_events)
            if (sent.count(e) != 0)
                inner.insert(e);
    return inner;
}

enum class End { sender, receiver };

// What the operator at the other end of a lock is, for the entry's comments: an AICPU tiling
// (tiling sink), a prefetch on an SDMA stream, or another operator.
std::string describe_peer(const graph::Op& op) {
    std::string where = ", stream " + std::to_string(op.stream_id) + ")";
    switch (op.kind) {
    case graph::OpKind::aicpu_tiling:
        return op.name + " (AICPU tiling of " + op.tiling_for + where;
    case graph::OpKind::prefetch: {
        std::string what;
        for (const auto& t : op.inputs)
            what += (what.empty() ? "" : ", ") + t.name;
        return op.name + " (prefetch of " + what + where;
    }
    case graph::OpKind::kernel:
        break;
    }
    return op.name + " (" + op.type + where;
}

// The operator at the other end of outside event `e` (its sender or receiver), described.
std::string peer_of(const graph::Graph& g, std::int64_t e, End which) {
    for (const auto& op : g.ops) {
        const auto& list = which == End::sender ? op.send_events : op.recv_events;
        if (std::find(list.begin(), list.end(), e) != list.end())
            return describe_peer(op);
    }
    return "the launcher"; // no operator of the graph: the event is the caller's
}

std::vector<Lock> locks(const graph::Graph& g, const std::vector<std::int64_t>& events,
                        std::uint32_t first, const std::set<std::int64_t>& inner, End peer) {
    std::vector<Lock> out;
    for (std::size_t i = 0; i < events.size(); ++i)
        if (inner.count(events[i]) == 0)
            out.push_back(
                {events[i], first + static_cast<std::uint32_t>(i), peer_of(g, events[i], peer)});
    return out;
}

bool matches(const std::vector<std::string>& patterns, const std::string& op_type) {
    return std::any_of(patterns.begin(), patterns.end(),
                       [&](const std::string& p) { return graph::op_type_matches(p, op_type); });
}

// The .text of the object a kind of core runs, as the vendor measures it (0 when unknown): the
// "AiCore" object of a single-core kernel, the cube or vector half of a MIX one. With a
// split_mode in the JSON the binary is the op compiler's archive of split copies, measured at
// the member obj_files names; without one, the binary itself (kernel/code_size.hpp).
std::uint64_t text_size(const graph::Graph& g, const graph::Op& op, KernelType type, Side side) {
    const auto& meta = g.kernels[static_cast<std::size_t>(op.kernel_index)].meta;
    if (op.kernel.bin_path.empty())
        return 0;
    const bool single = type == KernelType::aiv_only || type == KernelType::aic_only;
    const std::string half = side == Side::aic ? "-cube" : "-vec";
    for (const auto& [key, name] : meta.sub_kernel_names) {
        if (!(single ? key == "AiCore" : key.ends_with(half)))
            continue;
        std::string member;
        if (meta.split_mode > 0 && !name.obj_files.empty())
            member = std::filesystem::path(name.obj_files.front()).filename().string();
        std::string bytes;
        try {
            bytes = support::read_file(graph::resolve_path(g, op.kernel.bin_path));
        } catch (const support::Error&) {
            return 0; // the loader has reported it
        }
        return kernel::text_section_size(bytes, member).value_or(0);
    }
    return 0;
}

std::vector<Sub> subs_of(const graph::Graph& g, const fusion::Segment& s, const NpuTarget& t) {
    auto layout = npu_param_layout(g, s, t);
    auto inner = inner_events(g, s);
    std::vector<Sub> out;
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        const auto& op = op_at(g, s, p);
        const auto& k = g.kernels[static_cast<std::size_t>(op.kernel_index)];
        Sub sub;
        sub.op = op.name;
        sub.type = *k.meta.kernel_type;
        std::tie(sub.aic, sub.aiv) = npu_sub_functions(g, s, p, t);
        sub.block_dim = s.subs[p].block_dim;
        sub.split = std::max<std::uint32_t>(1, s.subs[p].split_mode);
        // The .text the vendor measures; an object that has none we can read (not ELF) counts
        // whole, as before (the vendor refuses it).
        auto units = [&](Side side) {
            std::uint64_t text = text_size(g, op, sub.type, side);
            return preload_units(text != 0 ? text : k.binary_size);
        };
        sub.preload_aic = units(Side::aic);
        sub.preload_aiv = units(Side::aiv);
        sub.args = layout.param_offset[p];
        sub.stream = op.stream_id;
        sub.es_set = k.meta.early_start_set_flag;
        sub.es_wait = k.meta.early_start_wait_flag;
        // The scope's patterns or the sub-kernel's own JSON; debug-dcci-all is the entry's own.
        // The JSON's own disable flag counts where the release's generator reads it.
        bool on = !s.subs[p].dcci_disabled && !(cann_release(t.cann).honours_dcci_disable_flag &&
                                                k.meta.call_dcci_disable_on_kernel);
        sub.dcci_before = on && (matches(s.options.dcci_before_kernel_start, op.type) ||
                                 k.meta.call_dcci_before_kernel_start);
        sub.dcci_after = on && (matches(s.options.dcci_after_kernel_end, op.type) ||
                                k.meta.call_dcci_after_kernel_end);
        sub.dcci_in_guard = cann_release(t.cann).dcci_inside_block_guard;
        sub.sync_all = k.meta.sync_all;
        sub.notify = locks(g, op.send_events, layout.notify_offset[p], inner, End::receiver);
        sub.wait = locks(g, op.recv_events, layout.wait_offset[p], inner, End::sender);
        out.push_back(std::move(sub));
    }
    return out;
}

// ---- The scope's options, as the vendor's compiler reads them -----------------------------

enum class EarlyStart { off, on };

struct Entry {
    std::string kernel; // kernelName
    NpuLaunch launch;
    bool c310 = false; // dav-3510: no FFTS address
    FlagStyle flags = FlagStyle::ffts;
    EarlyStart early = EarlyStart::on;
    graph::PreloadCode preload = graph::PreloadCode::per_func;
    bool two_stream = false;
    bool debug_dcci_all = false, debug_sync_all = false, feed_sync_all = false;
    std::uint64_t feed_bytes = 0;
    std::uint32_t workspace_slot = 0;
    std::uint32_t func_align = 512;
    std::uint32_t split = 1;
    std::vector<Sub> subs;
    const CannRelease* release = nullptr;
};

// What CANN's SuperKernel compiler builds and skforge's generator does not: refused, naming the
// vendor's feature (share/doc/cann-conformance.md, "What skforge does not build"). The vendor's
// backend (--sk-backend cann) is handed them unchanged.
void refuse_unbuilt_features(const graph::Graph& g, const fusion::Segment& s) {
    const std::string sk = "SuperKernel '" + s.name + "'";
    const std::string file = g.file.empty() ? std::string() : g.file + ": ";
    if (s.options.profiling)
        throw support::Error(
            file + sk + " (scope '" + s.scope +
            "') has profiling=1: CANN's SuperKernel compiler then writes its profiling records "
            "(InitProfiling, RecordProfiling around each sub-kernel, the profiling area in the "
            "parameter table); skforge's generator does not build SuperKernel profiling (give the "
            "scope profiling=0, or build with --sk-backend cann)");
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        const auto& op = op_at(g, s, p);
        const auto& meta = g.kernels[static_cast<std::size_t>(op.kernel_index)].meta;
        if (kernel::uses_debug_buffer(meta))
            throw support::Error(
                file + "'" + op.name + "' (kernel " + meta.kernel_name + ") of " + sk +
                " was compiled with debugOptions '" + meta.debug_options + "' (debugBufSize " +
                std::to_string(meta.debug_buf_size) +
                "): CANN's SuperKernel compiler builds it with the dump buffer (kernel-list "
                "debug_option/debug_size, -DASCENDC_DUMP); skforge's generator does not build "
                "sub-kernels with printf, assert or timestamp (compile the sub-kernel without "
                "them, or build with --sk-backend cann)");
    }
}

// An event received by a sub-kernel listed before its sender (a vendor kernel_info's op_list
// allows it): only two-stream mode, where each kind of core runs its own sub-kernels, can order
// it. One program runs the sub-kernels in list order and would wait for one not yet run (the
// vendor's generator takes the event as one with the outside and waits on a lock nobody sets
// first), so it is refused.
void refuse_backward_events(const graph::Graph& g, const fusion::Segment& s) {
    for (std::size_t q = 0; q < s.ops.size(); ++q)
        for (auto ev : op_at(g, s, q).recv_events)
            for (std::size_t p = q + 1; p < s.ops.size(); ++p) {
                const auto& sends = op_at(g, s, p).send_events;
                if (std::find(sends.begin(), sends.end(), ev) == sends.end())
                    continue;
                throw support::Error(
                    (g.file.empty() ? std::string() : g.file + ": ") + "'" + op_at(g, s, q).name +
                    "' of SuperKernel '" + s.name + "' receives event " + std::to_string(ev) +
                    " from '" + op_at(g, s, p).name +
                    "', listed after it, and the SuperKernel runs its sub-kernels one after "
                    "another in list order (stream-fusion=0, or no two neighbours on different "
                    "streams without an event between them): it would wait for a sub-kernel that "
                    "has not run (list the sender first, or give the scope stream-fusion=1 with "
                    "the two streams interleaved)");
            }
}

Entry entry_of(const graph::Graph& g, const fusion::Segment& s, const NpuTarget& t) {
    refuse_unbuilt_features(g, s);
    Entry e;
    e.kernel = npu_entry_symbol(g, s);
    e.launch = npu_launch(g, s, t);
    e.c310 = t.arch == "dav-3510";
    e.two_stream = two_stream_mode(g, s);
    if (!e.two_stream)
        refuse_backward_events(g, s);
    e.early = early_start_mode(g, s) ? EarlyStart::on : EarlyStart::off;
    e.preload = s.options.preload_code;
    e.debug_dcci_all = s.options.debug_dcci_all;
    e.debug_sync_all = s.options.debug_sync_all;
    e.feed_sync_all = s.options.feed_sync_all;
    e.feed_bytes = npu_sync_bytes(g, s, t);
    e.workspace_slot = npu_param_layout(g, s, t).workspace_offset;
    e.func_align = s.options.func_align;
    e.split = std::max<std::uint32_t>(1, s.options.split_mode);
    e.subs = subs_of(g, s, t);
    e.release = &cann_release(t.cann);
    e.flags = flag_style(t.arch, *e.release);
    return e;
}

// ---- Pieces of code ---------------------------------------------------------------------

// The vendor's early-start class of a kernel type: 0 cube, 1 vector, 2 both.
int core_class(KernelType t) {
    return is_mix(t) ? 2 : runs_on(t, Side::aiv) ? 1 : 0;
}

// The order the vendor writes a kernel's per-core-type blocks in: its own kind first.
std::vector<Side> sides_of(KernelType t) {
    return runs_on(t, Side::aic) ? std::vector<Side>{Side::aic, Side::aiv}
                                 : std::vector<Side>{Side::aiv, Side::aic};
}

// The synchronisation the vendor puts between sub-kernels when early start is off, and after
// each one for debug-sync-all: all cores of the SuperKernel's kind.
void sync_by_launch(Code& c, const Entry& e) {
    if (is_mix(e.launch.type))
        c.line("AscendC::SyncAll<false>();");
    else
        same_kind_sync(c, runs_on(e.launch.type, Side::aic) ? Side::aic : Side::aiv, e.flags);
}

// Cores of a sub-kernel's kind beyond its blockDim, or all cores of a kind it does not use.
std::string complement(const Sub& sub, Side side, bool itself) {
    if (!itself || !runs_on(sub.type, side))
        return "true";
    return block_index(sub.type) + " >= " + std::to_string(sub.block_dim);
}

void early_start_set(Code& c, const Sub& sub) {
    for (Side side : sides_of(sub.type)) {
        c.open("if " + guard(side));
        c.open("if (" + complement(sub, side, sub.es_set) + ")");
        if (runs_on(sub.type, side))
            c.line("AscendC::SetNextTaskStart();");
        else
            c.line(std::string("// ") + (side == Side::aic ? "AIV" : "AIC") +
                   " only, no complement early start set flag.");
        c.close();
        c.close();
    }
}

void early_start_wait(Code& c, const Sub& sub, int config) {
    for (Side side : sides_of(sub.type)) {
        c.open("if " + guard(side));
        c.open("if (" + complement(sub, side, sub.es_wait) + ")");
        c.line("AscendC::WaitPreTaskEndImpl<" + std::to_string(config) + ">();");
        c.close();
        c.close();
    }
}

void inter_op_barrier(Code& c, const Entry& e, const Sub& pre, const Sub& cur) {
    c.line("// inter-kernel barrier");
    if (e.early == EarlyStart::off) {
        c.line("// early-start=0: all cores of the SuperKernel's kind");
        sync_by_launch(c, e);
        return;
    }
    int config = (core_class(pre.type) << 2) | core_class(cur.type);
    early_start_set(c, pre);
    c.line("g_super_kernel_early_start_config = " + std::to_string(config) + ";");
    early_start_wait(c, cur, config);
}

// Event locks: block 0 of the sub-kernel's kind sets or waits for the 8-byte lock whose address
// is in the parameter table. Cube kernels use the cube cores, the others the vector cores.
Side lock_side(KernelType t) {
    return runs_on(t, Side::aiv) ? Side::aiv : Side::aic;
}

void notify(Code& c, const Sub& sub) {
    if (sub.notify.empty())
        return;
    Side side = lock_side(sub.type);
    c.open("if " + guard(side));
    for (const auto& l : sub.notify) {
        c.line("// " + sub.op + " notifies " + l.peer + ": event " + std::to_string(l.event));
        c.line(std::string("NotifyFunc<") + (side == Side::aic ? "true" : "false") +
               ">(param_base[" + std::to_string(l.slot) + "]);");
    }
    c.close();
}

void wait(Code& c, const Sub& sub) {
    if (sub.wait.empty())
        return;
    Side side = lock_side(sub.type);
    c.open("if " + guard(side));
    for (const auto& l : sub.wait) {
        c.line("// " + sub.op + " waits for " + l.peer + ": event " + std::to_string(l.event));
        c.line(std::string("WaitFunc<") + (side == Side::aic ? "true" : "false") + ">(param_base[" +
               std::to_string(l.slot) + "]);");
    }
    c.close();
}

// The kernel leaves every wait lock it used at 0 for its next launch.
void reset_locks(Code& c, const Entry& e) {
    for (const auto& sub : e.subs) {
        Side side = lock_side(sub.type);
        for (const auto& l : sub.wait) {
            c.open("if " + guard(side));
            c.open("if (" +
                   std::string(side == Side::aic ? "get_block_idx()" : "AscendC::GetBlockIdx()") +
                   " == 0)");
            c.line("__gm__ uint64_t* lock = reinterpret_cast<__gm__ uint64_t*>(param_base[" +
                   std::to_string(l.slot) + "]);");
            c.line("*lock = 0; // event " + std::to_string(l.event) + " of " + sub.op);
            c.line("dcci(lock, 0, 2);");
            c.close();
            c.close();
        }
    }
}

// After a wait on block 0 of one kind of core, when the barrier below does not hold the cores
// it waited on: the release's rule (CannRelease::wait_extra_sync).
void wait_extra_sync(Code& c, const Entry& e, const Sub& pre, const Sub& cur) {
    for (const auto& rule : e.release->wait_extra_sync) {
        if ((rule.before & types_of(pre.type)) == 0 || (rule.current & types_of(cur.type)) == 0)
            continue;
        c.line(std::string("// the barrier below does not hold the ") +
               (rule.vector_cores ? "vector" : "cube") + " cores: hold them here");
        if (rule.vector_cores)
            c.line("AscendC::SyncAll<true>();");
        else
            same_kind_sync(c, Side::aic, e.flags);
        return;
    }
}

// Between two sub-kernels of one program: the barrier, and the locks of events with the outside.
void sync_and_events(Code& c, const Entry& e, const Sub& pre, const Sub& cur) {
    if (!cur.wait.empty() && !pre.notify.empty()) {
        inter_op_barrier(c, e, pre, cur);
        notify(c, pre);
        wait(c, cur);
        c.line("// all cores wait with the one that waited for the lock");
        sync_by_launch(c, e);
        return;
    }
    if (!cur.wait.empty()) {
        wait(c, cur);
        wait_extra_sync(c, e, pre, cur);
    }
    inter_op_barrier(c, e, pre, cur);
    notify(c, pre);
}

// feed-sync-all: a sub-kernel that synchronises all cores but runs on fewer than the
// SuperKernel has gets a SyncAll fed by the cores it does not use.
bool needs_feed(const Entry& e, const Sub& sub) {
    return sub.sync_all &&
           fusion::idle_cores(e.launch.type, e.launch.block_dim, sub.type, sub.block_dim) > 0;
}

void feed_setup(Code& c, const Entry& e, std::size_t p, bool feed) {
    if (!e.feed_sync_all)
        return;
    if (!feed) {
        c.line("AscendC::g_superKernelAutoSyncAllEnable = false;");
        return;
    }
    std::string n = std::to_string(e.subs.size()), at = std::to_string(p);
    c.line("AscendC::g_superKernelAutoSyncAllSyncIdx = 0;");
    c.line("AscendC::g_superKernelAutoSyncAllEnable = true;");
    c.open("if ASCEND_IS_AIC");
    c.line("AscendC::g_superKernelAutoSyncAllConfigGmAddr = "
           "AscendC::g_superKernelAutoSyncAllConfigGmBaseAddr + " +
           at + " * 64;");
    c.close();
    c.open("if ASCEND_IS_AIV");
    c.line("AscendC::g_superKernelAutoSyncAllConfigGmAddr = "
           "AscendC::g_superKernelAutoSyncAllConfigGmBaseAddr + " +
           n + " * 64 + " + at + " * 64;");
    c.close();
}

enum class Call { run, preload };

void dcci_all(Code& c, const char* why) {
    c.line(std::string("// ") + why);
    c.line("dcci((__gm__ uint64_t*)0, cache_line_t::ENTIRE_DATA_CACHE, "
           "dcci_dst_t::CACHELINE_OUT);");
}

// One statement per split copy, chosen by the physical core id so that neighbouring cores fetch
// different copies of the code.
void split_switch(Code& c, const Sub& sub, Side side, Call what, bool feed) {
    const std::string func = function(sub, side);
    const auto units = side == Side::aic ? sub.preload_aic : sub.preload_aiv;
    auto stmt = [&](std::uint32_t k) {
        std::string f = k == 0 ? func : func + "_split" + std::to_string(k);
        if (what == Call::preload)
            c.line("preload((const void *)" + f + ", " + std::to_string(units) + ");");
        else
            c.line(f + "(" + std::to_string(sub.args) + ");");
        if (feed)
            c.line("AscendC::SuperKernelAutoSyncAllEndImpl();");
    };
    if (sub.split <= 1) {
        stmt(0);
        return;
    }
    std::string n = std::to_string(sub.split);
    c.line("uint8_t coreid = (uint8_t)get_coreid();");
    for (std::uint32_t k = 0; k < sub.split; ++k) {
        std::string cond = "if ((coreid % " + n + ") == " + std::to_string(k) + ")";
        if (k == 0)
            c.open(cond);
        else
            c.reopen(k + 1 == sub.split ? "else" : "else " + cond);
        stmt(k);
    }
    c.close();
}

void call_side(Code& c, const Sub& sub, Side side, Call what, bool feed) {
    // The vendor's dcci before and after a sub-kernel: from the 9.0 line on, done by every core
    // of the kind, also those the sub-kernel leaves idle (graph-autofusion
    // super_kernel_sub_op_infos.py gen_call_func at e1cbeb9b: outside the block-index guard);
    // on the 8.5 line only by the cores that run it (inside the guard, at 423ae264).
    const bool run = what == Call::run;
    c.open("if " + guard(side));
    if (run && sub.dcci_before && !sub.dcci_in_guard)
        dcci_all(c, "dcci-before-kernel-start");
    c.open("if (" + block_index(sub.type) + " < " + std::to_string(sub.block_dim) + ")");
    if (run && sub.dcci_before && sub.dcci_in_guard)
        dcci_all(c, "dcci-before-kernel-start");
    split_switch(c, sub, side, what, feed);
    if (run && sub.dcci_after && sub.dcci_in_guard)
        dcci_all(c, "dcci-after-kernel-end");
    if (feed) {
        c.reopen("else");
        c.line("AscendC::SuperKernelAutoSyncAllComplementImpl();");
    }
    c.close();
    if (run && sub.dcci_after && !sub.dcci_in_guard)
        dcci_all(c, "dcci-after-kernel-end");
    c.close();
}

// The call (or preload) of a sub-kernel on the given kinds of core.
void call(Code& c, const Sub& sub, const std::vector<Side>& on, Call what, bool feed) {
    for (Side side : {Side::aic, Side::aiv})
        if (runs_on(sub.type, side) && std::find(on.begin(), on.end(), side) != on.end())
            call_side(c, sub, side, what, feed);
}

void after_call(Code& c, const Entry& e, const std::function<void()>& sync_all) {
    if (e.debug_dcci_all) {
        c.line("// debug-dcci-all");
        c.line("pipe_barrier(PIPE_ALL);");
        dcci_all(c, "write back and invalidate the whole data cache");
    }
    if (e.debug_sync_all) {
        c.line("// debug-sync-all");
        sync_all();
    }
}

} // namespace

// ---- Public: launch, parameter table, names ---------------------------------------------

bool two_stream_mode(const graph::Graph& g, const fusion::Segment& s) {
    if (!s.options.stream_fusion)
        return false;
    for (std::size_t p = 1; p < s.ops.size(); ++p) {
        const auto& a = op_at(g, s, p - 1);
        const auto& b = op_at(g, s, p);
        if (a.stream_id == b.stream_id)
            continue;
        bool connected = std::any_of(a.send_events.begin(), a.send_events.end(), [&](auto e) {
            return std::find(b.recv_events.begin(), b.recv_events.end(), e) != b.recv_events.end();
        });
        if (!connected)
            return true;
    }
    return false;
}

bool early_start_mode(const graph::Graph& g, const fusion::Segment& s) {
    return s.options.early_start != 0 && !two_stream_mode(g, s);
}

// ---------------------------------------------

NpuLaunch npu_launch(const graph::Graph& g, const fusion::Segment& s, const NpuTarget& target) {
    return fusion::npu_launch(g, s, target.soc, target.arch);
}

NpuParamLayout npu_param_layout(const graph::Graph& g, const fusion::Segment& s,
                                const NpuTarget& target) {
    // The metadata's slots (fusion::vendor_param_slots), with the lock slots of sub-kernels
    // that have none and the workspace after everything.
    NpuParamLayout l;
    auto slots = fusion::vendor_param_slots(g, s, target.arch);
    std::uint32_t next = target.arch == "dav-3510" ? 0 : 1;
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        const auto& op = op_at(g, s, p);
        l.param_offset.push_back(static_cast<std::uint32_t>(slots[p].param));
        next = static_cast<std::uint32_t>(slots[p].param + slots[p].count);
        l.notify_offset.push_back(next);
        next += static_cast<std::uint32_t>(op.send_events.size());
        l.wait_offset.push_back(next);
        next += static_cast<std::uint32_t>(op.recv_events.size());
    }
    l.workspace_offset = next;
    return l;
}

std::string npu_entry_symbol(const graph::Graph& g, const fusion::Segment& s) {
    return support::c_identifier(g.name + "_" + s.name);
}

std::pair<std::string, std::string> npu_sub_functions(const graph::Graph& g,
                                                      const fusion::Segment& s, std::size_t p,
                                                      const NpuTarget& target) {
    const auto& meta = fusion::sub_kernel_meta(g, s, p);
    std::string chip = target.arch == "dav-3510" ? "dav-c310" : "dav-c220";
    auto named = [&](const std::string& key, const std::string& fallback) {
        auto it = meta.sub_kernel_names.find(key);
        return it == meta.sub_kernel_names.end() || it->second.func_name.empty()
                   ? fallback
                   : it->second.func_name;
    };
    KernelType t = *meta.kernel_type;
    if (t == KernelType::aiv_only)
        return {"", named("AiCore", meta.kernel_name)};
    if (t == KernelType::aic_only)
        return {named("AiCore", meta.kernel_name), ""};
    std::string aic = runs_on(t, Side::aic) ? named(chip + "-cube", meta.kernel_name + "_mix_aic")
                                            : std::string();
    std::string aiv =
        runs_on(t, Side::aiv) ? named(chip + "-vec", meta.kernel_name + "_mix_aiv") : std::string();
    return {aic, aiv};
}

std::uint64_t npu_sync_bytes(const graph::Graph& g, const fusion::Segment& s,
                             const NpuTarget& target) {
    if (!s.options.feed_sync_all)
        return 0;
    // 128 bytes per sub-kernel (a 64-byte flag line per kind of core), spread over the cores in
    // a power-of-two share of at least 512 bytes each.
    auto l = npu_launch(g, s, target);
    std::uint64_t cores = l.block_dim * (l.type == KernelType::mix_aic_1_2 ? 2u : 1u);
    std::uint64_t share = 512;
    while (cores * share <= s.ops.size() * 128)
        share *= 2;
    return cores * share;
}

namespace {

// ---- The programs ------------------------------------------------------------------------

std::string sub_comment(const Sub& sub, std::size_t p) {
    return "// [" + std::to_string(p) + "] " + sub.op + ": " +
           std::string(kernel::kernel_type_name(sub.type)) + ", blockDim " +
           std::to_string(sub.block_dim) + ", stream " + std::to_string(sub.stream) +
           ", parameters from param_base[" + std::to_string(sub.args) + "]";
}

const std::vector<Side> k_both{Side::aic, Side::aiv};

// One program for all cores: the sub-kernels in plan order with a barrier between each two.
void sequential_program(Code& c, const Entry& e) {
    std::size_t n = e.subs.size();
    for (std::size_t p = 0; p < n; ++p) {
        const Sub& cur = e.subs[p];
        c.line("");
        c.line(sub_comment(cur, p));
        if (e.preload == graph::PreloadCode::per_func) { // this one first, then the next
            if (p == 0)
                call(c, cur, k_both, Call::preload, false);
            if (p + 1 < n)
                call(c, e.subs[p + 1], k_both, Call::preload, false);
        }
        if (p > 0) {
            sync_and_events(c, e, e.subs[p - 1], cur);
        } else if (!cur.wait.empty()) { // all cores wait with the one that waits for the lock
            wait(c, cur);
            sync_by_launch(c, e);
        }
        bool feed = e.feed_sync_all && needs_feed(e, cur);
        feed_setup(c, e, p, feed);
        call(c, cur, k_both, Call::run, feed);
        after_call(c, e, [&] { sync_by_launch(c, e); });
    }
    if (n > 0 && !e.subs.back().notify.empty()) {
        c.line("// the last sub-kernel's events, once all cores finished it");
        sync_by_launch(c, e);
        notify(c, e.subs.back());
    }
}

// What must finish before what in two-stream mode: the next sub-kernel of the same stream, and
// the receivers of events sent inside the SuperKernel. A vendor kernel_info may list a receiver
// before its sender on the other stream (each kind of core runs its own sub-kernels in list
// order): that event is an edge backwards in the list.
using Edges = std::set<std::pair<std::size_t, std::size_t>>;

Edges edges_of(const graph::Graph& g, const fusion::Segment& s) {
    Edges out;
    auto inner = inner_events(g, s);
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        const auto& a = op_at(g, s, p);
        bool next_found = false;
        for (std::size_t q = 0; q < s.ops.size(); ++q) {
            if (q == p)
                continue;
            const auto& b = op_at(g, s, q);
            if (q > p && !next_found && b.stream_id == a.stream_id) {
                out.emplace(p, q);
                next_found = true;
            }
            for (auto ev : a.send_events)
                if (inner.count(ev) != 0 && std::find(b.recv_events.begin(), b.recv_events.end(),
                                                      ev) != b.recv_events.end())
                    out.emplace(p, q);
        }
    }
    return out;
}

// The edges from one kind of core to the other that get a cross-core flag. Each direction has
// one flag id (SYNC_AIC_AIV_FLAG, SYNC_AIV_FLAG) and the flag counts: the k-th wait of the
// receiving kind passes on the k-th set of the sending kind, whichever edge either was meant
// for. So only the edges no other edge of the direction implies are kept: (p, q) is implied by
// (p2, q2) when p2 is p or after it and q2 is q or before it (p → p2 → q2 → q). What is left
// rises on both sides, and each wait pairs with its own set; without this a crossed pair (p
// before p2, q after q2) lets q2 start on p's set, before p2 is done. The vendor keeps the same
// edges (graph-autofusion super_kernel_op_infos.py remove_crossed_line_sync,
// remove_multi_send_info, remove_multi_recv_info; cann-conformance.md, "Two streams").
Side other(Side s) {
    return s == Side::aic ? Side::aiv : Side::aic;
}

struct CrossFlags {
    Edges from_aic, from_aiv;
    const Edges& of(Side from) const { return from == Side::aic ? from_aic : from_aiv; }
};

CrossFlags cross_flags(const Entry& e, const Edges& edges) {
    CrossFlags out;
    for (Side from : {Side::aic, Side::aiv}) {
        Edges all;
        for (const auto& [p, q] : edges)
            if (runs_on(e.subs[p].type, from) && runs_on(e.subs[q].type, other(from)))
                all.emplace(p, q);
        Edges& kept = from == Side::aic ? out.from_aic : out.from_aiv;
        for (const auto& edge : all)
            if (std::none_of(all.begin(), all.end(), [&](const auto& other) {
                    return other != edge && other.first >= edge.first &&
                           other.second <= edge.second;
                }))
                kept.insert(edge);
    }
    return out;
}

const CoreFlag& cross_flag(Side from) {
    return from == Side::aiv ? k_aiv_to_aic : k_aic_to_aiv;
}

// After sub-kernel p on the cores of `side`: its kind synchronises when anything follows it,
// and tells the other kind's followers through the cross flag.
void send(Code& c, const Entry& e, const Edges& edges, const CrossFlags& flags, std::size_t p,
          Side side, bool last_of_side) {
    bool any = !e.subs[p].notify.empty(); // the lock is set once the whole kind is done
    std::vector<std::size_t> cross;
    for (const auto& [from, to] : edges)
        if (from == p) {
            if (runs_on(e.subs[to].type, side))
                any = true;
            if (flags.of(side).count({from, to}) != 0) {
                any = true;
                cross.push_back(to);
            }
        }
    if (!any) {
        if (!last_of_side && p + 1 < e.subs.size())
            c.line("pipe_barrier(PIPE_ALL);");
        return;
    }
    c.line("// [" + std::to_string(p) + "] done on every core of this kind");
    same_kind_sync(c, side, e.flags);
    for (std::size_t to : cross) {
        c.line("// tell [" + std::to_string(to) + "] on the other kind of core");
        set_flag(c, cross_flag(side), e.flags);
    }
}

// Before sub-kernel q on the cores of `side`: the wait of its edge from the other kind, if one
// is kept (cross_flags).
void receive(Code& c, const Entry& e, const CrossFlags& flags, std::size_t q, Side side) {
    for (const auto& [from, to] : flags.of(other(side)))
        if (to == q) {
            c.line("// wait for [" + std::to_string(from) + "] on the other kind of core");
            wait_flag(c, cross_flag(other(side)), e.flags);
        }
}

void side_debug_sync(Code& c, const Entry& e, Side side) {
    c.line("pipe_barrier(PIPE_ALL);");
    same_kind_sync(c, side, e.flags);
}

// Two-stream mode: the program of one kind of core, its sub-kernels in plan order.
void side_program(Code& c, const Entry& e, const Edges& edges, const CrossFlags& flags, Side side) {
    std::vector<std::size_t> mine;
    for (std::size_t p = 0; p < e.subs.size(); ++p)
        if (runs_on(e.subs[p].type, side))
            mine.push_back(p);
    std::string suffix = side == Side::aic ? "aic" : "aiv";
    c.line("");
    c.open(std::string("__aicore__ inline ") +
           (e.release->two_stream_always_inline ? "__attribute__((always_inline)) " : "") +
           "void auto_gen_" + e.kernel + "_kernel_" + suffix + "(void)");
    c.line("GM_ADDR *param_base = (GM_ADDR *)get_para_base();");
    if (e.preload == graph::PreloadCode::max)
        c.line("AscendC::PreLoad(8);");
    for (std::size_t i = 0; i < mine.size(); ++i) {
        std::size_t p = mine[i];
        const Sub& cur = e.subs[p];
        c.line("");
        c.line(sub_comment(cur, p));
        if (e.preload == graph::PreloadCode::per_func) {
            if (i == 0)
                call(c, cur, {side}, Call::preload, false);
            if (i + 1 < mine.size())
                call(c, e.subs[mine[i + 1]], {side}, Call::preload, false);
        }
        receive(c, e, flags, p, side);
        if (!cur.wait.empty()) { // all cores wait with the one that waits for the lock
            if (lock_side(cur.type) == side)
                wait(c, cur);
            if (is_mix(cur.type)) // both programs meet here
                c.line("AscendC::SyncAll<false>();");
            else
                same_kind_sync(c, side, e.flags);
        }
        bool feed = e.feed_sync_all && needs_feed(e, cur);
        feed_setup(c, e, p, feed);
        call(c, cur, {side}, Call::run, feed);
        after_call(c, e, [&] { side_debug_sync(c, e, side); });
        send(c, e, edges, flags, p, side, i + 1 == mine.size());
        if (lock_side(cur.type) == side)
            notify(c, cur);
    }
    c.close();
}

// ---- The file ----------------------------------------------------------------------------

// The lock helpers: block 0 of a kind sets a lock, or spins on it, past the data cache.
void lock_helpers(Code& c) {
    c.line("// Event locks: 8-byte words in global memory whose addresses are in the parameter");
    c.line("// table. Block 0 of the sub-kernel's kind sets or waits; the others follow it.");
    c.line("template<bool aic_flag>");
    c.open("__aicore__ inline uint32_t LockBlockIdx()");
    c.open("if constexpr (aic_flag)");
    c.line("return get_block_idx();");
    c.close();
    c.line("return AscendC::GetBlockIdx();");
    c.close();
    c.line("");
    c.line("template<bool aic_flag>");
    c.open("__aicore__ inline void NotifyFunc(GM_ADDR notify_lock_addr)");
    c.open("if (LockBlockIdx<aic_flag>() == 0)");
    c.line("__gm__ uint64_t* lock = reinterpret_cast<__gm__ uint64_t*>(notify_lock_addr);");
    c.line("*lock = 1;");
    c.line("dcci(lock, 0, 2);");
    c.close();
    c.close();
    c.line("");
    c.line("template<bool aic_flag>");
    c.open("__aicore__ inline void WaitFunc(GM_ADDR wait_lock_addr)");
    c.open("if (LockBlockIdx<aic_flag>() == 0)");
    c.line("__gm__ volatile uint64_t* lock = reinterpret_cast<__gm__ uint64_t*>(wait_lock_addr);");
    c.open("do");
    c.line("dcci(lock, 0, 2);");
    c.close();
    c.line("while (*lock != 1);");
    c.close();
    c.close();
}

void declarations(Code& c, const Entry& e) {
    std::set<std::string> done;
    for (const auto& sub : e.subs)
        for (Side side : k_both) {
            std::string f = function(sub, side);
            if (f.empty() || !done.insert(f).second)
                continue;
            for (std::uint32_t k = 0; k < sub.split; ++k)
                c.line("extern \"C\" __aicore__ void " + f +
                       (k == 0 ? "" : "_split" + std::to_string(k)) + "(uint64_t args_offset);");
        }
}

// The preprocessor test for code of one kind of core: the release's spelling
// (CannRelease::core_macros_by_chip).
std::string core_guard(const Entry& e, bool cube) {
    if (e.release->core_macros_by_chip)
        return std::string("#if defined(__DAV_") + (e.c310 ? "C310" : "C220") +
               (cube ? "_CUBE__)" : "_VEC__)");
    return std::string("#if (defined(") + (cube ? "__DAV_CUBE__" : "__DAV_VEC__") +
           ") && __NPU_ARCH__ == " + (e.c310 ? "3510" : "2201") + ")";
}

// The cores of a kernel type's own kind compile the global g_opSystemRunCfg; the others refer
// to it.
void system_run_cfg(Code& c, const Entry& e) {
    if (e.split > 1)
        return;
    c.line(core_guard(e, !(runs_on(e.launch.type, Side::aiv) && !is_mix(e.launch.type))));
    c.line("__gm__ struct OpSystemRunCfg g_opSystemRunCfg = {0};");
    c.line("#else");
    c.line("extern __gm__ struct OpSystemRunCfg g_opSystemRunCfg;");
    c.line("#endif");
}

// Zeroes feed-sync-all's flag area (`bytes` of it), each core of one kind its share, then
// makes every core wait for it.
void zero_feed_area(Code& c, const Entry& e, Side side, std::uint64_t bytes) {
    c.open("if " + guard(side));
    c.line("uint32_t sizePerCore = " + std::to_string(bytes) + " / get_block_num();");
    c.line("const uint32_t repeatTimes = sizePerCore / 512;");
    c.line("__gm__ uint8_t* startAddr = (__gm__ uint8_t*)(workspace + sizePerCore * "
           "AscendC::GetBlockIdxImpl());");
    if (side == Side::aic) {
        c.line("create_cbuf_matrix((__cbuf__ uint32_t*)(0), 0x10010, 0); // 512 zero bytes in L1");
        c.line("AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID0);");
        c.line("AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID0);");
    } else {
        c.line("AscendC::DuplicateImpl((__ubuf__ uint32_t*)(0), (uint32_t)0, 128); // 512 zero "
               "bytes in UB");
        c.line("AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);");
        c.line("AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);");
    }
    c.open("for (size_t i = 0; i < repeatTimes; i++)");
    if (side == Side::aic)
        c.line("copy_cbuf_to_gm((__gm__ void*)(startAddr), (__cbuf__ void*)(0), 0, 1, 16, 1, 1);");
    else if (e.c310)
        c.line("copy_ubuf_to_gm_align_v2((__gm__ void*)(startAddr), (__ubuf__ void*)(0), 0, 1, "
               "512, 0, 512, 512);");
    else
        c.line("copy_ubuf_to_gm((__gm__ void*)(startAddr), (__ubuf__ void*)(0), 0, 1, 16, 1, 1);");
    c.line("startAddr += 512;");
    c.close();
    c.line("AscendC::PipeBarrier<PIPE_ALL>();");
    same_kind_sync(c, side, e.flags);
    if (is_mix(e.launch.type))
        set_flag(c, k_aiv_to_aic, e.flags);
    c.close();
    if (is_mix(e.launch.type)) {
        c.open("if ASCEND_IS_AIC");
        wait_flag(c, k_aiv_to_aic, e.flags);
        c.close();
    }
}

void entry_prologue(Code& c, const Entry& e) {
    c.line("GM_ADDR *param_base = (GM_ADDR *)get_para_base();");
    if (e.feed_sync_all) {
        c.line("GM_ADDR workspace = param_base[" + std::to_string(e.workspace_slot) + "];");
        c.line("AscendC::g_superKernelAutoSyncAllConfigGmBaseAddr = workspace;");
    }
    if (!e.c310) {
        c.line("GM_ADDR ffts_addr = param_base[0];");
        c.open("if (ffts_addr != nullptr)");
        c.line("set_ffts_base_addr((uint64_t)ffts_addr);");
        c.close();
    }
    if (e.feed_sync_all) {
        c.line("// feed-sync-all: clear the flag area");
        bool cube = e.launch.type == KernelType::mix_aic_1_0;
        std::uint64_t bytes =
            e.launch.type == KernelType::mix_aic_1_2 ? e.feed_bytes / 2 : e.feed_bytes;
        zero_feed_area(c, e, cube ? Side::aic : Side::aiv, bytes);
    }
}

// The kernel-type record the runtime reads from the object (.ascend.meta.<function>), one per
// compiled core type.
void meta_sections(Code& c, const Entry& e) {
    auto record = [&](const char* suffix, const char* ktype, const char* ration) {
        std::string name = e.kernel + suffix;
        c.line("static const struct FunLevelMixCoreType " + name +
               "_section __attribute__ ((used, section (\".ascend.meta." + name +
               "\"))) = { {{F_TYPE_KTYPE, sizeof(unsigned int)}, " + ktype +
               "}, {{F_TYPE_MIX_TASK_RATION, sizeof(unsigned int)}, " + ration + "} };");
    };
    std::string arch = e.c310 ? "3510" : "2201";
    c.line("#if TILING_KEY_VAR == 0UL");
    switch (e.launch.type) {
    case KernelType::mix_aic_1_0:
        record("_mix_aic", "K_TYPE_MIX_AIC_MAIN", "1, 0");
        break;
    case KernelType::mix_aic_1_1:
    case KernelType::mix_aic_1_2: {
        const char* ration = e.launch.type == KernelType::mix_aic_1_1 ? "1, 1" : "1, 2";
        c.line(core_guard(e, true));
        record("_mix_aic", "K_TYPE_MIX_AIC_MAIN", ration);
        c.line("#endif");
        c.line(core_guard(e, false));
        record("_mix_aiv", "K_TYPE_MIX_AIC_MAIN", ration);
        c.line("#endif");
        break;
    }
    default:
        record("_mix_aiv", "K_TYPE_MIX_AIV_MAIN", "0, 1");
    }
    c.line("#endif");
}

std::string align_attribute(std::uint32_t align) {
    return align == 0 ? "" : "__attribute__((aligned(" + std::to_string(align) + "))) ";
}

} // namespace

std::string npu_entry_source(const graph::Graph& g, const fusion::Segment& s,
                             const NpuTarget& target) {
    Entry e = entry_of(g, s, target);
    Code c;
    c.line("// Generated by skforge " SKFORGE_VERSION " for " + target.arch + " (SoC " +
           target.soc + "): SuperKernel " + s.name + " of graph " + g.name + ",");
    c.line("// " + std::string(kernel::kernel_type_name(e.launch.type)) + ", blockDim " +
           std::to_string(e.launch.block_dim) + (e.two_stream ? ", two-stream mode" : "") +
           ". Do not edit: `skc compile` writes it again.");
    c.line("#include \"kernel_operator.h\"");
    c.line("");
    system_run_cfg(c, e);
    lock_helpers(c);
    c.line("");
    declarations(c, e);
    Edges edges = e.two_stream ? edges_of(g, s) : Edges{};
    CrossFlags flags = cross_flags(e, edges);
    if (e.two_stream)
        for (Side side : k_both)
            if (std::any_of(e.subs.begin(), e.subs.end(),
                            [&](const Sub& sub) { return runs_on(sub.type, side); }))
                side_program(c, e, edges, flags, side);
    c.line("");
    c.open("extern \"C\" __global__ " + align_attribute(e.func_align) +
           "__aicore__ void auto_gen_" + e.kernel + "_kernel(void)");
    entry_prologue(c, e);
    if (e.two_stream) {
        for (Side side : k_both)
            if (std::any_of(e.subs.begin(), e.subs.end(),
                            [&](const Sub& sub) { return runs_on(sub.type, side); })) {
                c.open("if " + guard(side));
                c.line("auto_gen_" + e.kernel + "_kernel_" + (side == Side::aic ? "aic" : "aiv") +
                       "();");
                c.close();
            }
    } else {
        if (e.preload == graph::PreloadCode::max)
            c.line("AscendC::PreLoad(8);");
        sequential_program(c, e);
    }
    reset_locks(c, e);
    c.close();
    c.line("");
    meta_sections(c, e);
    return c.str();
}

} // namespace skforge::codegen
