#pragma once

#include "skforge/fusion/plan.hpp"

#include <string>

namespace skforge::fusion {

/// The plan for people: segments with their operators, then everything left out and why.
std::string plan_text(const graph::Graph& g, const Plan& p);

/// The plan as JSON text (share/doc/plan-format.md): deterministic, one operator per line.
std::string plan_json(const graph::Graph& g, const Plan& p);

/// The plan as Graphviz: one cluster per segment, left-out operators dashed, dependency edges.
std::string plan_dot(const graph::Graph& g, const Plan& p);

} // namespace skforge::fusion
