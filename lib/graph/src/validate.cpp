// SPDX-License-Identifier: Apache-2.0
#include "skforge/graph/graph.hpp"
#include "skforge/support/memory.hpp"
#include "skforge/support/parallel.hpp"
#include "skforge/support/safe_path.hpp"
#include "skforge/support/string_map.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace skforge::graph {

namespace {

// What a kernel_info's events mean to CANN's SuperKernel compiler and skforge does not take
// (share/doc/cann-conformance.md, "What skforge does not build").
constexpr const char* k_info_outside =
    "CANN's SuperKernel compiler takes an event whose other end is not in op_list as a "
    "notify/wait with a task outside the SuperKernel; skforge needs both ends in op_list";
constexpr const char* k_info_same_stream =
    "CANN's SuperKernel compiler refuses an event between two sub-kernels of one stream ('self "
    "send/receive pair within 1 real stream'); a receive before its send is taken only from the "
    "other stream";

// Happens-before between streams as vector clocks: clock[s][t] is the index of the latest
// operator on stream t known to have finished before the current point of stream s.
class StreamClocks {
  public:
    explicit StreamClocks(const Graph& g) {
        // Graphs have a few streams: a short sorted list, runs of one stream skipped.
        const std::uint32_t* last = nullptr;
        for (std::size_t i = 0; i < g.ops.size(); ++i) {
            const Op& op = g.ops[i];
            support::prefetch_ahead(g.ops, i);
            if (last && *last == op.stream_id)
                continue;
            last = &op.stream_id;
            auto it = std::lower_bound(m_streams.begin(), m_streams.end(), op.stream_id);
            if (it == m_streams.end() || *it != op.stream_id)
                m_streams.insert(it, op.stream_id);
        }
        std::size_t n = m_streams.size();
        m_clock.assign(n, std::vector<int>(n, -1));
    }
    int dense(std::uint32_t stream) const {
        return static_cast<int>(std::lower_bound(m_streams.begin(), m_streams.end(), stream) -
                                m_streams.begin());
    }
    std::vector<int>& of(std::uint32_t stream) {
        return m_clock[static_cast<std::size_t>(dense(stream))];
    }

  private:
    std::vector<std::uint32_t> m_streams; ///< sorted; a stream's dense index is its position
    std::vector<std::vector<int>> m_clock;
};

struct EventSend {
    int op;
    std::vector<int> clock;
    bool received = false;
};

// Outputs of all operators: what a tensor index holds (sized exactly, it stays small in cache).
std::size_t output_count(const Graph& g) {
    std::size_t n = 0;
    for (const auto& op : g.ops)
        n += op.outputs.size();
    return n;
}

void check_names_and_scopes(const Graph& g, Diagnostics& diags) {
    support::StringMap<const Op*> names;
    names.reserve(g.ops.size());
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        support::prefetch_ahead(g.ops, i);
        if (op.name.empty())
            continue;
        auto [first, fresh] = names.emplace(op.name, &op);
        if (!fresh)
            diags.error(op.where, "operator name '" + op.name + "' is used twice",
                        "first at line " + std::to_string((*first)->where.line));
    }
    if (g.scopes.size() > k_max_scopes)
        diags.error({g.file_ref, 1, 1}, "the graph has " + std::to_string(g.scopes.size()) +
                                            " scopes, more than " + std::to_string(k_max_scopes));
}

// A name as a message shows it: long ones cut, control characters as '?'.
std::string shown(std::string_view name) {
    return name.size() > 60 ? support::printable(name.substr(0, 40)) + "..."
                            : support::printable(name);
}

