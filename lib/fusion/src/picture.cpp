// SPDX-License-Identifier: Apache-2.0
// The plan as a picture: one model (nodes, SuperKernel clusters, typed edges, stream lanes)
// built from the plan, written as DOT here and as SVG by picture_svg.cpp.
#include "skforge/fusion/picture.hpp"

#include "report_counts.hpp"

#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/process.hpp"
#include "skforge/support/temp_dir.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <map>
#include <unordered_map>

namespace skforge::fusion {

namespace {

// Length of the UTF-8 sequence at `s[i]` when it is valid and an XML character, else 0.
std::size_t utf8_length(std::string_view s, std::size_t i) {
    auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) {
        return i + k < s.size() && byte(k) >= lo && byte(k) <= hi;
    };
    unsigned c = byte(0);
    if (c >= 0xc2 && c <= 0xdf)
        return cont(1) ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        if (!cont(1, lo, hi) || !cont(2))
            return 0;
        // U+FFFE and U+FFFF are no characters in XML.
        return c == 0xef && byte(1) == 0xbf && byte(2) >= 0xbe ? 0 : 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
    }
    return 0;
}

constexpr std::array<EdgeStyle, 9> k_edge_styles{{
    {EdgeKind::data, "data", "data: a tensor one writes and the other reads", "#555555",
     Line::solid},
    {EdgeKind::stream_order, "stream-order", "the next operator on the same stream", "#999999",
     Line::invisible},
    {EdgeKind::event, "event", "event between launches (record, then wait)", "#c0392b",
     Line::dashed},
    {EdgeKind::event_pair, "event-pair", "event inside a SuperKernel: a set/wait flag pair",
     "#e67e22", Line::dashed},
    {EdgeKind::barrier_vector, "barrier-vector", "barrier over the vector cores", "#2471a3",
     Line::bold},
    {EdgeKind::barrier_cube, "barrier-cube", "barrier over the cube cores", "#7d3c98", Line::bold},
    {EdgeKind::barrier_full, "barrier-full", "barrier over all cores", "#17202a", Line::bold},
    {EdgeKind::early_start, "early-start",
     "early-start pair: the waiter starts while the setter finishes", "#229954", Line::dotted},
    {EdgeKind::notify_wait, "notify-wait",
     "notify/wait with an operator beside the AI cores (AICPU tiling, prefetch): a flag in memory",
     "#1abc9c", Line::dashed},
}};

// Fill colours of the stream lanes, by lane.
constexpr std::array<std::string_view, 8> k_lane_fills{"#dbe9f6", "#fde2c8", "#d9f0d3", "#f2d7ee",
                                                       "#fff2b3", "#d6d6f5", "#f8d0d0", "#d0f0f0"};

std::string stream_text(std::uint32_t stream) {
    return "stream " + std::to_string(stream);
}

std::string bytes_text(std::uint64_t n) {
    return std::to_string(n) + " B";
}

// The order operators are drawn in: execution order, with a SuperKernel's operators together
// where it is launched (at its first operator). Operators beside the AI cores (AICPU tiling,
// prefetch) that run between its members stay among them: they run during the launch.
std::vector<int> drawing_order(const graph::Graph& g, const Plan& p) {
    std::vector<int> order;
    order.reserve(g.ops.size());
    std::vector<char> placed(g.ops.size(), 0);
    auto place = [&](std::size_t i) {
        if (!placed[i])
            order.push_back(static_cast<int>(i)), placed[i] = 1;
    };
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        int seg = p.ops[i].segment;
        if (seg < 0 || placed[i]) {
            place(i);
            continue;
        }
        auto last = static_cast<std::size_t>(p.segments[static_cast<std::size_t>(seg)].ops.back());
        for (std::size_t k = i; k <= last; ++k)
            if (p.ops[k].segment == seg ||
                (p.ops[k].segment < 0 && graph::runs_beside_cores(g.ops[k].kind)))
                place(k);
    }
    return order;
}

