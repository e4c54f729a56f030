// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the whole of `skc check` and `skc plan` from disk, as the app runs them: the
// input is a graph (before a line "---8<---") and the kernel metadata it may name as k.json
// (after it), written into a directory beside a kernel binary k.o; then the graph is loaded
// (reading the metadata and hashing the binary), validated, planned in full and rendered as
// text, JSON and DOT.
#include "fuzz_dir.hpp"
#include "skforge/fusion/plan.hpp"
#include "skforge/fusion/report.hpp"
#include "skforge/graph/graph.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string dir = skforge::fuzz::scratch_dir() + "/graph";
    static const bool seeded = [] {
        skforge::fuzz::put(dir + "/k.o", "kernel object");
        return true;
    }();
    (void)seeded;
    auto [graph, meta] =
        skforge::fuzz::split_input(std::string_view(reinterpret_cast<const char*>(data), size));
    skforge::fuzz::put(dir + "/graph.yaml", graph);
    skforge::fuzz::put(dir + "/k.json", meta);
    skforge::graph::Diagnostics diags;
    auto g = skforge::graph::load_graph(dir + "/graph.yaml", diags);
    if (!diags.has_errors()) {
        auto deps = skforge::graph::dependencies(g);
        skforge::graph::validate_graph(g, deps, diags);
        skforge::graph::Diagnostics plan_diags;
        auto plan =
            skforge::fusion::make_plan(g, deps, plan_diags, skforge::fusion::PlanDepth::full);
        if (!diags.has_errors() && !plan_diags.has_errors()) {
            (void)skforge::fusion::plan_text(g, plan);
            (void)skforge::fusion::plan_json(g, plan);
            (void)skforge::fusion::plan_dot(g, plan);
        }
        (void)plan_diags.format();
    }
    (void)diags.format();
    return 0;
}
