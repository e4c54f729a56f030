// Golden files for the NPU backend: the AscendC entries skc writes for the example graphs. When a
// change to the generator is intended, regenerate them with SKFORGE_UPDATE_GOLDEN=1 and review
// the diff.
#include "skforge/codegen/ascendc.hpp"
#include "skforge/graph/graph.hpp"
#include "skforge/support/atomic_file.hpp"
#include "skforge/support/file.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>

using namespace skforge;

namespace {

std::string entry_for(const std::string& example, const std::string& segment,
                      const codegen::NpuTarget& target) {
    graph::Diagnostics diags;
    auto g = graph::load_graph(std::string(SKFORGE_SOURCE_DIR) + "/share/skforge/examples/" +
                                   example + "/graph.yaml",
                               diags);
    graph::validate_graph(g, diags);
    auto plan = fusion::make_plan(g, diags);
    REQUIRE_FALSE(diags.has_errors());
    for (const auto& s : plan.segments)
        if (s.name == segment)
            return codegen::npu_entry_source(g, s, target);
    FAIL("no segment " << segment);
    return "";
}

void check_golden(const std::string& name, const std::string& text) {
    std::string path = std::string(SKFORGE_SOURCE_DIR) + "/test/golden/" + name + ".golden";
    if (std::getenv("SKFORGE_UPDATE_GOLDEN") != nullptr) {
        support::AtomicFile f(path, 0644);
        f.write(text);
        f.commit();
    }
    CHECK(text == support::read_file(path));
}

} // namespace

TEST_CASE("ascendc golden: moe_block sk2 (early-start, dcci before QuantMatmul)",
          "[codegen][ascendc]") {
    check_golden("moe_block_sk2_dav-2201.cpp",
                 entry_for("moe_block", "sk2", {"dav-2201", "Ascend910B1", ""}));
}

TEST_CASE("ascendc golden: two_stream sk_dual (an event pair between streams)",
          "[codegen][ascendc]") {
    check_golden("two_stream_sk_dual_dav-3510.cpp",
                 entry_for("two_stream", "sk_dual", {"dav-3510", "Ascend910_9391", ""}));
}

TEST_CASE("ascendc golden: tbe_cut's first split (vector and cube barriers)",
          "[codegen][ascendc]") {
    check_golden("tbe_cut_sk_attn_split_0_1_dav-2201.cpp",
                 entry_for("tbe_cut", "sk_attn_split_0_1", {"dav-2201", "Ascend910B1", ""}));
}

TEST_CASE("ascendc: the helpers header and the sync area", "[codegen][ascendc]") {
    std::string h = codegen::npu_helpers_header();
    CHECK_THAT(h, Catch::Contains("__aicore__ inline void Arrive(GM_ADDR sync"));
    CHECK_THAT(h, Catch::Contains("__aicore__ inline void Wait(GM_ADDR sync"));
    check_golden("skforge_superkernel.h", h);
}