// Names that `skc compile` turns into file and directory names: each must be one safe path
// component, or a name like "../x" would write outside the output directory.
void check_path_names(const Graph& g, Diagnostics& diags) {
    const std::string why = "it becomes a file or directory name, so it must be one path "
                            "component of letters, digits and '._+-'";
    auto check = [&](const Location& where, const std::string& what, const std::string& name) {
        if (auto bad = support::check_name_component(name))
            diags.error(where, what + " '" + shown(name) + "' " + *bad, why);
    };
    if (g.name_where.file)
        check(g.name_where, "graph name", g.name);
    else if (auto bad = support::check_name_component(g.name))
        diags.error({g.file_ref, 1, 1},
                    "graph name '" + shown(g.name) + "' (from the file name) " + *bad,
                    "set 'name' in the graph");
    if (!g.soc_version.empty())
        check(g.soc_version_where, "soc_version", g.soc_version);
    for (const auto& s : g.scopes)
        check(s.where, "scope name", s.name);
    for (const auto& op : g.ops) // an empty OpType is the loader's to report
        if (auto bad = op.type.empty() ? std::nullopt : support::check_name_component(op.type))
            diags.error(op.where,
                        "OpType '" + shown(op.type) + "' of operator '" + shown(op.name) + "' " +
                            *bad,
                        why);
}

// The consumer of an aicpu_tiling operator: named, later, a kernel, tiled once, reading the
// tiling buffer and waiting for an event the tiling operator sends.
void check_tiling(const Graph& g, std::size_t i, const support::StringMap<int>& index,
                  std::vector<int>& tiled_by, Diagnostics& diags) {
    const Op& t = g.ops[i];
    if (t.outputs.size() != 1)
        diags.error(t.where,
                    "aicpu_tiling operator '" + t.name + "' has " +
                        std::to_string(t.outputs.size()) + " outputs, not one",
                    "its one output is the tiling buffer its consumer reads");
    const int* found = index.find(t.tiling_for);
    if (found == nullptr) {
        diags.error(t.tiling_for_where, "tiling_for of '" + t.name + "' names '" + t.tiling_for +
                                            "', which is no operator of the graph");
        return;
    }
    const Op& c = g.ops[static_cast<std::size_t>(*found)];
    const std::string pair = "'" + c.name + "' (tiled by '" + t.name + "')";
    if (*found <= static_cast<int>(i)) {
        diags.error(t.tiling_for_where, pair + " comes before its tiling operator",
                    "list the aicpu_tiling operator before the operator it tiles");
        return;
    }
    if (runs_beside_cores(c.kind)) {
        diags.error(t.tiling_for_where, pair + " is of kind " + std::string(op_kind_name(c.kind)) +
                                            ": only a kernel operator has a tiling");
        return;
    }
    int& first = tiled_by[static_cast<std::size_t>(*found)];
    if (first >= 0)
        diags.error(t.tiling_for_where, pair + " already has its tiling computed by '" +
                                            g.ops[static_cast<std::size_t>(first)].name + "'");
    else
        first = static_cast<int>(i);
    if (t.outputs.size() == 1 &&
        std::none_of(c.inputs.begin(), c.inputs.end(),
                     [&](const Tensor& in) { return in.name == t.outputs[0].name; }))
        diags.error(t.tiling_for_where,
                    pair + " does not read the tiling buffer '" + t.outputs[0].name + "'",
                    "add '" + t.outputs[0].name + "' to the inputs of '" + c.name + "'");
    bool waits = std::any_of(t.send_events.begin(), t.send_events.end(), [&](std::int64_t e) {
        return std::find(c.recv_events.begin(), c.recv_events.end(), e) != c.recv_events.end();
    });
    if (!waits)
        diags.error(c.where,
                    "'" + c.name + "' does not wait for its tiling: no event sent by '" + t.name +
                        "' is in its recv_event_list (it would read a stale tiling buffer)",
                    "send an event from '" + t.name + "' (notify) and receive it in '" + c.name +
                        "' (wait)");
}

void check_prefetch(const Op& p, Diagnostics& diags) {
    if (!p.outputs.empty())
        diags.error(p.where, "prefetch operator '" + p.name + "' has outputs",
                    "a prefetch only reads its inputs into the cache; remove its outputs");
    if (p.inputs.empty())
        diags.error(p.where, "prefetch operator '" + p.name + "' names no tensor to prefetch",
                    "list the tensors (e.g. the next layer's weights) in its inputs");
    if (p.send_events.empty())
        diags.warning(p.where, "nothing waits for prefetch operator '" + p.name + "'",
                      "send an event (notify) that the operator using the tensors receives");
}

