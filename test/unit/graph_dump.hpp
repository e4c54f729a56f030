// SPDX-License-Identifier: Apache-2.0
#pragma once
// The graph the loader read from YAML text, as text: every field with its position, then the
// diagnostics. Used to compare the two ways the loader parses (whole and in pieces).
#include "skforge/graph/graph.hpp"

#include <string>
#include <vector>

namespace skforge::test {

inline std::string dump_location(const graph::Location& l) {
    return l.file_name() + ":" + std::to_string(l.line) + ":" + std::to_string(l.column);
}

inline std::string dump_tensors(const std::vector<graph::Tensor>& ts) {
    std::string out;
    for (const auto& t : ts) {
        out += " " + t.name + "/" + t.dtype + "/" + dump_location(t.where) + "[";
        for (auto d : t.shape)
            out += std::to_string(d) + ",";
        out += "]";
    }
    return out;
}

/// Everything the loader read, with positions, and what it reported.
inline std::string dump_graph(const std::string& text, std::size_t piece_bytes) {
    graph::Diagnostics diags;
    auto g = graph::parse_graph_text(text, "g.yaml", diags, piece_bytes);
    std::string out = g.name + "|" + g.npu_arch + "|" + g.soc_version + "|" +
                      dump_tensors(g.inputs) + "|" + graph::flatten_graph_options(g.options) + "\n";
    for (const auto& s : g.scopes)
        out += "scope " + s.name + "=" + s.options + "@" + dump_location(s.where) + "\n";
    for (const auto& o : g.ops) {
        out += o.name + " " + o.type + " " + o.kernel.json_path + " " + o.kernel.bin_path + " " +
               o.kernel.source_path + "@" + dump_location(o.kernel.where) + " s" +
               std::to_string(o.stream_id) + " t" + std::to_string(static_cast<int>(o.task_type)) +
               " e" + std::to_string(static_cast<int>(o.engine)) + " " + o.scope + " " +
               std::to_string(o.no_fusion) + " k" + std::to_string(static_cast<int>(o.kind)) + "@" +
               dump_location(o.kind_where) + " for " + o.tiling_for + "@" +
               dump_location(o.tiling_for_where) + "@" + dump_location(o.where) + " in" +
               dump_tensors(o.inputs) + " out" + dump_tensors(o.outputs) + " ev";
        for (auto e : o.send_events)
            out += " >" + std::to_string(e);
        for (auto e : o.recv_events)
            out += " <" + std::to_string(e);
        out += "\n";
    }
    return out + diags.format();
}

} // namespace skforge::test
