// SPDX-License-Identifier: Apache-2.0
// The plan as one self-contained HTML page. It is also well-formed XML (every element closed,
// script and style in CDATA), so a plain XML parser can check it. Every piece of text from the
// graph goes through display_text and xml_escaped on its way in: names are untrusted.
#include "skforge/fusion/picture.hpp"
#include "skforge/fusion/report.hpp"

#include "report_counts.hpp"

#include <string>
#include <vector>

namespace skforge::fusion {

namespace {

using Row = std::vector<std::string>;

std::string esc(std::string_view s) {
    return xml_escaped(display_text(s));
}

std::string num(std::uint64_t v) {
    return std::to_string(v);
}

std::string bytes(std::uint64_t v) {
    return std::to_string(v) + " B";
}

std::string list(const std::vector<std::int64_t>& v) {
    std::string out;
    for (auto x : v)
        out += (out.empty() ? "" : ", ") + std::to_string(x);
    return out;
}

// A table the filter box acts on: one row per item, every cell escaped here.
std::string table(std::string_view caption, const Row& head, const std::vector<Row>& rows) {
    std::string out =
        "<table class=\"filterable\"><caption>" + esc(caption) + "</caption><thead><tr>";
    for (const auto& h : head)
        out += "<th>" + esc(h) + "</th>";
    out += "</tr></thead><tbody>";
    for (const auto& r : rows) {
        out += "<tr>";
        for (const auto& c : r)
            out += "<td>" + esc(c) + "</td>";
        out += "</tr>";
    }
    if (rows.empty())
        out += "<tr><td colspan=\"" + num(head.size()) + "\">none</td></tr>";
    return out + "</tbody></table>\n";
}

const std::string& op_name(const graph::Graph& g, int i) {
    return g.ops[static_cast<std::size_t>(i)].name;
}

std::string where(const Plan& p, int op) {
    int seg = p.ops[static_cast<std::size_t>(op)].segment;
    return seg < 0 ? "left out" : "SuperKernel " + p.segments[static_cast<std::size_t>(seg)].name;
}

std::string superkernels(const Plan& p) {
    std::vector<Row> rows;
    for (const auto& s : p.segments) {
        auto count = barrier_counts(s);
        auto launch = launch_summary(s);
        rows.push_back(
            {s.name, s.scope, num(s.ops.size()), num(launch.block_dim),
             std::string(launch.core_type) +
                 (launch.type ? " (" + std::string(kernel::kernel_type_name(*launch.type)) + ")"
                              : ""),
             std::string(launch.task_ration),
             num(count[0]) + " / " + num(count[1]) + " / " + num(count[2]) + " (naive " +
                 num(naive_barriers(s)) + " full)",
             num(s.early_start_pairs.size()), num(s.event_pairs.size()),
             bytes(s.arena_peak) + " (lower bound " + bytes(s.arena_lower_bound) + ")",
             bytes(s.workspace_total) + " (sum of all " + bytes(s.workspace_naive) + ")",
             s.split_reason ? std::string(reason_code(*s.split_reason)) + ": " + s.split_detail
                            : ""});
    }
    return table("SuperKernels",
                 {"SuperKernel", "scope", "operators", "blockDim", "coreType", "taskRation",
                  "barriers vector / cube / full", "early-start pairs", "event pairs", "arena peak",
                  "workspace", "split"},
                 rows);
}

// A sub-kernel's notify/wait with operators beside the cores: "notify 2 to X (slot 88)".
std::string side_syncs(const graph::Graph& g, const SubKernel& sub) {
    std::string out;
    auto add = [&](const SideSync& x, const char* what, const char* dir) {
        out += (out.empty() ? "" : "; ") + std::string(what) + " " + std::to_string(x.event) + dir +
               op_name(g, x.peer) + " (slot " + std::to_string(x.slot) + ")";
    };
    for (const auto& x : sub.notifies)
        add(x, "notify", " to ");
    for (const auto& x : sub.waits)
        add(x, "wait", " from ");
    return out;
}

std::string sub_kernels(const graph::Graph& g, const Segment& s) {
    std::vector<Row> rows;
    for (std::size_t k = 0; k < s.ops.size() && k < s.subs.size(); ++k) {
        const auto& op = g.ops[static_cast<std::size_t>(s.ops[k])];
        const auto& sub = s.subs[k];
        rows.push_back(
            {num(k), op.name, op.type, num(op.stream_id), num(sub.block_dim), num(sub.split_mode),
             std::string(sub.early_start_set ? "set " : "") + (sub.early_start_wait ? "wait" : ""),
             list(sub.send_events), list(sub.recv_events), side_syncs(g, sub),
             std::string(sub.dcci_before ? "before " : "") + (sub.dcci_after ? "after " : "") +
                 (sub.dcci_disabled ? "disabled" : ""),
             bytes(sub.workspace), num(sub.workspace_offset),
             k < s.preload_bytes.size() ? bytes(s.preload_bytes[k]) : ""});
    }
    return table("sub-kernels of " + s.name,
                 {"#", "operator", "OpType", "stream", "blockDim", "split mode", "early start",
                  "events set", "events waited", "notify/wait", "dcci", "workspace",
                  "workspace offset", "preload"},
                 rows);
}

std::string barriers(const graph::Graph& g, const Segment& s) {
    std::vector<Row> rows;
    for (const auto& b : s.barriers) {
        auto at = [&](int pos) { return op_name(g, s.ops[static_cast<std::size_t>(pos)]); };
        rows.push_back({num(static_cast<std::uint64_t>(b.before)),
                        b.before > 0 ? at(b.before - 1) : "", at(b.before),
                        std::string(barrier_kind_name(b.kind))});
    }
    for (const auto& [set, wait] : s.early_start_pairs)
        rows.push_back({num(static_cast<std::uint64_t>(wait)),
                        op_name(g, s.ops[static_cast<std::size_t>(set)]),
                        op_name(g, s.ops[static_cast<std::size_t>(wait)]), "early-start pair"});
    return table("barriers and early-start pairs of " + s.name, {"position", "from", "to", "kind"},
                 rows);
}

std::string memory(const Segment& s) {
    std::vector<Row> rows;
    for (const auto& b : s.buffers)
        rows.push_back({b.tensor, bytes(b.bytes),
                        b.arena ? "arena at offset " + num(b.offset) : "argument",
                        b.first < 0 ? "outside" : "#" + num(static_cast<std::uint64_t>(b.first)),
                        b.last < 0 ? "" : "#" + num(static_cast<std::uint64_t>(b.last))});
    return table("tensors of " + s.name + ": arena peak " + bytes(s.arena_peak) + " (lower bound " +
                     bytes(s.arena_lower_bound) + "), workspace " + bytes(s.workspace_total) +
                     " (sum of all " + bytes(s.workspace_naive) + ")",
                 {"tensor", "size", "where", "written by", "last read by"}, rows);
}

std::string code_layout(const graph::Graph& g, const Segment& s) {
    std::vector<Row> rows;
    for (const auto& c : s.layout)
        rows.push_back({num(static_cast<std::uint64_t>(c.sub)),
                        op_name(g, s.ops[static_cast<std::size_t>(c.sub)]), num(c.copy),
                        num(c.offset), bytes(c.size)});
    return table("code layout of " + s.name + (s.code_size_estimated ? " (sizes estimated)" : ""),
                 {"#", "operator", "copy", "offset", "size"}, rows);
}

std::string events(const graph::Graph& g, const Plan& p) {
    std::vector<Row> rows;
    for (const auto& e : event_links(g)) {
        std::string how = "between launches";
        if (const auto* nw = find_notify_wait(p, e)) {
            how = "notify/wait in memory: " +
                  notify_wait_end(p, nw->notify_segment, nw->notify_slot, "notify") + ", " +
                  notify_wait_end(p, nw->wait_segment, nw->wait_slot, "wait");
        } else if (inside_pair(p, e)) {
            const auto& s = p.segments[static_cast<std::size_t>(
                p.ops[static_cast<std::size_t>(e.sender)].segment)];
            how = "set/wait pair inside " + s.name;
            for (const auto& [event, offset] : s.event_slots)
                if (event == e.event)
                    how += ", flag at parameter offset " + std::to_string(offset);
        }
        rows.push_back({std::to_string(e.event), op_name(g, e.sender), where(p, e.sender),
                        op_name(g, e.receiver), where(p, e.receiver), how});
    }
    return table("events", {"event", "recorded by", "in", "waited for by", "in", "becomes"}, rows);
}

std::string left_out(const graph::Graph& g, const Plan& p) {
    std::vector<Row> rows;
    for (std::size_t i = 0; i < g.ops.size(); ++i)
        if (p.ops[i].segment < 0)
            rows.push_back({g.ops[i].name, g.ops[i].type, num(g.ops[i].stream_id),
                            std::string(reason_code(*p.ops[i].reason)), p.ops[i].detail});
    return table("operators left out of every SuperKernel",
                 {"operator", "OpType", "stream", "reason", "detail"}, rows);
}

std::string legend() {
    std::string out = "<ul class=\"legend\">";
    for (const auto& st : edge_styles())
        if (st.line != Line::invisible)
            out += "<li><span class=\"swatch\" style=\"border-top: 3px " +
                   std::string(st.line == Line::dashed   ? "dashed"
                               : st.line == Line::dotted ? "dotted"
                                                         : "solid") +
                   " " + std::string(st.color) + "\"></span>" + esc(st.legend) + "</li>";
    return out + "</ul>\n";
}

constexpr std::string_view k_style = R"(/*<![CDATA[*/
body { font-family: Helvetica, Arial, sans-serif; font-size: 14px; margin: 1em 2em; color: #17202a; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
th, td { border: 1px solid #d5d8dc; padding: 2px 8px; text-align: left; vertical-align: top; }
th { background: #eaecee; }
#picture { overflow: auto; border: 1px solid #d5d8dc; max-height: 80vh; }
#filter { font-size: 14px; width: 30em; padding: 3px; }
.legend { list-style: none; padding: 0; }
.swatch { display: inline-block; width: 3em; margin-right: 0.6em; vertical-align: middle; }
.dim { opacity: 0.2; }
/*]]>*/)";

// Hides the table rows and dims the operators that do not contain the filter text. Written
// without '<' and '&' so it stays XML text even outside its CDATA section.
constexpr std::string_view k_script = R"(//<![CDATA[
(function () {
  var box = document.getElementById('filter');
  var count = document.getElementById('count');
  function apply() {
    var q = box.value.toLowerCase();
    var rows = document.querySelectorAll('table.filterable tbody tr');
    var shown = 0;
    rows.forEach(function (r) {
      var hit = q === '' || r.textContent.toLowerCase().indexOf(q) !== -1;
      r.style.display = hit ? '' : 'none';
      if (hit) { shown += 1; }
    });
    document.querySelectorAll('#picture g.node').forEach(function (n) {
      var hit = q === '' || n.textContent.toLowerCase().indexOf(q) !== -1;
      n.classList.toggle('dim', !hit);
    });
    count.textContent = q === '' ? '' : shown + ' of ' + rows.length + ' rows';
  }
  box.addEventListener('input', apply);
  apply();
})();
//]]>)";

std::string picture_section(const graph::Graph& g, const Plan& p, Layout layout) {
    if (g.ops.size() > k_html_picture_max_nodes)
        return "<p>No picture: the plan has more than " + num(k_html_picture_max_nodes) +
               " operators (skc plan --format dot draws it for Graphviz).</p>\n";
    std::string used;
    std::string svg = layout_svg(plan_picture(g, p), layout, used);
    return "<p>Laid out by " + esc(used) +
           ". Lanes are streams; a box around operators is a SuperKernel; hover for details.</p>"
           "\n<div id=\"picture\">" +
           svg + "</div>\n" + legend();
}

} // namespace

std::string plan_html(const graph::Graph& g, const Plan& p, Layout layout) {
    std::size_t out_count = 0;
    for (const auto& r : p.ops)
        out_count += r.segment < 0 ? 1u : 0u;
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>"
                      "<meta name=\"generator\" content=\"skc plan\"/><title>plan of graph " +
                      esc(g.name) + "</title>\n<style>" + std::string(k_style) +
                      "</style></head>\n<body>\n<h1>plan of graph " + esc(g.name) + "</h1>\n";
    out += "<p>" + esc(g.file) + ": " + esc(g.npu_arch.empty() ? "no arch" : g.npu_arch) + ", " +
           esc(g.soc_version.empty() ? "no SoC" : g.soc_version) + "; " + num(g.ops.size()) +
           " operators, " + num(p.segments.size()) + " SuperKernel(s), " + num(out_count) +
           " left out.</p>\n";
    out += "<p><label for=\"filter\">Filter: </label><input id=\"filter\" type=\"search\" "
           "placeholder=\"operator, OpType, reason, tensor...\"/> <span id=\"count\"></span>"
           "</p>\n";
    out += "<h2>picture</h2>\n" + picture_section(g, p, layout);
    out += "<h2>SuperKernels</h2>\n" + superkernels(p);
    for (const auto& s : p.segments)
        out += "<section><h3>SuperKernel " + esc(s.name) + "</h3>\n" + sub_kernels(g, s) +
               barriers(g, s) + memory(s) + code_layout(g, s) + "</section>\n";
    out += "<h2>events</h2>\n" + events(g, p);
    out += "<h2>left out</h2>\n" + left_out(g, p);
    out += "<script>" + std::string(k_script) + "</script>\n</body></html>\n";
    return out;
}

} // namespace skforge::fusion
