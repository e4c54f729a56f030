// SPDX-License-Identifier: Apache-2.0
#include "skforge/fusion/report.hpp"
#include "skforge/support/json.hpp"

#include "metadata_text.hpp"
#include "report_counts.hpp"
#include "skforge/support/memory.hpp"
#include "skforge/support/parallel.hpp"
#include "skforge/support/safe_path.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

namespace skforge::fusion {

using nlohmann::json;

namespace {

std::size_t left_out(const Plan& p) {
    std::size_t n = 0;
    for (const auto& o : p.ops)
        n += o.segment < 0 ? 1u : 0u;
    return n;
}

} // namespace

std::array<std::size_t, 3> barrier_counts(const Segment& s) {
    std::array<std::size_t, 3> c{};
    for (const auto& b : s.barriers)
        ++c[b.kind == BarrierKind::vector ? 0 : b.kind == BarrierKind::cube ? 1 : 2];
    return c;
}

std::size_t naive_barriers(const Segment& s) {
    return s.ops.empty() ? 0 : s.ops.size() - 1;
}

namespace {

// Writes items [0, n) with `write(i, out)` on every core and hands the text to `sink` in
// order: the same text as one loop would write. Items go in chunks through a window of reused
// buffers, so a large output never sits in memory whole; whichever thread completes the chunk
// next in order hands it (and any completed after it) to the sink while the others go on.
template <typename Write>
void in_parallel(std::size_t n, const std::function<void(std::string_view)>& sink, Write write) {
    const unsigned threads = support::cores();
    constexpr std::size_t k_items = 64; // items per chunk
    const std::size_t chunks = (n + k_items - 1) / k_items;
    const std::size_t window = std::max<std::size_t>(1, threads * 4u);
    std::vector<json_text::Out> parts(window);
    std::vector<char> done(chunks, 0);
    std::mutex m;
    std::condition_variable freed;
    std::size_t written = 0; // chunks handed to the sink
    std::atomic<std::size_t> next{0};
    auto work = [&](unsigned) {
        for (std::size_t c = next++; c < chunks; c = next++) {
            {
                std::unique_lock lock(m);
                freed.wait(lock, [&] { return c < written + window; });
            }
            auto& part = parts[c % window];
            part.clear();
            for (std::size_t i = c * k_items; i < std::min(n, (c + 1) * k_items); ++i)
                write(i, part);
            std::lock_guard lock(m);
            done[c] = 1;
            bool any = false;
            for (; written < chunks && done[written]; ++written, any = true)
                sink(parts[written % window].view());
            if (any)
                freed.notify_all();
        }
    };
    support::on_threads(static_cast<unsigned>(std::clamp<std::size_t>(chunks, 1, threads)), work);
}

std::string_view preload_name(graph::PreloadCode c) {
    return c == graph::PreloadCode::none  ? "none"
           : c == graph::PreloadCode::max ? "max"
                                          : "per-func";
}

// A segment's options as one JSON object, keys sorted (as nlohmann writes them).
void write_options(json_text::Out& out, const graph::ScopeOptions& o) {
    namespace jt = json_text;
    auto flag = [&](const char* text, bool v) {
        out += text;
        out += v ? "true" : "false";
    };
    auto list = [&](const char* text, const std::vector<std::string>& items) {
        out += text;
        out += '[';
        for (std::size_t i = 0; i < items.size(); ++i) {
            if (i)
                out += ',';
            jt::string(out, items[i]);
        }
        out += ']';
    };
    auto maybe = [&](const char* text, const std::optional<int>& v) {
        out += text;
        if (v)
            jt::integer(out, *v);
        else
            out += "null";
    };
    out += "{\"compile_options\":";
    jt::string(out, o.compile_options);
    list(",\"dcci_after_kernel_end\":", o.dcci_after_kernel_end);
    list(",\"dcci_before_kernel_start\":", o.dcci_before_kernel_start);
    list(",\"dcci_disable_on_kernel\":", o.dcci_disable_on_kernel);
    maybe(",\"debug_aic_num\":", o.debug_aic_num);
    maybe(",\"debug_aiv_num\":", o.debug_aiv_num);
    flag(",\"debug_dcci_all\":", o.debug_dcci_all);
    flag(",\"debug_sync_all\":", o.debug_sync_all);
    jt::number(out, "early_start", o.early_start);
    flag(",\"feed_sync_all\":", o.feed_sync_all);
    jt::number(out, "func_align", o.func_align);
    jt::text(out, "preload_code", preload_name(o.preload_code));
    flag(",\"profiling\":", o.profiling);
    jt::number(out, "split_mode", o.split_mode);
    flag(",\"stream_fusion\":", o.stream_fusion);
    jt::text(out, "strict_scope_check",
             o.strict_scope_check == graph::StrictScopeCheck::abort ? "abort" : "bypass");
    out += '}';
}

// Who sets and who waits for each early-start flag, by operator name, in the pairs' order.
void write_early_start_partners(json_text::Out& out, const graph::Graph& g, const Segment& s) {
    auto name = [&](int pos) -> const std::string& {
        return g.ops[static_cast<std::size_t>(s.ops[static_cast<std::size_t>(pos)])].name;
    };
    json_text::key(out, "early_start_partners");
    out += '[';
    for (std::size_t k = 0; k < s.early_start_pairs.size(); ++k) {
        out += k ? ",{\"set\":" : "{\"set\":";
        json_text::string(out, name(s.early_start_pairs[k].first));
        out += ",\"wait\":";
        json_text::string(out, name(s.early_start_pairs[k].second));
        out += '}';
    }
    out += ']';
}

// The notify/wait pairs for people: one line each, with the slots of fused ends.
std::string notify_wait_text(const graph::Graph& g, const Plan& p) {
    if (p.notify_waits.empty())
        return {};
    std::string out = "\nnotify/wait with operators beside the AI cores: " +
                      std::to_string(p.notify_waits.size()) + " pair(s)\n";
    auto end = [&](int op, int segment, std::int64_t slot, const char* what) {
        const auto& o = g.ops[static_cast<std::size_t>(op)];
        std::string t = support::printable(o.name) + " (" +
                        (graph::runs_beside_cores(o.kind) ? std::string(op_kind_name(o.kind))
                                                          : std::string("kernel"));
        if (segment >= 0)
            t += ", in " + p.segments[static_cast<std::size_t>(segment)].name + ", " + what +
                 " slot " + std::to_string(slot);
        return t + ")";
    };
    for (const auto& nw : p.notify_waits)
        out += "  event " + std::to_string(nw.event) + ": " +
               end(nw.notifier, nw.notify_segment, nw.notify_slot, "notify") + " -> " +
               end(nw.waiter, nw.wait_segment, nw.wait_slot, "wait") + "\n";
    return out;
}

json notify_wait_json(const graph::Graph& g, const Plan& p) {
    json out = json::array();
    auto segment = [&](int s) {
        return s < 0 ? json(nullptr) : json(p.segments[static_cast<std::size_t>(s)].name);
    };
    auto slot = [](std::int64_t v) { return v < 0 ? json(nullptr) : json(v); };
    for (const auto& nw : p.notify_waits) {
        const auto& n = g.ops[static_cast<std::size_t>(nw.notifier)];
        const auto& w = g.ops[static_cast<std::size_t>(nw.waiter)];
        out.push_back({{"event", nw.event},
                       {"notifier", n.name},
                       {"notifier_kind", op_kind_name(n.kind)},
                       {"notify_segment", segment(nw.notify_segment)},
                       {"notify_slot", slot(nw.notify_slot)},
                       {"waiter", w.name},
                       {"waiter_kind", op_kind_name(w.kind)},
                       {"wait_segment", segment(nw.wait_segment)},
                       {"wait_slot", slot(nw.wait_slot)}});
    }
    return out;
}

} // namespace

// Operator names may hold any character but NUL; the text plan shows control characters as '?',
// so a graph cannot send escape sequences to the terminal of whoever reads its plan.
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
            out += "  split: " + std::string(reason_code(*s.split_reason)) + ": " +
                   support::printable(s.split_detail);
        out += "\n";
        auto counts = barrier_counts(s);
        out += "  " + launch_text(s) + "; barriers: " + std::to_string(counts[0]) + " vector, " +
               std::to_string(counts[1]) + " cube, " + std::to_string(counts[2]) +
               " full (naive: " + std::to_string(naive_barriers(s)) + " full); early-start pairs " +
               std::to_string(s.early_start_pairs.size()) + ", event pairs " +
               std::to_string(s.event_pairs.size()) + "\n";
        out += "  arena peak " + std::to_string(s.arena_peak) + " B (lower bound " +
               std::to_string(s.arena_lower_bound) + " B); workspace " +
               std::to_string(s.workspace_total) +
               " B (sum of all: " + std::to_string(s.workspace_naive) + " B)\n";
        for (int i : s.ops) {
            const auto& op = g.ops[static_cast<std::size_t>(i)];
            out += "  " + support::printable(op.name) + "  " + op.type + "  stream " +
                   std::to_string(op.stream_id) + "\n";
        }
    }
    if (left_out(p) > 0) {
        out += "\nleft out:\n";
        for (std::size_t i = 0; i < p.ops.size(); ++i)
            if (p.ops[i].segment < 0)
                out += "  " + support::printable(g.ops[i].name) + "  " + g.ops[i].type + "  " +
                       std::string(reason_code(*p.ops[i].reason)) + "  " +
                       support::printable(p.ops[i].detail) + "\n";
    }
    return out + notify_wait_text(g, p);
}