PictureNode make_node(const graph::Graph& g, const Plan& p, int i) {
    const auto& op = g.ops[static_cast<std::size_t>(i)];
    const auto& r = p.ops[static_cast<std::size_t>(i)];
    PictureNode n;
    n.op = i;
    n.stream = op.stream_id;
    n.cluster = r.segment;
    n.beside = graph::runs_beside_cores(op.kind);
    std::string type = display_text(op.type);
    if (n.beside)
        type += (type.empty() ? "(" : " (") + std::string(graph::op_kind_name(op.kind)) + ")";
    n.lines = {display_text(op.name), type, stream_text(op.stream_id)};
    n.tooltip = n.lines[0] + " (" + n.lines[1] + ", " + n.lines[2] + ")";
    if (r.segment >= 0) {
        n.tooltip +=
            " in SuperKernel " + display_text(p.segments[static_cast<std::size_t>(r.segment)].name);
    } else {
        n.lines.emplace_back(reason_code(*r.reason));
        n.tooltip += " left out: " + n.lines.back() + ": " + display_text(r.detail);
    }
    return n;
}

PictureCluster make_cluster(const Segment& s, int index) {
    PictureCluster c;
    c.segment = index;
    c.lines = {display_text(s.name),
               "arena peak " + bytes_text(s.arena_peak) + " (lower bound " +
                   bytes_text(s.arena_lower_bound) + ")",
               launch_text(s), "workspace " + bytes_text(s.workspace_total)};
    c.tooltip = "SuperKernel " + c.lines[0] + " (scope " + display_text(s.scope) +
                "): " + c.lines[1] + "; " + c.lines[2] + "; " + c.lines[3];
    if (s.split_reason)
        c.tooltip += "; split: " + std::string(reason_code(*s.split_reason)) + ": " +
                     display_text(s.split_detail);
    return c;
}

// Builds the picture's edges; `node` maps an operator to its node.
class EdgeFinder {
  public:
    EdgeFinder(const graph::Graph& g, const Plan& p, Picture& pic, const std::vector<int>& node)
        : m_g(g), m_p(p), m_pic(pic), m_node(node) {}

    void data_edges(const graph::Dependencies& deps) {
        for (std::size_t i = 0; i < m_g.ops.size(); ++i) {
            std::map<int, std::string> from; // producer -> tensors, in producer order
            auto sources = deps.sources(i);
            for (std::size_t j = 0; j < sources.size(); ++j) {
                if (sources[j] < 0)
                    continue;
                auto& tensors = from[deps.output(sources[j]).first];
                tensors += (tensors.empty() ? "" : ", ") + display_text(m_g.ops[i].inputs[j].name);
            }
            for (auto& [producer, tensors] : from)
                add(producer, static_cast<int>(i), EdgeKind::data, "", "tensor " + tensors);
        }
    }

    // Graph events; those with an operator beside the cores are drawn as notify/wait instead.
    void event_edges() {
        for (const auto& e : event_links(m_g)) {
            if (find_notify_wait(m_p, e) != nullptr)
                continue;
            bool paired = inside_pair(m_p, e);
            std::string label = "event " + std::to_string(e.event);
            add(e.sender, e.receiver, paired ? EdgeKind::event_pair : EdgeKind::event, label,
                label + (paired ? ": set/wait flag inside the SuperKernel"
                                : ": recorded, then waited for"));
        }
    }

    void notify_wait_edges() {
        for (const auto& nw : m_p.notify_waits) {
            std::string label = "notify/wait " + std::to_string(nw.event);
            add(nw.notifier, nw.waiter, EdgeKind::notify_wait, label,
                display_text(label + ": " +
                             notify_wait_end(m_p, nw.notify_segment, nw.notify_slot, "notify") +
                             ", " + notify_wait_end(m_p, nw.wait_segment, nw.wait_slot, "wait")));
        }
    }

