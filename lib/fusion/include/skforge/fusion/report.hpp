#pragma once

#include "skforge/fusion/plan.hpp"

#include <functional>
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

/// The plan as Graphviz: one cluster per segment, left-out operators dashed, dependency edges.
std::string plan_dot(const graph::Graph& g, const Plan& p);

} // namespace skforge::fusion