namespace {

void append_string(json_text::Out& out, std::string_view s) {
    json_text::string(out, s);
}

// "launch": how the SuperKernel is launched on the plan's target (keys sorted).
void write_launch(json_text::Out& out, const Segment& s) {
    namespace jt = json_text;
    auto l = launch_summary(s);
    jt::key(out, "launch");
    out += '{';
    jt::number(out, "block_dim", l.block_dim);
    jt::text(out, "core_type", l.core_type);
    jt::key(out, "kernel_type");
    if (l.type)
        jt::string(out, kernel::kernel_type_name(*l.type));
    else
        out += "null";
    jt::number(out, "largest_sub_block_dim", s.largest_block_dim);
    jt::text(out, "task_ration", l.task_ration);
    out += '}';
}

} // namespace

std::string plan_json(const graph::Graph& g, const Plan& p) {
    std::string out;
    plan_json(g, p, [&](std::string_view piece) { out += piece; });
    return out;
}

void plan_json(const graph::Graph& g, const Plan& p,
               const std::function<void(std::string_view)>& sink) {
    // The header and segments are few: nlohmann builds them. The operators can be a hundred
    // thousand: they are written straight into the text, one per line.
    json head = {{"graph", g.name},
                 {"file", g.file},
                 {"npu_arch", g.npu_arch},
                 {"soc_version", g.soc_version},
                 {"super_kernel_optimize", g.super_kernel_optimize},
                 {"options", graph::flatten_graph_options(g.options)},
                 {"notify_wait", notify_wait_json(g, p)},
                 {"summary",
                  {{"ops", g.ops.size()},
                   {"fused", g.ops.size() - left_out(p)},
                   {"left_out", left_out(p)},
                   {"segments", p.segments.size()},
                   {"notify_wait_pairs", p.notify_waits.size()}}}};
    json_text::Out out;
    out += "{\n";
    for (auto& [k, v] : head.items()) {
        append_string(out, k);
        out += ": " + support::dump_json(v) + ",\n";
    }
    out += "\"segments\": [";
    sink(out.view());
    out.clear();
    in_parallel(p.segments.size(), sink, [&](std::size_t s, json_text::Out& part) {
        // Keys in sorted order, as nlohmann writes an object.
        namespace jt = json_text;
        const auto& seg = p.segments[s];
        auto counts = barrier_counts(seg);
        part += s ? ",\n  {" : "\n  {";
        jt::key(part, "arena");
        part += '{';
        jt::number(part, "lower_bound", seg.arena_lower_bound);
        jt::number(part, "peak", seg.arena_peak);
        part += '}';
        jt::key(part, "barriers");
        part += '{';
        jt::number(part, "cube", counts[1]);
        jt::number(part, "full", counts[2]);
        jt::number(part, "naive_full", naive_barriers(seg));
        jt::number(part, "vector", counts[0]);
        part += '}';
        jt::number(part, "early_start_pairs", seg.early_start_pairs.size());
        write_early_start_partners(part, g, seg);
        jt::number(part, "event_pairs", seg.event_pairs.size());
        jt::key(part, "kernel_meta");
        write_kernel_meta(part, g, seg);
        write_launch(part, seg);
        jt::text(part, "name", seg.name);
        jt::key(part, "ops");
        part += '[';
        for (std::size_t k = 0; k < seg.ops.size(); ++k) {
            if (k)
                part += ',';
            jt::string(part, g.ops[static_cast<std::size_t>(seg.ops[k])].name);
        }
        part += ']';
        jt::key(part, "options");
        write_options(part, seg.options);
        jt::text(part, "scope", seg.scope);
        jt::text(part, "split_detail", seg.split_detail);
        jt::key(part, "split_reason");
        if (seg.split_reason)
            jt::string(part, reason_code(*seg.split_reason));
        else
            part += "null";
        jt::key(part, "workspace");
        part += '{';
        jt::number(part, "naive", seg.workspace_naive);
        jt::number(part, "total", seg.workspace_total);
        part += "}}";
    });
    out += p.segments.empty() ? "],\n" : "\n],\n";
    out += "\"ops\": [";
    sink(out.view());
    out.clear();
    in_parallel(g.ops.size(), sink, [&](std::size_t i, json_text::Out& part) {
        const auto& r = p.ops[i];
        const auto& op = g.ops[i];
        support::prefetch_ahead(g.ops, i);
        part += i ? ",\n  {\"name\": " : "\n  {\"name\": ";
        append_string(part, op.name);
        part += ", \"type\": ";
        append_string(part, op.type);
        part += ", \"stream_id\": ";
        json_text::integer(part, op.stream_id);
        part += ", \"kind\": \"";
        part += op_kind_name(op.kind);
        part += '"';
        if (op.kind == graph::OpKind::aicpu_tiling) {
            part += ", \"tiling_for\": ";
            append_string(part, op.tiling_for);
        }
        if (r.segment >= 0) {
            part += ", \"result\": \"fused\", \"segment\": ";
            append_string(part, p.segments[static_cast<std::size_t>(r.segment)].name);
            part += ", \"reason\": null, \"detail\": \"\"}";
        } else {
            part += ", \"result\": \"left_out\", \"segment\": null, \"reason\": \"";
            part += reason_code(*r.reason);
            part += "\", \"detail\": ";
            append_string(part, r.detail);
            part += "}";
        }
    });
    out += g.ops.empty() ? "]\n}\n" : "\n]\n}\n";
    sink(out.view());
}

