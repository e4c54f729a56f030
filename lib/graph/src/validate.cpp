#include "skforge/graph/graph.hpp"
#include "skforge/support/string_map.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace skforge::graph {

namespace {

constexpr int k_graph_input = -1;

// Happens-before between streams as vector clocks: clock[s][t] is the index of the latest
// operator on stream t known to have finished before the current point of stream s.
class StreamClocks {
  public:
    explicit StreamClocks(const Graph& g) {
        // Graphs have a few streams: a short sorted list, runs of one stream skipped.
        const std::uint32_t* last = nullptr;
        for (const auto& op : g.ops) {
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
    for (const auto& op : g.ops) {
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
    for (const auto& s : g.scopes)
        if (s.name.size() > k_max_scope_name || s.name.empty())
            diags.error(s.where, "scope name '" + s.name.substr(0, 40) + "...' must be 1.." +
                                     std::to_string(k_max_scope_name) + " bytes");
}

} // namespace

void validate_graph(const Graph& g, Diagnostics& diags) {
    check_names_and_scopes(g, diags);
    // Views into the graph's own strings: no copies for a hundred thousand tensors.
    support::StringMap<int> producer;
    producer.reserve(output_count(g) + g.inputs.size());
    for (const auto& t : g.inputs)
        if (!producer.emplace(t.name, k_graph_input).second)
            diags.error(t.where, "graph input '" + t.name + "' is declared twice");
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
    // Every event sent anywhere: needed only to word an error, so built on the first one.
    std::optional<std::unordered_set<std::int64_t>> any_sent;
    auto sent_anywhere = [&](std::int64_t e) {
        if (!any_sent) {
            any_sent.emplace();
            for (const auto& o : g.ops)
                any_sent->insert(o.send_events.begin(), o.send_events.end());
        }
        return any_sent->contains(e);
    };
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        auto& clock = clocks.of(op.stream_id);
        for (auto e : op.recv_events) {
            auto it = sent.find(e);
            if (it == sent.end()) {
                bool later = sent_anywhere(e);
                diags.error(
                    op.where,
                    "operator '" + op.name + "' receives event " + std::to_string(e) +
                        (later ? " before any operator sends it" : " that no operator sends"),
                    later ? "move the receiver after the sender" : "add it to a send_event_list");
                continue;
            }
            it->second.received = true;
            for (std::size_t s = 0; s < clock.size(); ++s)
                clock[s] = std::max(clock[s], it->second.clock[s]);
        }
        for (const auto& in : op.inputs) {
            const int* found = producer.find(in.name);
            if (found == nullptr) {
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
            if (*found == k_graph_input)
                continue;
            const Op& p = g.ops[static_cast<std::size_t>(*found)];
            if (p.stream_id == op.stream_id)
                continue;
            if (clock[static_cast<std::size_t>(clocks.dense(p.stream_id))] < *found)
                diags.error(in.where,
                            "input '" + in.name + "' of '" + op.name + "' (stream " +
                                std::to_string(op.stream_id) + ") comes from '" + p.name +
                                "' on stream " + std::to_string(p.stream_id) +
                                " with no event in between",
                            "send an event from '" + p.name +
                                "' (or later on its stream) and receive it here");
        }
        clock[static_cast<std::size_t>(clocks.dense(op.stream_id))] = static_cast<int>(i);
        for (const auto& out : op.outputs) {
            if (!producer.emplace(out.name, static_cast<int>(i)).second)
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
            sent.emplace(e, EventSend{static_cast<int>(i), clock, false});
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
                    "receive it or remove it from send_event_list");
}

Dependencies dependencies(const Graph& g) {
    // Tensor name -> output number (graph inputs: -1 - index); the first producer wins.
    support::StringMap<int> producer;
    producer.reserve(output_count(g) + g.inputs.size());
    for (std::size_t k = 0; k < g.inputs.size(); ++k)
        producer.emplace(g.inputs[k].name, -1 - static_cast<int>(k));
    std::unordered_map<std::int64_t, int> sender;
    Dependencies deps;
    std::size_t inputs = 0, outputs = 0, events = 0;
    for (const auto& op : g.ops) {
        inputs += op.inputs.size();
        outputs += op.outputs.size();
        events += op.recv_events.size();
    }
    deps.m_list.reserve(inputs + events);
    deps.m_start.reserve(g.ops.size() + 1);
    deps.m_sources.reserve(inputs);
    deps.m_first_input.reserve(g.ops.size() + 1);
    deps.m_first_output.reserve(g.ops.size() + 1);
    deps.m_output_op.reserve(outputs);
    deps.m_reads.assign(outputs, 0);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        auto first = static_cast<std::ptrdiff_t>(deps.m_list.size());
        for (const auto& in : op.inputs) {
            const int* p = producer.find(in.name);
            int source = p ? *p : Dependencies::k_unknown;
            deps.m_sources.push_back(source);
            if (source >= 0) {
                ++deps.m_reads[static_cast<std::size_t>(source)];
                deps.m_list.push_back(deps.m_output_op[static_cast<std::size_t>(source)]);
            }
        }
        deps.m_first_input.push_back(deps.m_sources.size());
        for (auto e : op.recv_events)
            if (auto it = sender.find(e); it != sender.end())
                deps.m_list.push_back(it->second);
        std::sort(deps.m_list.begin() + first, deps.m_list.end());
        deps.m_list.erase(std::unique(deps.m_list.begin() + first, deps.m_list.end()),
                          deps.m_list.end());
        deps.m_start.push_back(deps.m_list.size());
        for (const auto& out : op.outputs) {
            producer.emplace(out.name, static_cast<int>(deps.m_output_op.size()));
            deps.m_output_op.push_back(static_cast<int>(i));
        }
        deps.m_first_output.push_back(deps.m_output_op.size());
        for (auto e : op.send_events)
            sender.emplace(e, static_cast<int>(i));
    }
    return deps;
}

} // namespace skforge::graph
