// Fuzz target: the graph loader (YAML parsers, schema walk), validation and segmentation.
#include "skforge/fusion/plan.hpp"
#include "skforge/graph/graph.hpp"

#include <cstddef>
#include <cstdint>
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
    return 0;
}
