// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the graph loader (YAML parsers, schema walk), validation and segmentation; and
// the loader's two ways of parsing (whole, and in pieces on several threads) must agree.
#include "graph_dump.hpp"
#include "skforge/fusion/plan.hpp"
#include "skforge/graph/graph.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    skforge::graph::Diagnostics diags;
    auto g = skforge::graph::parse_graph_text(text, "fuzz.yaml", diags);
    if (!diags.has_errors())
        skforge::graph::validate_graph(g, diags);
    if (!diags.has_errors())
        (void)skforge::fusion::make_plan(g, diags);
    (void)diags.format();
    for (std::size_t piece_bytes : {1u, 64u}) {
        std::string whole = skforge::test::dump_graph(text, 0);
        std::string pieces = skforge::test::dump_graph(text, piece_bytes);
        if (whole != pieces) {
            std::fprintf(stderr, "parsed whole:\n%s\nin pieces of %zu bytes:\n%s\n", whole.c_str(),
                         piece_bytes, pieces.c_str());
            std::abort();
        }
    }
    return 0;
}