    void segment_edges() {
        for (const auto& s : m_p.segments) {
            auto at = [&](int pos) { return s.ops[static_cast<std::size_t>(pos)]; };
            for (const auto& b : s.barriers) {
                if (b.before < 1)
                    continue;
                auto kind = b.kind == BarrierKind::vector ? EdgeKind::barrier_vector
                            : b.kind == BarrierKind::cube ? EdgeKind::barrier_cube
                                                          : EdgeKind::barrier_full;
                std::string label = "barrier " + std::string(barrier_kind_name(b.kind));
                add(at(b.before - 1), at(b.before), kind, label,
                    label + " before " + m_pic.nodes[node(at(b.before))].lines[0]);
            }
            for (const auto& [set, wait] : s.early_start_pairs)
                add(at(set), at(wait), EdgeKind::early_start, "early start",
                    "early start: " + m_pic.nodes[node(at(set))].lines[0] + " sets, " +
                        m_pic.nodes[node(at(wait))].lines[0] + " waits");
        }
    }

    // Consecutive nodes of one lane, in drawing order.
    void stream_order_edges() {
        std::map<std::uint32_t, std::size_t> last;
        for (std::size_t n = 0; n < m_pic.nodes.size(); ++n) {
            auto [it, first] = last.emplace(m_pic.nodes[n].stream, n);
            if (!first) {
                m_pic.edges.push_back({it->second, n, EdgeKind::stream_order, "", ""});
                it->second = n;
            }
        }
    }

  private:
    std::size_t node(int op) const {
        return static_cast<std::size_t>(m_node[static_cast<std::size_t>(op)]);
    }

    void add(int from, int to, EdgeKind kind, std::string label, std::string tooltip) {
        m_pic.edges.push_back({node(from), node(to), kind, std::move(label), std::move(tooltip)});
    }

    const graph::Graph& m_g;
    const Plan& m_p;
    Picture& m_pic;
    const std::vector<int>& m_node;
};

// `s` inside a DOT string: `"` escaped, `&` as an entity, `\` as `backslash`.
std::string dot_escaped(std::string_view s, std::string_view backslash) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        if (c == '"')
            out += "\\\"";
        else if (c == '\\')
            out += backslash;
        else if (c == '&')
            out += "&amp;";
        else
            out += c;
    }
    return out;
}

std::string_view dot_line_style(Line l) {
    switch (l) {
    case Line::solid:
        return "solid";
    case Line::dashed:
        return "dashed";
    case Line::dotted:
        return "dotted";
    case Line::bold:
        return "bold";
    case Line::invisible:
        break;
    }
    return "invis";
}

std::string dot_node(const Picture& pic, std::size_t n, std::string_view indent) {
    const auto& node = pic.nodes[n];
    std::string style = node.cluster >= 0 ? "rounded,filled" : "rounded,filled,dashed";
    return std::string(indent) + "n" + std::to_string(n) + " [label=" + dot_quoted(node.lines) +
           ", tooltip=" + dot_tooltip(node.tooltip) + ", style=\"" + style + "\", fillcolor=\"" +
           std::string(lane_fill(node.lane)) + "\"];\n";
}

// One cluster per SuperKernel holding one cluster per stream: lanes inside the box.
std::string dot_cluster(const Picture& pic, std::size_t c) {
    const auto& cl = pic.clusters[c];
    std::string out = "  subgraph cluster_sk" + std::to_string(c) +
                      " {\n    label=" + dot_quoted(cl.lines) +
                      ";\n    tooltip=" + dot_tooltip(cl.tooltip) +
                      ";\n    style=rounded;\n    color=\"#34495e\";\n";
    for (std::size_t lane = 0; lane < pic.streams.size(); ++lane) {
        std::string body;
        for (std::size_t n = 0; n < pic.nodes.size(); ++n)
            if (pic.nodes[n].cluster == static_cast<int>(c) && pic.nodes[n].lane == lane)
                body += dot_node(pic, n, "      ");
        if (body.empty())
            continue;
        out += "    subgraph cluster_sk" + std::to_string(c) + "_lane" + std::to_string(lane) +
               " {\n      label=" + dot_quoted(stream_text(pic.streams[lane])) +
               ";\n      style=dashed;\n      color=\"#aab7b8\";\n" + body + "    }\n";
    }
    return out + "  }\n";
}

