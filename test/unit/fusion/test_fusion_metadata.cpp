// SPDX-License-Identifier: Apache-2.0
// The SuperKernel metadata: the vendor's shape on the NPU targets (graph-autofusion
// super_kernel/tests/st/data/*/expect_compiled_json.json), skforge's on the host target.
#include "graph_fixture.hpp"
#include "skforge/fusion/plan.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace skforge;
using nlohmann::json;
using test::header;
using test::op;

namespace {

const fusion::Segment& only_segment(test::GraphFixture& f, fusion::Plan& keep,
                                    const std::string& yaml) {
    REQUIRE(f.load(yaml));
    keep = fusion::make_plan(f.graph, f.diags);
    REQUIRE_FALSE(f.diags.has_errors());
    REQUIRE(keep.segments.size() == 1);
    return keep.segments[0];
}

// A vector kernel `name` with `params` sub_operator_params, as the op compiler writes it.
void sub_kernel(test::GraphFixture& f, const std::string& name, int params) {
    json names = json::array();
    for (int i = 0; i < params; ++i)
        names.push_back("p" + std::to_string(i));
    json meta = {{"kernelName", name},
                 {"blockDim", 8},
                 {"magic", "RT_DEV_BINARY_MAGIC_ELF_AIVEC"},
                 {"sub_operator_kernel_type", "KERNEL_TYPE_AIV_ONLY"},
                 {"supportSuperKernel", 1},
                 {"split_mode", 4},
                 {"sub_operator_params", names},
                 {"sub_operator_early_start_set_flag", true},
                 {"sub_operator_early_start_wait_flag", false},
                 {"sub_operator_call_dcci_after_kernel_end", name == "four"}};
    test::write_text(f.dir / ("kernels/" + name + ".json"), meta.dump());
}

std::vector<std::int64_t> firsts(const std::vector<fusion::VendorParamSlots>& slots) {
    std::vector<std::int64_t> out;
    for (const auto& s : slots)
        out.push_back(s.param);
    return out;
}

} // namespace

TEST_CASE("vendor parameter table: FFTS slot on dav-2201, then each sub-kernel's parameters",
          "[fusion][metadata]") {
    test::GraphFixture f;
    sub_kernel(f, "three", 3);
    sub_kernel(f, "four", 4);
    fusion::Plan p;
    auto& s = only_segment(
        f, p,
        // early start: the sub-kernels were compiled for it
        header("scopes: {s: \"early-start=1\"}\n") + op("a", "three", "x", "scope: s") +
            op("b", "four", "a_out", "scope: s") + op("c", "three", "b_out", "scope: s"));
    CHECK(firsts(fusion::vendor_param_slots(f.graph, s, "dav-2201")) ==
          std::vector<std::int64_t>{1, 4, 8});
    CHECK(firsts(fusion::vendor_param_slots(f.graph, s, "dav-3510")) ==
          std::vector<std::int64_t>{0, 3, 7});
    // Without sub_operator_params: inputs, outputs and the workspace.
    auto plain = fusion::vendor_param_slots(f.graph, s, "dav-2201");
    CHECK(plain[0].count == 3);
    test::GraphFixture g;
    fusion::Plan q;
    auto& t = only_segment(g, q, header() + op("a", "vec", "x", "scope: s"));
    CHECK(fusion::vendor_param_slots(g.graph, t, "dav-2201")[0].count == 3);
}

TEST_CASE("vendor parameter table: notify slots after the parameters, wait slots after those",
          "[fusion][metadata]") {
    test::GraphFixture f;
    sub_kernel(f, "three", 3);
    fusion::Plan p;
    auto& s =
        only_segment(f, p,
                     header("scopes: {s: \"stream-fusion=1:early-start=1\"}\n") +
                         op("a", "three", "x", "scope: s, stream_id: 1, send_event_list: [1, 2]") +
                         op("b", "three", "x", "scope: s, recv_event_list: [1]") +
                         op("c", "three", "a_out", "scope: s, recv_event_list: [2]"));
    auto slots = fusion::vendor_param_slots(f.graph, s, "dav-2201");
    REQUIRE(slots.size() == 3);
    CHECK(slots[0].param == 1);
    CHECK(slots[0].notify == 4); // two notify slots: 4, 5
    CHECK(slots[0].wait == -1);
    CHECK(slots[1].param == 6);
    CHECK(slots[1].notify == -1);
    CHECK(slots[1].wait == 9);
    CHECK(slots[2].param == 10);
    CHECK(slots[2].wait == 13);
}