// Operators beside the cores (aicpu_tiling, prefetch): their own streams, and what each kind
// needs of the graph. Events to and from them are checked with every other event.
void check_side_ops(const Graph& g, Diagnostics& diags) {
    if (std::none_of(g.ops.begin(), g.ops.end(),
                     [](const Op& op) { return runs_beside_cores(op.kind); }))
        return;
    support::StringMap<int> index;
    for (std::size_t i = 0; i < g.ops.size(); ++i)
        index.emplace(g.ops[i].name, static_cast<int>(i));
    // An operator beside the cores runs on the AICPU or an SDMA engine, not on an AI-core
    // stream: the first AI-core operator of each stream.
    std::unordered_map<std::uint32_t, const Op*> core_op_on;
    for (const auto& op : g.ops)
        if (!runs_beside_cores(op.kind))
            core_op_on.emplace(op.stream_id, &op);
    std::vector<int> tiled_by(g.ops.size(), -1);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        if (!runs_beside_cores(op.kind))
            continue;
        if (auto other = core_op_on.find(op.stream_id); other != core_op_on.end())
            diags.error(op.where,
                        std::string(op_kind_name(op.kind)) + " operator '" + op.name +
                            "' is on stream " + std::to_string(op.stream_id) +
                            ", which also runs AI-core operator '" + other->second->name + "'",
                        "give it a stream of its own: it runs on the " +
                            std::string(op.kind == OpKind::prefetch ? "SDMA engine" : "AICPU"));
        if (op.kind == OpKind::aicpu_tiling)
            check_tiling(g, i, index, tiled_by, diags);
        else
            check_prefetch(op, diags);
    }
}

} // namespace

void validate_graph(const Graph& g, Diagnostics& diags) {
    validate_graph(g, dependencies(g), diags);
}