// Drops the XML prolog and every comment: what is left is one <svg> element to inline.
std::string inline_svg(const std::string& svg) {
    auto start = svg.find("<svg");
    if (start == std::string::npos)
        return "";
    std::string out;
    for (std::size_t i = start; i < svg.size();) {
        auto c = svg.find("<!--", i);
        if (c == std::string::npos) {
            out.append(svg, i, std::string::npos);
            break;
        }
        out.append(svg, i, c - i);
        auto e = svg.find("-->", c + 4);
        i = e == std::string::npos ? svg.size() : e + 3;
    }
    return out;
}

} // namespace

std::string display_text(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
            ++i;
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
            ++i;
        } else if (auto n = utf8_length(s, i); n > 0) {
            out.append(s, i, n);
            i += n;
        } else {
            out += "\xef\xbf\xbd"; // U+FFFD
            ++i;
        }
    }
    return out;
}

std::string dot_quoted(std::string_view line) {
    return "\"" + dot_escaped(line, "\\\\") + "\"";
}

std::string dot_tooltip(std::string_view text) {
    return "\"" + dot_escaped(text, "\\\\\\\\") + "\"";
}

std::string dot_quoted(std::span<const std::string> lines) {
    std::string out = "\"";
    for (std::size_t k = 0; k < lines.size(); ++k) {
        out += (k ? "\\n" : "") + dot_escaped(lines[k], "\\\\");
    }
    return out + "\"";
}

std::string xml_escaped(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::span<const EdgeStyle> edge_styles() {
    return k_edge_styles;
}

const EdgeStyle& edge_style(EdgeKind k) {
    return k_edge_styles[static_cast<std::size_t>(k)];
}

std::vector<EventLink> event_links(const graph::Graph& g) {
    std::vector<EventLink> links;
    std::unordered_map<std::int64_t, int> sender;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        for (auto e : g.ops[i].recv_events)
            if (auto it = sender.find(e); it != sender.end())
                links.push_back({e, it->second, static_cast<int>(i)});
        for (auto e : g.ops[i].send_events)
            sender.emplace(e, static_cast<int>(i));
    }
    return links;
}

bool inside_pair(const Plan& p, const EventLink& e) {
    int seg = p.ops[static_cast<std::size_t>(e.sender)].segment;
    if (seg < 0 || seg != p.ops[static_cast<std::size_t>(e.receiver)].segment)
        return false;
    const auto& s = p.segments[static_cast<std::size_t>(seg)];
    auto pos = [&](int op) {
        return static_cast<int>(std::find(s.ops.begin(), s.ops.end(), op) - s.ops.begin());
    };
    auto pair = std::pair{pos(e.sender), pos(e.receiver)};
    return std::find(s.event_pairs.begin(), s.event_pairs.end(), pair) != s.event_pairs.end();
}

const NotifyWait* find_notify_wait(const Plan& p, const EventLink& e) {
    for (const auto& nw : p.notify_waits)
        if (nw.event == e.event && nw.notifier == e.sender && nw.waiter == e.receiver)
            return &nw;
    return nullptr;
}

std::string notify_wait_end(const Plan& p, int segment, std::int64_t slot, std::string_view what) {
    if (segment < 0)
        return std::string(what) + " outside the SuperKernels";
    return std::string(what) + " slot at parameter offset " + std::to_string(slot) + " of " +
           p.segments[static_cast<std::size_t>(segment)].name;
}

std::string_view lane_fill(std::size_t lane) {
    return k_lane_fills[lane % k_lane_fills.size()];
}