TEST_CASE("NPU metadata: the vendor's keys and values, skforge's plan under one key",
          "[fusion][metadata]") {
    test::GraphFixture f;
    sub_kernel(f, "three", 3);
    sub_kernel(f, "four", 4);
    fusion::Plan p;
    auto& s = only_segment(f, p,
                           header("scopes: {s: \"stream-fusion=0:early-start=1\"}\n") +
                               op("a", "three", "x", "scope: s, stream_id: 1") +
                               op("b", "four", "x", "scope: s, stream_id: 1"));
    json meta = json::parse(fusion::kernel_meta_json(f.graph, s, "dav-2201"));
    std::vector<std::string> keys;
    for (const auto& [k, v] : meta.items())
        keys.push_back(k);
    CHECK(keys == std::vector<std::string>{
                      "SuperkernelInfo", "binFileName", "binFileSuffix", "blockDim", "coreType",
                      "intercoreSync", "kernelName", "magic", "memoryStamping", "opParaSize",
                      "optionalInputMode", "optionalOutputMode", "parameters", "sha256", "skforge",
                      "supportSuperKernel", "taskRation"});
    CHECK(meta["coreType"] == "MIX");
    CHECK(meta["intercoreSync"] == 1);
    CHECK(meta["opParaSize"] == 8);
    CHECK(meta["supportSuperKernel"] == 1);
    CHECK(meta["taskRation"] == "0:1");
    CHECK(meta["parameters"] == json::array());
    CHECK(meta["memoryStamping"] == json::array());
    const json& list = meta["SuperkernelInfo"]["kernelList"];
    REQUIRE(list.size() == 1);
    REQUIRE(list["aicore"].size() == 2);
    const json& b = list["aicore"][1];
    CHECK(b["func_name"] == "four");
    CHECK(b["split_mode"] == 4);
    CHECK(b["streamid"] == 1);
    CHECK(b["sub_operator_early_start_set_flag"] == true); // the sub-kernel's own flag
    CHECK(b["sub_operator_early_start_wait_flag"] == false);
    // Both asc-devkit lines copy the two dcci flags from the sub-kernel's JSON, false if absent.
    CHECK(b["sub_operator_call_dcci_after_kernel_end"] == true);
    CHECK(b["sub_operator_call_dcci_before_kernel_start"] == false);
    CHECK(list["aicore"][0]["sub_operator_call_dcci_after_kernel_end"] == false);
    CHECK(b["arg_list"] == json{{"notify_param_offset", nullptr},
                                {"param_offset", 4},
                                {"wait_param_offset", nullptr}});
    CHECK(meta["skforge"].contains("arena"));
    CHECK(meta["skforge"].contains("barriers"));
    CHECK(meta["skforge"]["kernelList"].size() == 2);
    // Written straight as text: equal to nlohmann's dump of the same object.
    CHECK(fusion::kernel_meta_json(f.graph, s, "dav-2201") == meta.dump());
}

TEST_CASE("NPU metadata: with stream fusion one list per core kind, MIX in both",
          "[fusion][metadata]") {
    test::GraphFixture f;
    fusion::Plan p;
    auto& s = only_segment(
        f, p,
        header("scopes: {s: \"stream-fusion=1\"}\n") + op("m", "mix", "x", "scope: s") +
            op("v", "vec", "m_out", "scope: s") + op("c", "cube", "v_out", "scope: s"));
    json meta = json::parse(fusion::kernel_meta_json(f.graph, s, "dav-2201"));
    const json& list = meta["SuperkernelInfo"]["kernelList"];
    auto names = [&](const char* core) {
        std::vector<std::string> out;
        for (const auto& sub : list[core])
            out.push_back(sub["func_name"]);
        return out;
    };
    CHECK(list.size() == 2);
    CHECK(names("dav-c220-cube") == std::vector<std::string>{"mix", "cube"});
    CHECK(names("dav-c220-vec") == std::vector<std::string>{"mix", "vec"});
    CHECK(json::parse(
              fusion::kernel_meta_json(f.graph, s, "dav-3510"))["SuperkernelInfo"]["kernelList"]
              .contains("dav-c310-vec"));
}

TEST_CASE("NPU metadata: a workspace only when the SuperKernel needs one", "[fusion][metadata]") {
    test::GraphFixture f;
    fusion::Plan p;
    auto& s = only_segment(f, p, header() + op("a", "vec", "x", "scope: s"));
    CHECK_FALSE(
        json::parse(fusion::kernel_meta_json(f.graph, s, "dav-2201")).contains("workspace"));
    test::GraphFixture g;
    auto& t = only_segment(
        g, p, header() + op("a", "vec", "x", "scope: s") + op("b", "vec", "a_out", "scope: s"));
    json meta = json::parse(fusion::kernel_meta_json(g.graph, t, "dav-2201"));
    REQUIRE(t.arena_peak > 0); // a_out lives in the arena
    CHECK(meta["workspace"] == json{{"num", 1}, {"size", {t.arena_peak}}, {"type", {0}}});
}

TEST_CASE("host metadata keeps skforge's shape", "[fusion][metadata]") {
    test::GraphFixture f;
    fusion::Plan p;
    auto& s = only_segment(
        f, p, header() + op("a", "vec", "x", "scope: s") + op("b", "vec", "a_out", "scope: s"));
    json meta = json::parse(fusion::kernel_meta_json(f.graph, s, "host"));
    CHECK(meta["magic"] == "RT_DEV_BINARY_MAGIC_SKFORGE_HOST");
    CHECK(meta["binFileSuffix"] == ".so");
    CHECK(meta["supportSuperKernel"] == 0);
    CHECK(meta["SuperkernelInfo"]["kernelList"].is_array());
    CHECK(meta["SuperkernelInfo"].contains("arena"));
    CHECK_FALSE(meta.contains("skforge"));
}