void validate_graph(const Graph& g, const Dependencies& deps, Diagnostics& diags) {
    check_names_and_scopes(g, diags);
    check_path_names(g, diags);
    check_side_ops(g, diags);
    for (std::size_t k : deps.repeated_inputs())
        diags.error(g.inputs[k].where, "graph input '" + g.inputs[k].name + "' is declared twice");
    // Producers that appear later, to tell "produced later" from "never produced": built only
    // when an input is missing.
    std::optional<support::StringMap<int>> any_producer;
    auto later_producer = [&](std::string_view name) -> const int* {
        if (!any_producer) {
            any_producer.emplace();
            any_producer->reserve(output_count(g));
            for (std::size_t i = 0; i < g.ops.size(); ++i)
                for (const auto& t : g.ops[i].outputs)
                    any_producer->emplace(t.name, static_cast<int>(i));
        }
        return any_producer->find(name);
    };
    StreamClocks clocks(g);
    std::unordered_map<std::int64_t, EventSend> sent;
    sent.reserve(g.ops.size() / 4 + 16);
    // Every event sent anywhere, with the stream of its first sender: needed only for a receive
    // before its send, so built on the first one.
    std::optional<std::unordered_map<std::int64_t, std::uint32_t>> any_sent;
    auto sender_stream = [&](std::int64_t e) -> const std::uint32_t* {
        if (!any_sent) {
            any_sent.emplace();
            for (const auto& o : g.ops)
                for (auto s : o.send_events)
                    any_sent->emplace(s, o.stream_id);
        }
        auto it = any_sent->find(e);
        return it == any_sent->end() ? nullptr : &it->second;
    };
    // A kernel_info's op_list is each kind of core's order, not one execution order: a receive
    // may come before its send on the other stream. The plan's deadlock check and the entry
    // (two-stream mode, or a refusal) order these.
    std::unordered_set<std::int64_t> received_early;
    auto repeated = deps.repeated_outputs();
    auto next_repeated = repeated.begin(); // outputs come in order of their numbers
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        support::prefetch_ahead(g.ops, i);
        auto& clock = clocks.of(op.stream_id);
        for (auto e : op.recv_events) {
            auto it = sent.find(e);
            if (it == sent.end()) {
                const std::uint32_t* stream = sender_stream(e);
                bool later = stream != nullptr;
                if (g.from_kernel_info && later && *stream != op.stream_id) {
                    received_early.insert(e);
                    continue;
                }
                diags.error(
                    op.where,
                    "operator '" + op.name + "' receives event " + std::to_string(e) +
                        (later ? " before any operator sends it" : " that no operator sends"),
                    g.from_kernel_info ? (later ? k_info_same_stream : k_info_outside)
                                       : (later ? "move the receiver after the sender"
                                                : "add it to a send_event_list"));
                continue;
            }
            it->second.received = true;
            for (std::size_t s = 0; s < clock.size(); ++s)
                clock[s] = std::max(clock[s], it->second.clock[s]);
        }
        auto sources = deps.sources(i);
        for (std::size_t j = 0; j < op.inputs.size(); ++j) {
            const Tensor& in = op.inputs[j];
            int source = sources[j];
            if (source == Dependencies::k_unknown) {
                const int* later = later_producer(in.name);
                if (later != nullptr)
                    diags.error(in.where,
                                "input '" + in.name + "' of '" + op.name +
                                    "' is produced later by '" +
                                    g.ops[static_cast<std::size_t>(*later)].name + "' (a cycle)",
                                "operators must be listed in execution order");
                else
                    diags.error(
                        in.where,
                        "input '" + in.name + "' of '" + op.name +
                            "' is neither a graph input nor produced by an earlier operator");
                continue;
            }
            if (source < 0)
                continue; // a graph input
            int producer = deps.output(source).first;
            const Op& p = g.ops[static_cast<std::size_t>(producer)];
            if (p.stream_id == op.stream_id)
                continue;
            if (clock[static_cast<std::size_t>(clocks.dense(p.stream_id))] < producer)
                diags.error(in.where,
                            "input '" + in.name + "' of '" + op.name + "' (stream " +
                                std::to_string(op.stream_id) + ") comes from '" + p.name +
                                "' on stream " + std::to_string(p.stream_id) +
                                " with no event in between",
                            "send an event from '" + p.name +
                                "' (or later on its stream) and receive it here");
        }
        clock[static_cast<std::size_t>(clocks.dense(op.stream_id))] = static_cast<int>(i);
        for (; next_repeated != repeated.end() &&
               deps.output(*next_repeated).first == static_cast<int>(i);
             ++next_repeated) {
            const Tensor& out =
                op.outputs[static_cast<std::size_t>(deps.output(*next_repeated).second)];
            diags.error(out.where, "tensor '" + out.name + "' is produced twice",
                        "give every output a unique name");
        }
        for (auto e : op.send_events) {
            if (sent.contains(e)) {
                diags.error(op.where,
                            "event " + std::to_string(e) + " is sent twice (again by '" + op.name +
                                "')",
                            "use a new event id");
                continue;
            }
            sent.emplace(e, EventSend{static_cast<int>(i), clock, received_early.contains(e)});
        }
    }
    std::vector<std::pair<std::int64_t, int>> unreceived; // reported by event id
    for (const auto& [e, s] : sent)
        if (!s.received)
            unreceived.emplace_back(e, s.op);
    std::sort(unreceived.begin(), unreceived.end());
    for (const auto& [e, op] : unreceived)
        diags.error(g.ops[static_cast<std::size_t>(op)].where,
                    "event " + std::to_string(e) + " sent by '" +
                        g.ops[static_cast<std::size_t>(op)].name + "' is never received",
                    g.from_kernel_info ? k_info_outside
                                       : "receive it or remove it from send_event_list");
}

// What both ways of finding dependencies share (a friend of Dependencies).
struct DependenciesBuilder {
    // The inputs and outputs of `g` counted, and the tables that follow from the counts:
    // where each operator's inputs and outputs start, and which operator makes each output.
    static void number_tensors(const Graph& g, Dependencies& deps) {
        const std::size_t n = g.ops.size();
        deps.m_first_input.resize(n + 1);
        deps.m_first_output.resize(n + 1);
        for (std::size_t i = 0; i < n; ++i) {
            deps.m_first_input[i + 1] = deps.m_first_input[i] + g.ops[i].inputs.size();
            deps.m_first_output[i + 1] = deps.m_first_output[i] + g.ops[i].outputs.size();
        }
        deps.m_output_op.resize(deps.m_first_output[n]);
        for (std::size_t i = 0; i < n; ++i)
            std::fill(
                deps.m_output_op.begin() + static_cast<std::ptrdiff_t>(deps.m_first_output[i]),
                deps.m_output_op.begin() + static_cast<std::ptrdiff_t>(deps.m_first_output[i + 1]),
                static_cast<int>(i));
        deps.m_sources.assign(deps.m_first_input[n], Dependencies::k_unknown);
    }

