// SPDX-License-Identifier: Apache-2.0
#include "graph_fixture.hpp"
#include "skforge/fusion/plan.hpp"
#include "skforge/fusion/report.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace skforge;
using kernel::KernelType;
using test::header;
using test::op;

namespace {

// kernels/NAME.json: a SuperKernel sub-kernel of `type` on `block` cores, with a SyncAll of all
// cores when `sync_all`.
void kernel_json(test::GraphFixture& f, const std::string& name, const std::string& type, int block,
                 bool sync_all = false) {
    std::string magic = type == "KERNEL_TYPE_AIV_ONLY"   ? "RT_DEV_BINARY_MAGIC_ELF_AIVEC"
                        : type == "KERNEL_TYPE_AIC_ONLY" ? "RT_DEV_BINARY_MAGIC_ELF_AICUBE"
                                                         : "RT_DEV_BINARY_MAGIC_ELF";
    test::write_text(f.dir / ("kernels/" + name + ".json"),
                     R"({"kernelName":")" + name + R"(","blockDim":)" + std::to_string(block) +
                         R"(,"magic":")" + magic + R"(","sub_operator_kernel_type":")" + type +
                         R"(","supportSuperKernel":1,"sub_op_with_sync_all":)" +
                         (sync_all ? "1" : "0") + "}");
}

// The one segment of `yaml`'s plan, with no diagnostic.
const fusion::Segment& only_segment(test::GraphFixture& f, fusion::Plan& keep,
                                    const std::string& yaml) {
    REQUIRE(f.load(yaml));
    keep = fusion::make_plan(f.graph, f.diags);
    INFO(f.first());
    REQUIRE_FALSE(f.diags.has_errors());
    REQUIRE(keep.segments.size() == 1);
    return keep.segments[0];
}

const std::string k_vec_cube =
    op("a", "vec", "x", "scope: s") + op("b", "cube", "a_out", "scope: s");

} // namespace

TEST_CASE("launch: an NPU plan reports the vendor's launch, a host plan the largest blockDim",
          "[fusion][launch]") {
    // vec: AIV_ONLY on 48 vector cores, cube: AIC_ONLY on 24: a 1:2 launch of 24 blocks.
    test::GraphFixture f;
    fusion::Plan p;
    const auto& s = only_segment(f, p, header() + k_vec_cube);
    CHECK(s.largest_block_dim == 48);
    REQUIRE(s.launch);
    CHECK(s.launch->type == KernelType::mix_aic_1_2);
    CHECK(s.launch->block_dim == 24);
    CHECK_THAT(fusion::plan_text(f.graph, p),
               Catch::Contains("  blockDim 24, MIX, taskRation 1:2, KERNEL_TYPE_MIX_AIC_1_2 "
                               "(largest sub-kernel blockDim 48); barriers"));
    auto seg = nlohmann::json::parse(fusion::plan_json(f.graph, p))["segments"][0];
    CHECK(seg["kernel_meta"]["blockDim"] == 24);
    CHECK(seg["kernel_meta"]["taskRation"] == "1:2");
    CHECK(seg["launch"] == nlohmann::json{{"block_dim", 24},
                                          {"core_type", "MIX"},
                                          {"kernel_type", "KERNEL_TYPE_MIX_AIC_1_2"},
                                          {"largest_sub_block_dim", 48},
                                          {"task_ration", "1:2"}});
    CHECK_THAT(fusion::plan_dot(f.graph, p), Catch::Contains("blockDim 24, MIX, taskRation 1:2"));

    // The host launches every sub-kernel on its own blocks: the SuperKernel's is the largest.
    test::GraphFixture h;
    std::string host = header();
    host.replace(host.find("dav-2201"), 8, "host");
    const auto& hs = only_segment(h, p, host + k_vec_cube);
    CHECK_FALSE(hs.launch);
    CHECK_THAT(fusion::plan_text(h.graph, p),
               Catch::Contains("  blockDim 48, MIX, taskRation 1:2; barriers"));
    seg = nlohmann::json::parse(fusion::plan_json(h.graph, p))["segments"][0];
    CHECK(seg["kernel_meta"]["blockDim"] == 48);
    CHECK(seg["launch"]["kernel_type"].is_null());
}

