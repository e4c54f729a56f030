// SPDX-License-Identifier: Apache-2.0
#include "skforge/graph/report.hpp"

namespace skforge::graph::report {

std::string check_text(const std::string& path, const Graph& g) {
    return path + ": valid: " + std::to_string(g.ops.size()) + " operators, " +
           std::to_string(g.scopes.size()) + " scopes, " + std::to_string(g.kernels.size()) +
           " kernel metadata files";
}

std::string errors_text(const std::string& path, const Diagnostics& diags) {
    return path + ": " + std::to_string(diags.error_count()) + " error(s)";
}

} // namespace skforge::graph::report