    // Operator i's list: the producers of what its inputs read and the senders of the events it
    // receives, `recv` (`sender`: event -> its first sender), sorted and unique, appended to
    // `list`.
    static void append_list(const Dependencies& deps, std::size_t i,
                            std::span<const std::int64_t> recv,
                            const std::unordered_map<std::int64_t, int>& sender,
                            std::vector<int>& list, int stream_before = -1) {
        std::size_t first = list.size();
        if (stream_before >= 0)
            list.push_back(stream_before);
        for (std::size_t k = deps.m_first_input[i]; k < deps.m_first_input[i + 1]; ++k)
            if (int source = deps.m_sources[k]; source >= 0)
                list.push_back(deps.m_output_op[static_cast<std::size_t>(source)]);
        for (auto e : recv)
            if (auto s = sender.find(e); s != sender.end() && s->second < static_cast<int>(i))
                list.push_back(s->second);
        if (list.size() - first > 1) { // most operators depend on one other
            auto from = list.begin() + static_cast<std::ptrdiff_t>(first);
            std::sort(from, list.end());
            list.erase(std::unique(from, list.end()), list.end());
        }
    }

    static void count_reads(Dependencies& deps) {
        deps.m_reads.assign(deps.m_output_op.size(), 0);
        for (int source : deps.m_sources)
            if (source >= 0)
                ++deps.m_reads[static_cast<std::size_t>(source)];
    }
};

// One operator after another: each input looked up among the names before it.
Dependencies dependencies_in_order(const Graph& g) {
    Dependencies deps;
    DependenciesBuilder::number_tensors(g, deps);
    // Tensor name -> output number (graph inputs: -1 - index); the first producer wins.
    support::StringMap<int> producer;
    producer.reserve(deps.m_output_op.size() + g.inputs.size());
    for (std::size_t k = 0; k < g.inputs.size(); ++k)
        if (!producer.emplace(g.inputs[k].name, -1 - static_cast<int>(k)).second)
            deps.m_repeated_inputs.push_back(k);
    std::unordered_map<std::int64_t, int> sender;
    // A kernel_info has no tensors: stream order is what orders its operators.
    std::unordered_map<std::uint32_t, int> last_on_stream;
    deps.m_list.reserve(deps.m_sources.size());
    deps.m_start.reserve(g.ops.size() + 1);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        for (std::size_t j = 0; j < op.inputs.size(); ++j)
            if (const int* p = producer.find(op.inputs[j].name))
                deps.m_sources[deps.m_first_input[i] + j] = *p;
        int before = -1;
        if (g.from_kernel_info) {
            auto [at, fresh] = last_on_stream.try_emplace(op.stream_id, static_cast<int>(i));
            before = fresh ? -1 : std::exchange(at->second, static_cast<int>(i));
        }
        DependenciesBuilder::append_list(deps, i, op.recv_events, sender, deps.m_list, before);
        deps.m_start.push_back(deps.m_list.size());
        for (std::size_t j = 0; j < op.outputs.size(); ++j) {
            int id = deps.output_id(i, j);
            if (!producer.emplace(op.outputs[j].name, id).second)
                deps.m_repeated_outputs.push_back(id);
        }
        for (auto e : op.send_events)
            sender.emplace(e, static_cast<int>(i));
    }
    DependenciesBuilder::count_reads(deps);
    return deps;
}

namespace {

// Tensor names, filled by several threads at once: open addressing over one array of 64-bit
// slots (the hash's upper half and an entry number), each claimed with a compare-and-swap.
// Keys are not stored here: `key_of(entry)` gives them, and must give an entry's key before the
// entry is added (a thread that finds the entry then reads it).
class SharedNames {
  public:
    explicit SharedNames(std::size_t entries)
        : m_size(std::bit_ceil(std::max<std::size_t>(16, entries * 2))),
          m_slots(new std::atomic<std::uint64_t>[m_size]()) {}

    static std::uint64_t hash(std::string_view key) { return std::hash<std::string_view>{}(key); }

