// SPDX-License-Identifier: Apache-2.0
#pragma once

// compile_inputs over a graph already loaded (compile() has one), for depfile.cpp and compile.cpp.
#include "skforge/compile/compile.hpp"
#include "skforge/graph/graph.hpp"

#include <string>
#include <vector>

namespace skforge::compile {

/// compile_inputs(options) for `g`, loaded from options.graph_path, compiled for `arch`.
std::vector<std::string> compile_inputs(const graph::Graph& g, const std::string& arch,
                                        const CompileOptions& options);

} // namespace skforge::compile
