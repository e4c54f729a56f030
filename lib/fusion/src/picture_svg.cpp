// SPDX-License-Identifier: Apache-2.0
// skforge's own layout of the plan's picture, for when Graphviz is not installed: one lane per
// stream, one column per operator in drawing order, SuperKernels as boxes around their columns,
// edges as curves, and a legend. Every coordinate is an integer, so the text is deterministic.
#include "skforge/fusion/picture.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

namespace skforge::fusion {

namespace {

constexpr int k_left = 90; // lane labels
constexpr int k_top = 30;  // title
constexpr int k_node_w = 150;
constexpr int k_node_h = 56;
constexpr int k_gap = 56;    // between columns: room for edge labels
constexpr int k_header = 38; // above the nodes of a lane: SuperKernel labels, arcs
constexpr int k_lane_h = k_header + k_node_h + 24;
constexpr int k_line_h = 12; // text line
constexpr int k_char_w = 6;  // a character of the 10px font, about
constexpr int k_legend_row = 16;

// The column of each node: after the nodes it has an edge from and the one before it on its
// lane, so concurrent streams share columns; a SuperKernel (or a run of left-out operators)
// starts after everything before it, so a box holds only its own operators.
std::vector<std::size_t> columns(const Picture& pic) {
    std::vector<std::vector<std::size_t>> from(pic.nodes.size());
    for (const auto& e : pic.edges)
        if (e.from < e.to)
            from[e.to].push_back(e.from);
    std::vector<std::size_t> col(pic.nodes.size(), 0);
    std::vector<std::size_t> lane_next(pic.streams.size(), 0);
    std::size_t base = 0, end = 0; // first column of the current block; one past the last used
    int block = pic.nodes.empty() ? -1 : pic.nodes[0].cluster;
    for (std::size_t n = 0; n < pic.nodes.size(); ++n) {
        // An operator beside the cores stays in the block it runs in.
        if (!pic.nodes[n].beside && pic.nodes[n].cluster != block)
            base = end, block = pic.nodes[n].cluster;
        std::size_t c = std::max(base, lane_next[pic.nodes[n].lane]);
        for (auto f : from[n])
            c = std::max(c, col[f] + 1);
        col[n] = c;
        lane_next[pic.nodes[n].lane] = c + 1;
        end = std::max(end, c + 1);
    }
    return col;
}

int column_x(std::size_t col) {
    return k_left + 20 + static_cast<int>(col) * (k_node_w + k_gap);
}

int lane_top(std::size_t lane) {
    return k_top + static_cast<int>(lane) * k_lane_h;
}

int node_y(const PictureNode& n) {
    return lane_top(n.lane) + k_header;
}

// At most `chars` characters (code points) of display text, "…" marking a cut.
std::string fit(const std::string& s, int chars) {
    std::size_t count = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if ((static_cast<unsigned char>(s[i]) & 0xc0) == 0x80)
            continue;
        if (static_cast<int>(count++) == chars - 1) {
            std::size_t rest = 0;
            for (std::size_t k = i; k < s.size(); ++k)
                rest += (static_cast<unsigned char>(s[k]) & 0xc0) != 0x80 ? 1u : 0u;
            return rest <= 1 ? s : s.substr(0, i) + "\xe2\x80\xa6";
        }
    }
    return s;
}

std::string num(int v) {
    return std::to_string(v);
}

std::string text(int x, int y, const std::string& s, const std::string& attrs = "") {
    return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\"" + attrs + ">" + xml_escaped(s) +
           "</text>";
}

std::string stroke_attrs(const EdgeStyle& st) {
    std::string out = " stroke=\"" + std::string(st.color) + "\"";
    switch (st.line) {
    case Line::dashed:
        return out + " stroke-width=\"1.4\" stroke-dasharray=\"6 4\"";
    case Line::dotted:
        return out + " stroke-width=\"1.6\" stroke-dasharray=\"2 3\"";
    case Line::bold:
        return out + " stroke-width=\"2.6\"";
    default:
        return out + " stroke-width=\"1.2\"";
    }
}

std::string markers() {
    std::string out = "<defs>";
    for (const auto& st : edge_styles())
        out += "<marker id=\"arrow-" + std::string(st.name) +
               "\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerUnits=\"userSpaceOnUse\" "
               "markerWidth=\"9\" markerHeight=\"9\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 "
               "z\" fill=\"" +
               std::string(st.color) + "\"/></marker>";
    return out + "</defs>";
}

std::string lanes(const Picture& pic, int width) {
    std::string out;
    for (std::size_t l = 0; l < pic.streams.size(); ++l)
        out += "<g class=\"lane\"><rect x=\"0\" y=\"" + num(lane_top(l)) + "\" width=\"" +
               num(width) + "\" height=\"" + num(k_lane_h) + "\" fill=\"" +
               (l % 2 ? "#ffffff" : "#f6f7f9") + "\"/>" +
               text(8, lane_top(l) + k_header + k_node_h / 2 + 4,
                    "stream " + std::to_string(pic.streams[l]), " font-weight=\"bold\"") +
               "</g>";
    return out;
}

std::string cluster(const Picture& pic, const std::vector<std::size_t>& col, std::size_t c) {
    std::size_t first = SIZE_MAX, last = 0, top = pic.streams.size(), bottom = 0;
    for (std::size_t n = 0; n < pic.nodes.size(); ++n)
        if (pic.nodes[n].cluster == static_cast<int>(c)) {
            first = std::min(first, col[n]), last = std::max(last, col[n]);
            top = std::min(top, pic.nodes[n].lane), bottom = std::max(bottom, pic.nodes[n].lane);
        }
    if (first == SIZE_MAX)
        return "";
    const auto& cl = pic.clusters[c];
    int x0 = column_x(first) - 14, x1 = column_x(last) + k_node_w + 14;
    int y0 = lane_top(top) + 4, y1 = lane_top(bottom) + k_header + k_node_h + 12;
    int chars = (x1 - x0 - 8) / k_char_w;
    return "<g class=\"cluster\"><title>" + xml_escaped(cl.tooltip) + "</title><rect x=\"" +
           num(x0) + "\" y=\"" + num(y0) + "\" width=\"" + num(x1 - x0) + "\" height=\"" +
           num(y1 - y0) + "\" rx=\"10\" fill=\"none\" stroke=\"#34495e\" stroke-width=\"1.5\"/>" +
           text(x0 + 6, y0 + 13, fit(cl.lines[0], chars), " font-weight=\"bold\"") +
           text(x0 + 6, y0 + 26, fit(cl.lines[1], chars)) + "</g>";
}

std::string node(const Picture& pic, const std::vector<std::size_t>& col, std::size_t n) {
    const auto& nd = pic.nodes[n];
    int x = column_x(col[n]), y = node_y(nd);
    std::string out = "<g class=\"node\" id=\"n" + num(static_cast<int>(n)) + "\"><title>" +
                      xml_escaped(nd.tooltip) + "</title><rect x=\"" + num(x) + "\" y=\"" + num(y) +
                      "\" width=\"" + num(k_node_w) + "\" height=\"" + num(k_node_h) +
                      "\" rx=\"6\" fill=\"" + std::string(lane_fill(nd.lane)) +
                      "\" stroke=\"#34495e\"" +
                      (nd.cluster < 0 ? " stroke-dasharray=\"5 3\"" : "") + "/>";
    int first = y + (k_node_h - static_cast<int>(nd.lines.size()) * k_line_h) / 2 + 9;
    for (std::size_t k = 0; k < nd.lines.size(); ++k)
        out +=
            text(x + k_node_w / 2, first + static_cast<int>(k) * k_line_h,
                 fit(nd.lines[k], (k_node_w - 8) / k_char_w),
                 std::string(" text-anchor=\"middle\"") + (k == 0 ? " font-weight=\"bold\"" : "") +
                     (k == 3 ? " fill=\"#a93226\"" : ""));
    return out + "</g>";
}

// A curve from the right side of one node to the left side of the other; `shift` moves
// parallel edges apart. Along one lane past other columns it arcs over the lane's nodes.
std::string edge(const Picture& pic, const std::vector<std::size_t>& col, const PictureEdge& e,
                 int shift) {
    const auto& st = edge_style(e.kind);
    const auto &a = pic.nodes[e.from], &b = pic.nodes[e.to];
    int x1 = column_x(col[e.from]) + k_node_w, y1 = node_y(a) + k_node_h / 2 + shift;
    int x2 = column_x(col[e.to]), y2 = node_y(b) + k_node_h / 2 + shift;
    int cx1, cy1, cx2, cy2;
    auto span = static_cast<int>(col[e.to]) - static_cast<int>(col[e.from]);
    if (a.lane == b.lane && span > 1) {
        int h = 44 + 4 * std::min(span, 10);
        cx1 = x1 + 40, cy1 = y1 - h, cx2 = x2 - 40, cy2 = y2 - h;
    } else {
        int dx = std::max(20, (x2 - x1) / 2);
        cx1 = x1 + dx, cy1 = y1, cx2 = x2 - dx, cy2 = y2;
    }
    std::string out = "<g class=\"edge " + std::string(st.name) + "\"><title>" +
                      xml_escaped(e.tooltip.empty() ? std::string(st.legend) : e.tooltip) +
                      "</title><path d=\"M" + num(x1) + "," + num(y1) + " C" + num(cx1) + "," +
                      num(cy1) + " " + num(cx2) + "," + num(cy2) + " " + num(x2) + "," + num(y2) +
                      "\" fill=\"none\"" + stroke_attrs(st) + " marker-end=\"url(#arrow-" +
                      std::string(st.name) + ")\"/>";
    if (!e.label.empty()) {
        // The curve's midpoint: (P0 + 3 P1 + 3 P2 + P3) / 8.
        int mx = (x1 + 3 * cx1 + 3 * cx2 + x2) / 8, my = (y1 + 3 * cy1 + 3 * cy2 + y2) / 8 - 3;
        out += text(mx, my, fit(e.label, 24),
                    " text-anchor=\"middle\" font-size=\"9\" fill=\"" + std::string(st.color) +
                        "\" stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\"");
    }
    return out + "</g>";
}

std::string edges(const Picture& pic, const std::vector<std::size_t>& col) {
    std::string out;
    std::map<std::pair<std::size_t, std::size_t>, int> seen; // parallel edges so far
    for (const auto& e : pic.edges) {
        if (edge_style(e.kind).line == Line::invisible)
            continue;
        int k = seen[{e.from, e.to}]++;
        int shift = (k % 2 ? -1 : 1) * ((k + 1) / 2) * 7;
        out += edge(pic, col, e, shift);
    }
    return out;
}

std::string legend(int y) {
    std::string out = "<g class=\"legend\">" + text(8, y, "legend", " font-weight=\"bold\"");
    auto box = [&](int row, bool dashed, const std::string& what) {
        int ry = y + row * k_legend_row;
        out += "<rect x=\"20\" y=\"" + num(ry - 9) + "\" width=\"40\" height=\"12\" rx=\"3\" " +
               "fill=\"" + std::string(lane_fill(0)) + "\" stroke=\"#34495e\"" +
               (dashed ? " stroke-dasharray=\"5 3\"" : "") + "/>" + text(70, ry + 1, what);
    };
    box(1, false, "operator fused into the SuperKernel around it (name, OpType, stream)");
    box(2, true, "operator left out of every SuperKernel, with its reason code");
    int row = 3;
    for (const auto& st : edge_styles()) {
        if (st.line == Line::invisible)
            continue;
        int ry = y + row++ * k_legend_row - 3;
        out += "<path d=\"M20," + num(ry) + " L60," + num(ry) + "\"" + stroke_attrs(st) +
               " marker-end=\"url(#arrow-" + std::string(st.name) + ")\"/>" +
               text(70, ry + 4, std::string(st.legend));
    }
    return out + "</g>";
}

int legend_rows() {
    int rows = 3;
    for (const auto& st : edge_styles())
        rows += st.line == Line::invisible ? 0 : 1;
    return rows;
}

} // namespace

std::string picture_svg(const Picture& pic) {
    auto col = columns(pic);
    std::size_t used = 0;
    for (auto c : col)
        used = std::max(used, c + 1);
    int width = std::max(column_x(used) + 20, 640);
    int lanes_bottom = lane_top(pic.streams.size());
    int height = lanes_bottom + 30 + legend_rows() * k_legend_row;
    std::string out =
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" +
        num(height) + "\" viewBox=\"0 0 " + num(width) + " " + num(height) +
        "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"10\">" + "<title>" +
        xml_escaped("plan of graph " + pic.title) + "</title>" + markers() +
        "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>" +
        text(8, 18, "plan of graph " + pic.title, " font-size=\"13\" font-weight=\"bold\"");
    if (pic.nodes.empty())
        out += text(8, k_top + 20, "no operators");
    out += lanes(pic, width);
    for (std::size_t c = 0; c < pic.clusters.size(); ++c)
        out += cluster(pic, col, c);
    for (std::size_t n = 0; n < pic.nodes.size(); ++n)
        out += node(pic, col, n);
    out += edges(pic, col) + legend(lanes_bottom + 24);
    return out + "</svg>\n";
}

} // namespace skforge::fusion