    /// Adds `entry` (> 0) under `key` unless the key is there; returns the entry that was, or 0.
    template <class KeyOf>
    std::uint32_t insert(std::string_view key, std::uint64_t h, std::uint32_t entry,
                         const KeyOf& key_of) {
        const std::uint64_t mine = (h & ~std::uint64_t{0xffffffff}) | entry;
        for (std::size_t i = h & (m_size - 1);; i = (i + 1) & (m_size - 1)) {
            std::uint64_t seen = m_slots[i].load(std::memory_order_acquire);
            while (seen == 0)
                if (m_slots[i].compare_exchange_weak(seen, mine, std::memory_order_acq_rel))
                    return 0;
            if (same(seen, key, h, key_of))
                return static_cast<std::uint32_t>(seen);
        }
    }
    /// The entry of `key`, or 0 (also when another thread has not added it yet).
    template <class KeyOf>
    std::uint32_t find(std::string_view key, std::uint64_t h, const KeyOf& key_of) const {
        for (std::size_t i = h & (m_size - 1);; i = (i + 1) & (m_size - 1)) {
            std::uint64_t seen = m_slots[i].load(std::memory_order_acquire);
            if (seen == 0)
                return 0;
            if (same(seen, key, h, key_of))
                return static_cast<std::uint32_t>(seen);
        }
    }

  private:
    template <class KeyOf>
    static bool same(std::uint64_t slot, std::string_view key, std::uint64_t h,
                     const KeyOf& key_of) {
        return (slot >> 32) == (h >> 32) && key_of(static_cast<std::uint32_t>(slot)) == key;
    }

    std::size_t m_size;
    std::unique_ptr<std::atomic<std::uint64_t>[]> m_slots;
};

} // namespace

