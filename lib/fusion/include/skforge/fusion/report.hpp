// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/fusion/picture.hpp"
#include "skforge/fusion/plan.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace skforge::fusion {

/// The plan for people: segments with their operators, then everything left out and why.
std::string plan_text(const graph::Graph& g, const Plan& p);

/// The plan as JSON text (share/doc/plan-format.md): deterministic, one operator per line.
std::string plan_json(const graph::Graph& g, const Plan& p);

/// The same text, handed to `sink` piece by piece in order (written on every core, without
/// holding the whole text: a plan of a hundred thousand operators is about 100 MB).
void plan_json(const graph::Graph& g, const Plan& p,
               const std::function<void(std::string_view)>& sink);

/// The plan as Graphviz DOT (picture_dot of plan_picture): one cluster per SuperKernel with one
/// per stream inside, left-out operators dashed with their reason, and typed edges.
std::string plan_dot(const graph::Graph& g, const Plan& p);

/// The plan's picture as a standalone SVG document laid out as `layout` says (layout_svg).
std::string plan_svg(const graph::Graph& g, const Plan& p, Layout layout);

/// Most operators plan_html draws; a larger plan gets the tables only.
inline constexpr std::size_t k_html_picture_max_nodes = 20000;

/// The plan as one self-contained HTML page (no external resources): the picture as inline SVG
/// laid out as `layout` says, the SuperKernel, sub-kernel, barrier, event, memory and code
/// layout tables, every left-out operator's reason, and a filter over all of them.
std::string plan_html(const graph::Graph& g, const Plan& p, Layout layout);

/// The forms `skc plan --format` writes.
enum class PlanFormat { text, json, dot, svg, html };

/// The format named `name` (text, json, dot, svg or html), or nullopt.
std::optional<PlanFormat> parse_plan_format(std::string_view name);

/// The layout named `name` (auto, dot or builtin), or nullopt.
std::optional<Layout> parse_layout(std::string_view name);

/// The plan in `format` (plan_text, plan_json, plan_dot, plan_svg or plan_html), handed to
/// `sink` in order; svg and html are laid out as `layout` says.
void write_plan(const graph::Graph& g, const Plan& p, PlanFormat format, Layout layout,
                const std::function<void(std::string_view)>& sink);

} // namespace skforge::fusion