TEST_CASE("launch: taskRation follows the launch's kernel type, not only the sub-kernels' kinds",
          "[fusion][launch]") {
    // A vector kernel on 8 cores beside a cube one on 24 asks for no more vector cores than cube
    // cores: the vendor launches MIX 1:1 (get_finale_type_and_block_dim), so taskRation is 1:1.
    test::GraphFixture f;
    kernel_json(f, "vec8", "KERNEL_TYPE_AIV_ONLY", 8);
    fusion::Plan p;
    const auto& s = only_segment(
        f, p, header() + op("a", "vec8", "x", "scope: s") + op("b", "cube", "a_out", "scope: s"));
    REQUIRE(s.launch);
    CHECK(s.launch->type == KernelType::mix_aic_1_1);
    CHECK(s.launch->block_dim == 24);
    CHECK(fusion::launch_summary(s).task_ration == "1:1");
    auto meta = nlohmann::json::parse(fusion::kernel_meta_json(f.graph, s));
    CHECK(meta["taskRation"] == "1:1");
    CHECK(meta["blockDim"] == 24);
    // The host metadata keeps the cores pass's summary of the kinds of core.
    CHECK(s.task_ration == "1:2");
    meta = nlohmann::json::parse(fusion::kernel_meta_json(f.graph, s, "host"));
    CHECK(meta["taskRation"] == "1:2");
    CHECK(meta["blockDim"] == 24);
}

TEST_CASE("launch: the sync_all hang check counts the launch's cores", "[fusion][launch]") {
    SECTION("a cube kernel on every block of a 1:2 launch needs no feed") {
        test::GraphFixture f;
        kernel_json(f, "csync", "KERNEL_TYPE_AIC_ONLY", 24, true);
        fusion::Plan p;
        const auto& s = only_segment(f, p,
                                     header() + op("a", "vec", "x", "scope: s") +
                                         op("b", "csync", "a_out", "scope: s"));
        CHECK(s.subs[1].feed_sync_all_cores == 0);
    }
    SECTION("a vector kernel on 40 of a 1:2 launch's 48 vector cores would hang") {
        test::GraphFixture f;
        kernel_json(f, "vsync", "KERNEL_TYPE_AIV_ONLY", 40, true);
        REQUIRE(f.load(header() + op("a", "mix", "x", "scope: s") +
                       op("b", "vsync", "a_out", "scope: s")));
        fusion::make_plan(f.graph, f.diags);
        CHECK_THAT(f.first(), Catch::Contains("'b' synchronises all cores") &&
                                  Catch::Contains("runs on 40 of the 48 cores"));
        test::GraphFixture g;
        kernel_json(g, "vsync", "KERNEL_TYPE_AIV_ONLY", 40, true);
        fusion::Plan p;
        const auto& s = only_segment(g, p,
                                     header("scopes: {s: \"feed-sync-all=1\"}\n") +
                                         op("a", "mix", "x", "scope: s") +
                                         op("b", "vsync", "a_out", "scope: s"));
        CHECK(s.subs[1].feed_sync_all_cores == 8);
    }
}

TEST_CASE("launch: idle cores by the vendor's feed rule", "[fusion][launch]") {
    // A 1:2 launch of 24 blocks has 24 cube and 48 vector cores.
    CHECK(fusion::idle_cores(KernelType::mix_aic_1_2, 24, KernelType::aiv_only, 24) == 24);
    CHECK(fusion::idle_cores(KernelType::mix_aic_1_2, 24, KernelType::mix_aiv_1_0, 48) == 0);
    CHECK(fusion::idle_cores(KernelType::mix_aic_1_2, 24, KernelType::aic_only, 24) == 0);
    CHECK(fusion::idle_cores(KernelType::mix_aic_1_2, 24, KernelType::mix_aic_1_2, 20) == 4);
    CHECK(fusion::idle_cores(KernelType::mix_aiv_1_0, 48, KernelType::aiv_only, 40) == 8);
    CHECK(fusion::idle_cores(std::nullopt, 48, KernelType::aiv_only, 48) == 0);
    CHECK(fusion::idle_cores(std::nullopt, 48, KernelType::aic_only, 60) == 0);
}
