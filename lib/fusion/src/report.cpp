#include "skforge/fusion/report.hpp"

#include <cstdio>

namespace skforge::fusion {

using nlohmann::json;

namespace {

std::size_t left_out(const Plan& p) {
    std::size_t n = 0;
    for (const auto& o : p.ops)
        n += o.segment < 0 ? 1u : 0u;
    return n;
}

std::string_view preload_name(graph::PreloadCode c) {
    return c == graph::PreloadCode::none  ? "none"
           : c == graph::PreloadCode::max ? "max"
                                          : "per-func";
}

json options_json(const graph::ScopeOptions& o) {
    json j = {{"func_align", o.func_align},
              {"preload_code", preload_name(o.preload_code)},
              {"early_start", o.early_start},
              {"stream_fusion", o.stream_fusion},
              {"debug_dcci_all", o.debug_dcci_all},
              {"debug_sync_all", o.debug_sync_all},
              {"feed_sync_all", o.feed_sync_all},
              {"profiling", o.profiling},
              {"compile_options", o.compile_options},
              {"strict_scope_check",
               o.strict_scope_check == graph::StrictScopeCheck::abort ? "abort" : "bypass"},
              {"dcci_before_kernel_start", o.dcci_before_kernel_start},
              {"dcci_after_kernel_end", o.dcci_after_kernel_end},
              {"dcci_disable_on_kernel", o.dcci_disable_on_kernel},
              {"split_mode", o.split_mode},
              {"debug_aic_num", o.debug_aic_num ? json(*o.debug_aic_num) : json(nullptr)},
              {"debug_aiv_num", o.debug_aiv_num ? json(*o.debug_aiv_num) : json(nullptr)}};
    return j;
}

std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + "\"";
}

} // namespace

std::string plan_text(const graph::Graph& g, const Plan& p) {
    std::string out = "graph " + g.name + " (" + (g.npu_arch.empty() ? "no arch" : g.npu_arch) +
                      ", " + (g.soc_version.empty() ? "no SoC" : g.soc_version) +
                      "): " + std::to_string(g.ops.size()) + " operators, " +
                      std::to_string(p.segments.size()) + " SuperKernel segment(s), " +
                      std::to_string(left_out(p)) + " left out\n";
    for (const auto& s : p.segments) {
        out += "\nsegment " + s.name + " (scope " + s.scope + ", " + std::to_string(s.ops.size()) +
               " op" + (s.ops.size() == 1 ? "" : "s") + ")";
        if (s.split_reason)
            out += "  split: " + std::string(reason_code(*s.split_reason)) + ": " + s.split_detail;
        out += "\n";
        for (int i : s.ops) {
            const auto& op = g.ops[static_cast<std::size_t>(i)];
            out +=
                "  " + op.name + "  " + op.type + "  stream " + std::to_string(op.stream_id) + "\n";
        }
    }
    if (left_out(p) > 0) {
        out += "\nleft out:\n";
        for (std::size_t i = 0; i < p.ops.size(); ++i)
            if (p.ops[i].segment < 0)
                out += "  " + g.ops[i].name + "  " + g.ops[i].type + "  " +
                       std::string(reason_code(*p.ops[i].reason)) + "  " + p.ops[i].detail + "\n";
    }
    return out;
}

json plan_json(const graph::Graph& g, const Plan& p) {
    json segments = json::array();
    for (const auto& s : p.segments) {
        json ops = json::array();
        for (int i : s.ops)
            ops.push_back(g.ops[static_cast<std::size_t>(i)].name);
        segments.push_back(
            {{"name", s.name},
             {"scope", s.scope},
             {"ops", std::move(ops)},
             {"split_reason", s.split_reason ? json(reason_code(*s.split_reason)) : json(nullptr)},
             {"split_detail", s.split_detail},
             {"options", options_json(s.options)}});
    }
    json ops = json::array();
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const auto& r = p.ops[i];
        bool fused = r.segment >= 0;
        ops.push_back(
            {{"name", g.ops[i].name},
             {"type", g.ops[i].type},
             {"stream_id", g.ops[i].stream_id},
             {"result", fused ? "fused" : "left_out"},
             {"segment",
              fused ? json(p.segments[static_cast<std::size_t>(r.segment)].name) : json(nullptr)},
             {"reason", r.reason ? json(reason_code(*r.reason)) : json(nullptr)},
             {"detail", r.detail}});
    }
    return {{"graph", g.name},
            {"file", g.file},
            {"npu_arch", g.npu_arch},
            {"soc_version", g.soc_version},
            {"super_kernel_optimize", g.super_kernel_optimize},
            {"options", graph::flatten_graph_options(g.options)},
            {"summary",
             {{"ops", g.ops.size()},
              {"fused", g.ops.size() - left_out(p)},
              {"left_out", left_out(p)},
              {"segments", p.segments.size()}}},
            {"segments", std::move(segments)},
            {"ops", std::move(ops)}};
}

std::string plan_dot(const graph::Graph& g, const Plan& p) {
    std::string out = "digraph " + quoted(g.name) +
                      " {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\"];\n";
    for (std::size_t s = 0; s < p.segments.size(); ++s) {
        out += "  subgraph cluster_" + std::to_string(s) +
               " {\n    label=" + quoted(p.segments[s].name) + ";\n    style=rounded;\n";
        for (int i : p.segments[s].ops)
            out += "    " + quoted(g.ops[static_cast<std::size_t>(i)].name) + " [label=" +
                   quoted(g.ops[static_cast<std::size_t>(i)].name + "\\n" +
                          g.ops[static_cast<std::size_t>(i)].type) +
                   "];\n";
        out += "  }\n";
    }
    for (std::size_t i = 0; i < g.ops.size(); ++i)
        if (p.ops[i].segment < 0)
            out += "  " + quoted(g.ops[i].name) + " [style=dashed, label=" +
                   quoted(g.ops[i].name + "\\n" + g.ops[i].type + "\\n" +
                          std::string(reason_code(*p.ops[i].reason))) +
                   "];\n";
    auto deps = graph::dependencies(g);
    for (std::size_t i = 0; i < deps.size(); ++i)
        for (int d : deps[i])
            out += "  " + quoted(g.ops[static_cast<std::size_t>(d)].name) + " -> " +
                   quoted(g.ops[i].name) + ";\n";
    return out + "}\n";
}

} // namespace skforge::fusion
