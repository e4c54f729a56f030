// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/fusion/plan.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::fusion {

/// `s` made safe to show anywhere: valid UTF-8 (an invalid byte becomes U+FFFD) with every
/// control character written as `\xNN`. Names in a graph are arbitrary text.
std::string display_text(std::string_view s);

/// `lines` as one DOT double-quoted string: each line's `"` and `\` escaped, `&` written as
/// `&amp;` (Graphviz turns entities in labels into characters), lines joined by DOT's `\n`.
/// Meant for lines already passed through display_text.
std::string dot_quoted(std::span<const std::string> lines);
/// The same for one line.
std::string dot_quoted(std::string_view line);
/// `text` as a DOT tooltip: Graphviz unescapes a tooltip twice (escString, then `\N` and its
/// kin), so a backslash is written as four.
std::string dot_tooltip(std::string_view text);

/// `s` with `&`, `<`, `>`, `"` and `'` written as character references: safe as XML/HTML text
/// and inside a quoted attribute.
std::string xml_escaped(std::string_view s);

/// One graph event: who records it and who waits for it.
struct EventLink {
    std::int64_t event = 0;
    int sender = -1;   ///< index into Graph::ops
    int receiver = -1; ///< index into Graph::ops
};

/// Every received event with its sender (the first sender before the receiver, as
/// graph::dependencies pairs them), in receiver order.
std::vector<EventLink> event_links(const graph::Graph& g);

/// Whether link `e` became a set/wait flag pair inside a SuperKernel of `p`.
bool inside_pair(const Plan& p, const EventLink& e);

/// The notify/wait pair link `e` became (an event with an operator beside the AI cores), or
/// nullptr.
const NotifyWait* find_notify_wait(const Plan& p, const EventLink& e);

/// One end of a notify/wait pair for people (`what` is "notify" or "wait"): its flag-address
/// slot in its SuperKernel, or that it is outside every SuperKernel. Names are not escaped.
std::string notify_wait_end(const Plan& p, int segment, std::int64_t slot, std::string_view what);

/// What an edge of the picture stands for. Each kind has one style (edge_style); a new kind is a
/// value here, a row in the style table and the loop in plan_picture that finds its edges.
enum class EdgeKind {
    data,           ///< a tensor written by one operator and read by the other
    stream_order,   ///< the next operator on the same stream (invisible: keeps lanes straight)
    event,          ///< a graph event between launches (record -> wait)
    event_pair,     ///< an event turned into a set/wait flag pair inside a SuperKernel
    barrier_vector, ///< a vector-core barrier between two sub-kernels
    barrier_cube,   ///< a cube-core barrier
    barrier_full,   ///< a barrier over all cores
    early_start,    ///< an early-start set/wait pair
    notify_wait,    ///< an event with an operator beside the AI cores: memory notify/wait
};

/// How an edge is drawn.
enum class Line { solid, dashed, dotted, bold, invisible };

/// The look of one edge kind, shared by the DOT and the built-in SVG.
struct EdgeStyle {
    EdgeKind kind;
    std::string_view name;   ///< short, used as CSS class and legend key, e.g. "barrier-cube"
    std::string_view legend; ///< what it means, for the legend
    std::string_view color;  ///< #rrggbb
    Line line;
};

/// Every edge kind's style, in EdgeKind order.
std::span<const EdgeStyle> edge_styles();
/// The style of `k`.
const EdgeStyle& edge_style(EdgeKind k);

/// The fill colour (#rrggbb) of the operators on lane `lane`, shared by the DOT and the SVG.
std::string_view lane_fill(std::size_t lane);

/// One operator in the picture.
struct PictureNode {
    int op = -1;                    ///< index into Graph::ops
    std::vector<std::string> lines; ///< what the box says (display text): name, type, ...
    std::string tooltip;            ///< display text
    int cluster = -1;               ///< index into Picture::clusters, -1 when left out
    std::uint32_t stream = 0;
    std::size_t lane = 0; ///< index into Picture::streams
    bool beside = false;  ///< runs beside the AI cores (AICPU tiling, prefetch)
};

/// One SuperKernel: a box around its operators.
struct PictureCluster {
    int segment = -1;               ///< index into Plan::segments
    std::vector<std::string> lines; ///< name, cores, arena peak, ... (display text)
    std::string tooltip;
};

/// One edge between two nodes.
struct PictureEdge {
    std::size_t from = 0; ///< index into Picture::nodes
    std::size_t to = 0;
    EdgeKind kind = EdgeKind::data;
    std::string label;   ///< drawn beside the edge (display text), may be empty
    std::string tooltip; ///< display text
};

/// The plan as a picture, independent of how it is laid out: nodes in the order they are drawn
/// left to right (a SuperKernel's operators together, where it is launched), its clusters, edges
/// and stream lanes.
struct Picture {
    std::string title; ///< display text
    std::vector<PictureNode> nodes;
    std::vector<PictureCluster> clusters;
    std::vector<PictureEdge> edges;
    std::vector<std::uint32_t> streams; ///< the lanes, sorted
};

/// The picture of plan `p` of graph `g`.
Picture plan_picture(const graph::Graph& g, const Plan& p);

/// The picture as Graphviz DOT (left to right; one cluster per SuperKernel, inside it one per
/// stream; left-out operators dashed with their reason).
std::string picture_dot(const Picture& pic);

/// The picture as a standalone SVG document laid out by skforge itself: one lane per stream,
/// operators in execution order left to right, SuperKernels as boxes, a legend.
std::string picture_svg(const Picture& pic);

/// How to lay out the picture as SVG: with Graphviz when it can be run (else skforge's own),
/// with Graphviz only, or with skforge's own.
enum class Layout { automatic, graphviz, builtin };

/// Most operators `Layout::automatic` hands to Graphviz (its layout time grows fast beyond).
inline constexpr std::size_t k_graphviz_max_nodes = 2000;

/// The picture as one `<svg>` element laid out as `layout` says; `used` tells how it was laid
/// out (and why not by Graphviz, when it was asked for but could not be used). Throws an Error
/// for Layout::graphviz when Graphviz cannot be run or fails.
std::string layout_svg(const Picture& pic, Layout layout, std::string& used);

/// The SVG of `dot` laid out by Graphviz (`dot -Tsvg`, looked up on PATH), as an `<svg>`
/// element without XML declaration or comments; nullopt with `why` set when it cannot be run or
/// fails.
std::optional<std::string> graphviz_svg(const std::string& dot, std::string& why);

} // namespace skforge::fusion
