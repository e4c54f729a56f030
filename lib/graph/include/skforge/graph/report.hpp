// SPDX-License-Identifier: Apache-2.0
#pragma once

// What `skc check` and `skc plan` say of a graph they loaded (raw text: the caller decides how
// safely it is printed). The diagnostics themselves are Diagnostics::format().
#include "skforge/graph/diagnostics.hpp"
#include "skforge/graph/graph.hpp"

#include <string>

namespace skforge::graph::report {

/// "PATH: valid: N operators, M scopes, K kernel metadata files".
std::string check_text(const std::string& path, const Graph& g);

/// "PATH: N error(s)", after the diagnostics of a graph that is not valid.
std::string errors_text(const std::string& path, const Diagnostics& diags);

} // namespace skforge::graph::report