Dependencies dependencies(const Graph& g) {
    const std::size_t n = g.ops.size();
    const unsigned threads = n < 8192 ? 1u : std::min(8u, support::cores());
    if (threads == 1 || g.from_kernel_info)
        return dependencies_in_order(g);
    // Each thread takes a run of operators in order, as the serial walk does, so what an input
    // reads was mostly added a moment before and is still in cache. An input whose producer
    // another thread has not reached yet is looked up again afterwards; a repeated name (an
    // invalid graph) sends the whole graph to the serial walk, which reports it exactly.
    auto run = [&](unsigned t) { return std::pair{n * t / threads, n * (t + 1) / threads}; };
    // How many inputs and outputs each run has, so that each thread numbers its own.
    std::vector<std::size_t> ins(threads + 1, 0), outs(threads + 1, 0);
    support::on_threads(threads, [&](unsigned t) {
        for (auto [i, end] = run(t); i < end; ++i) {
            support::prefetch_ahead(g.ops, i);
            ins[t + 1] += g.ops[i].inputs.size();
            outs[t + 1] += g.ops[i].outputs.size();
        }
    });
    for (unsigned t = 0; t < threads; ++t) {
        ins[t + 1] += ins[t];
        outs[t + 1] += outs[t];
    }
    Dependencies deps;
    deps.m_first_input.resize(n + 1);
    deps.m_first_output.resize(n + 1);
    deps.m_first_input[n] = ins[threads];
    deps.m_first_output[n] = outs[threads];
    deps.m_output_op.resize(outs[threads]);
    deps.m_sources.assign(ins[threads], Dependencies::k_unknown);
    // Entries: 1 + k for graph input k, 1 + inputs + id for output number id. A thread finds
    // another's entry only after that thread has numbered it (the table publishes it), so
    // key_of and source_of read only what is written.
    const auto first_output_entry = static_cast<std::uint32_t>(g.inputs.size() + 1);
    // Each entry's name, in one array: comparing a key reads one view, written before the
    // entry is added, not the operator and tensor it came from.
    std::vector<std::string_view> names_of(first_output_entry + outs[threads]);
    for (std::size_t k = 0; k < g.inputs.size(); ++k)
        names_of[k + 1] = g.inputs[k].name;
    auto key_of = [&](std::uint32_t entry) { return names_of[entry]; };
    auto source_of = [&](std::uint32_t entry, std::size_t reader) {
        if (entry == 0)
            return Dependencies::k_unknown;
        if (entry < first_output_entry)
            return -static_cast<int>(entry); // graph input entry - 1
        auto id = static_cast<int>(entry - first_output_entry);
        // Produced by the reader itself or after it: not a source.
        return deps.m_output_op[static_cast<std::size_t>(id)] < static_cast<int>(reader)
                   ? id
                   : Dependencies::k_unknown;
    };
    SharedNames names(deps.m_output_op.size() + g.inputs.size());
    for (std::size_t k = 0; k < g.inputs.size(); ++k)
        if (names.insert(g.inputs[k].name, SharedNames::hash(g.inputs[k].name),
                         static_cast<std::uint32_t>(k + 1), key_of) != 0)
            return dependencies_in_order(g);
    std::atomic<bool> repeated{false};
    std::vector<std::vector<std::pair<std::size_t, std::size_t>>> later(threads); // (op, input)
    std::vector<std::vector<std::pair<std::int64_t, int>>> sends(threads);
    std::vector<std::vector<std::pair<std::size_t, std::int64_t>>> recvs(threads); // (op, event)
    support::on_threads(threads, [&](unsigned t) {
        std::size_t in_at = ins[t], out_at = outs[t];
        for (auto [i, end] = run(t); i < end; ++i) {
            const Op& op = g.ops[i];
            support::prefetch_ahead(g.ops, i);
            deps.m_first_input[i] = in_at;
            deps.m_first_output[i] = out_at;
            in_at += op.inputs.size();
            for (std::size_t j = 0; j < op.outputs.size(); ++j)
                deps.m_output_op[out_at++] = static_cast<int>(i);
            for (std::size_t j = 0; j < op.inputs.size(); ++j) {
                const auto& name = op.inputs[j].name;
                std::uint32_t entry = names.find(name, SharedNames::hash(name), key_of);
                if (entry == 0)
                    later[t].emplace_back(i, deps.m_first_input[i] + j);
                else
                    deps.m_sources[deps.m_first_input[i] + j] = source_of(entry, i);
            }
            for (std::size_t j = 0; j < op.outputs.size(); ++j) {
                const auto& name = op.outputs[j].name;
                auto entry =
                    static_cast<std::uint32_t>(deps.m_first_output[i] + j) + first_output_entry;
                names_of[entry] = name;
                if (names.insert(name, SharedNames::hash(name), entry, key_of) != 0)
                    repeated.store(true, std::memory_order_relaxed);
            }
            for (auto e : op.send_events)
                sends[t].emplace_back(e, static_cast<int>(i));
            for (auto e : op.recv_events)
                recvs[t].emplace_back(i, e);
        }
    });
    if (repeated)
        return dependencies_in_order(g);
    for (const auto& found : later)
        for (auto [i, k] : found) {
            const auto& name = g.ops[i].inputs[k - deps.m_first_input[i]].name;
            deps.m_sources[k] = source_of(names.find(name, SharedNames::hash(name), key_of), i);
        }
    std::unordered_map<std::int64_t, int> sender; // event -> its first sender
    for (const auto& s : sends)
        for (auto [e, i] : s)
            sender.emplace(e, i);
    std::vector<std::vector<int>> lists(threads);
    std::vector<std::vector<std::size_t>> ends(threads); // of each operator's list in lists[t]
    support::on_threads(threads, [&](unsigned t) {
        lists[t].reserve(deps.m_sources.size() / threads + 16);
        std::vector<std::int64_t> recv; // of one operator
        auto next = recvs[t].begin();
        for (auto [i, end] = run(t); i < end; ++i) {
            recv.clear();
            for (; next != recvs[t].end() && next->first == i; ++next)
                recv.push_back(next->second);
            DependenciesBuilder::append_list(deps, i, recv, sender, lists[t]);
            ends[t].push_back(lists[t].size());
        }
    });
    std::size_t total = 0;
    for (const auto& l : lists)
        total += l.size();
    deps.m_list.reserve(total);
    deps.m_start.reserve(n + 1);
    for (unsigned t = 0; t < threads; ++t) {
        std::size_t base = deps.m_list.size();
        deps.m_list.insert(deps.m_list.end(), lists[t].begin(), lists[t].end());
        for (std::size_t end : ends[t])
            deps.m_start.push_back(base + end);
    }
    DependenciesBuilder::count_reads(deps);
    return deps;
}

} // namespace skforge::graph