std::string plan_dot(const graph::Graph& g, const Plan& p) {
    return picture_dot(plan_picture(g, p));
}

std::string plan_svg(const graph::Graph& g, const Plan& p, Layout layout) {
    std::string used;
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" +
           layout_svg(plan_picture(g, p), layout, used);
}

namespace {

// The value named `name` in `table`, or nullopt.
template <class T, std::size_t N>
std::optional<T> named(const std::pair<std::string_view, T> (&table)[N], std::string_view name) {
    for (const auto& [n, value] : table)
        if (n == name)
            return value;
    return std::nullopt;
}

} // namespace

std::optional<PlanFormat> parse_plan_format(std::string_view name) {
    static constexpr std::pair<std::string_view, PlanFormat> k_names[] = {
        {"text", PlanFormat::text},
        {"json", PlanFormat::json},
        {"dot", PlanFormat::dot},
        {"svg", PlanFormat::svg},
        {"html", PlanFormat::html}};
    return named(k_names, name);
}

std::optional<Layout> parse_layout(std::string_view name) {
    static constexpr std::pair<std::string_view, Layout> k_names[] = {
        {"auto", Layout::automatic}, {"dot", Layout::graphviz}, {"builtin", Layout::builtin}};
    return named(k_names, name);
}

void write_plan(const graph::Graph& g, const Plan& p, PlanFormat format, Layout layout,
                const std::function<void(std::string_view)>& sink) {
    switch (format) {
    case PlanFormat::json:
        return plan_json(g, p, sink);
    case PlanFormat::dot:
        return sink(plan_dot(g, p));
    case PlanFormat::svg:
        return sink(plan_svg(g, p, layout));
    case PlanFormat::html:
        return sink(plan_html(g, p, layout));
    case PlanFormat::text:
        break;
    }
    sink(plan_text(g, p));
}

} // namespace skforge::fusion