Picture plan_picture(const graph::Graph& g, const Plan& p) {
    Picture pic;
    pic.title = display_text(g.name);
    for (std::size_t s = 0; s < p.segments.size(); ++s)
        pic.clusters.push_back(make_cluster(p.segments[s], static_cast<int>(s)));
    std::vector<int> node(g.ops.size(), -1);
    for (int i : drawing_order(g, p)) {
        node[static_cast<std::size_t>(i)] = static_cast<int>(pic.nodes.size());
        pic.nodes.push_back(make_node(g, p, i));
        pic.streams.push_back(g.ops[static_cast<std::size_t>(i)].stream_id);
    }
    std::sort(pic.streams.begin(), pic.streams.end());
    pic.streams.erase(std::unique(pic.streams.begin(), pic.streams.end()), pic.streams.end());
    for (auto& n : pic.nodes)
        n.lane = static_cast<std::size_t>(
            std::lower_bound(pic.streams.begin(), pic.streams.end(), n.stream) -
            pic.streams.begin());
    EdgeFinder edges(g, p, pic, node);
    edges.data_edges(graph::dependencies(g));
    edges.event_edges();
    edges.notify_wait_edges();
    edges.segment_edges();
    edges.stream_order_edges();
    return pic;
}

std::string picture_dot(const Picture& pic) {
    std::string out = "digraph " + dot_quoted(pic.title) +
                      " {\n  rankdir=LR;\n  graph [fontname=\"Helvetica\", fontsize=10];\n"
                      "  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n"
                      "  edge [fontname=\"Helvetica\", fontsize=9];\n";
    for (std::size_t c = 0; c < pic.clusters.size(); ++c)
        out += dot_cluster(pic, c);
    for (std::size_t n = 0; n < pic.nodes.size(); ++n)
        if (pic.nodes[n].cluster < 0)
            out += dot_node(pic, n, "  ");
    for (const auto& e : pic.edges) {
        const auto& st = edge_style(e.kind);
        out += "  n" + std::to_string(e.from) + " -> n" + std::to_string(e.to) + " [class=\"" +
               std::string(st.name) + "\", style=" + std::string(dot_line_style(st.line));
        if (st.line == Line::invisible)
            out += ", weight=10";
        else
            out += ", color=\"" + std::string(st.color) + "\"";
        if (!e.label.empty())
            out +=
                ", label=" + dot_quoted(e.label) + ", fontcolor=\"" + std::string(st.color) + "\"";
        if (!e.tooltip.empty())
            out += ", tooltip=" + dot_tooltip(e.tooltip);
        out += "];\n";
    }
    return out + "}\n";
}

std::string layout_svg(const Picture& pic, Layout layout, std::string& used) {
    std::string why;
    if (layout == Layout::automatic && pic.nodes.size() > k_graphviz_max_nodes)
        why = "more than " + std::to_string(k_graphviz_max_nodes) + " operators for Graphviz";
    else if (layout != Layout::builtin) {
        if (auto svg = graphviz_svg(picture_dot(pic), why)) {
            used = "Graphviz dot";
            return *svg;
        }
        if (layout == Layout::graphviz)
            throw support::Error(
                "--layout dot: " + why +
                " (install Graphviz, Debian package graphviz, or use --layout builtin)");
    }
    used = why.empty() ? "skforge's built-in layout" : "skforge's built-in layout (" + why + ")";
    return picture_svg(pic);
}

std::optional<std::string> graphviz_svg(const std::string& dot, std::string& why) {
    try {
        support::TempDir tmp(support::temp_parent(), "skc-plan-");
        std::string in = tmp.path() + "/plan.dot", out = tmp.path() + "/plan.svg";
        {
            support::UniqueFd fd(::open(in.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
            if (!fd)
                throw support::io_error("cannot create", in, errno);
            support::write_all(fd.get(), dot, in);
        }
        auto r = support::run_process({"dot", "-Tsvg", "-o", out, in});
        if (r.exit_code != 0) {
            why = "Graphviz 'dot' failed (exit " + std::to_string(r.exit_code) + "): " + r.output;
            return std::nullopt;
        }
        auto svg = inline_svg(support::read_file(out));
        if (svg.empty()) {
            why = "Graphviz 'dot' wrote no <svg> element";
            return std::nullopt;
        }
        return svg;
    } catch (const std::exception& e) {
        why = e.what();
        return std::nullopt;
    }
}

} // namespace skforge::fusion
