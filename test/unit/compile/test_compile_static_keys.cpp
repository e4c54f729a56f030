// SPDX-License-Identifier: Apache-2.0
// Every operator skc packages as a static kernel is selected by CANN's runtime for the call it
// was built for, on both of opbase's lookup paths, at the first lookup and without a warning
// about the JSON beside it: the index and JSONs stage_static_kernels writes, read and looked up
// by the opbase-logic reader (opbase_reader.hpp), which builds each call's key as the runtime
// does from the tensors' descriptions (dtype, storage format, storage and view shapes).
#include "../../../lib/compile/src/static_kernels.hpp"
#include "opbase_reader.hpp"
#include "skforge/kernel/static_index.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>

using namespace skforge;
using skforge::test::ScopedTempDir;
using skforge::test::write_text;
namespace opbase = skforge::test::opbase;

namespace {

// Every operator of `g` laid out as a static kernel of package "p" (plan nullptr: none fused)
// and installed where the runtime looks; what the runtime reads from it.
opbase::Reading install(graph::Graph& g, const ScopedTempDir& dir, const std::string& soc_dir,
                        opbase::Line line = opbase::Line::master) {
    const std::string bin = dir / "kernel.o";
    write_text(bin, "not a real kernel");
    for (auto& op : g.ops)
        if (op.kernel_index >= 0)
            op.kernel.bin_path = bin;
    const std::string ai = dir / "opp/static_kernel/ai_core";
    std::string log;
    const std::string index =
        compile::stage_static_kernels(g, nullptr, "p", soc_dir, ai + "/p", log);
    write_text(ai + "/config/" + soc_dir + "/binary_info_config.json", index);
    return opbase::read_static_kernels(dir / "opp", soc_dir, line);
}

// A graph tensor as the caller's aclTensor describes it.
opbase::AclTensor acl_tensor(const graph::Tensor& t) {
    opbase::AclTensor a;
    a.dtype = *kernel::ge_data_type(t.dtype);
    a.storage_format = *kernel::ge_format(t.format.empty() ? "ND" : t.format);
    a.storage_dims = t.shape;
    a.view_dims = t.view_shape.empty() ? t.shape : t.view_shape;
    return a;
}

// Checks that every operator of `g` is selected on both paths, in both determinism modes and
// (op-kernel engine) both impl modes the engine picks from, by the runtime of `line`; returns
// how many calls were tried.
int check_every_operator_selected(graph::Graph& g, const std::string& soc_dir,
                                  opbase::Line line = opbase::Line::master) {
    ScopedTempDir dir;
    const auto reading = install(g, dir, soc_dir, line);
    REQUIRE(reading.index_read);
    REQUIRE(reading.skipped.empty());
    for (const auto& k : reading.kernels) {
        INFO(k.bin_path << " on " << opbase::line_rules(line).name);
        CHECK(k.warnings.empty());
        // 9.0.x reads runInfo only (and applies it to MC2 operators only): none here, none
        // inherited from another kernel.
        CHECK(k.has_run_info == opbase::line_rules(line).run_info_fallback);
        CHECK_FALSE(k.run_info_inherited);
        CHECK(k.key_is_string);
    }
    std::map<std::string, const graph::Tensor*> by_name;
    for (const auto& t : g.inputs)
        by_name[t.name] = &t;
    for (const auto& op : g.ops)
        for (const auto& t : op.outputs)
            by_name[t.name] = &t;
    const opbase::Registry registry(reading);
    int calls = 0;
    for (const auto& op : g.ops) {
        if (op.kernel_index < 0)
            continue; // beside the cores: no static kernel
        std::vector<opbase::AclTensor> tensors;
        for (const auto& in : op.inputs)
            tensors.push_back(acl_tensor(in.dtype.empty() ? *by_name.at(in.name) : in));
        for (const auto& out : op.outputs)
            tensors.push_back(acl_tensor(out));
        const auto& kernel = g.kernels[static_cast<std::size_t>(op.kernel_index)];
        const std::string want = "/p/" + soc_dir + "/" + op.type + "/" +
                                 std::filesystem::path(kernel.path).stem().string() + ".o";
        for (int level : {0, 1})
            for (auto [path, impl] :
                 {std::pair{opbase::Path::aclnn_executor, 0}, std::pair{opbase::Path::hostapi, 1},
                  std::pair{opbase::Path::hostapi, 2}}) {
                opbase::Context ctx;
                ctx.deterministic_level = level;
                ctx.hostapi_impl_mode = static_cast<std::uint64_t>(impl);
                const auto s = registry.select(path, op.type, ctx, tensors);
                INFO("operator " << op.name << ", path " << static_cast<int>(path) << ", impl "
                                 << impl << ", deterministic " << level << ", line "
                                 << opbase::line_rules(line).name);
                REQUIRE(s.kernel != nullptr);
                CHECK_FALSE(s.retried);
                CHECK(s.kernel->bin_path.ends_with(want));
                ++calls;
            }
    }
    return calls;
}

graph::Graph load(const std::string& path) {
    graph::Diagnostics diags;
    auto g = graph::load_graph(path, diags);
    INFO(diags.format());
    REQUIRE_FALSE(diags.has_errors());
    return g;
}

} // namespace

constexpr opbase::Line k_lines[] = {opbase::Line::v9_0, opbase::Line::v9_1, opbase::Line::master};

TEST_CASE("every operator of the examples is selected on both lookup paths, on every release "
          "line",
          "[compile][keys]") {
    for (const char* example : {"moe_block", "tbe_cut", "two_stream", "decoder"})
        for (auto line : k_lines) {
            INFO(example << " on " << opbase::line_rules(line).name);
            auto g = load(std::string(SKFORGE_SOURCE_DIR) + "/share/skforge/examples/" + example +
                          "/graph.yaml");
            const auto kernels = std::count_if(g.ops.begin(), g.ops.end(), [](const graph::Op& op) {
                return op.kernel_index >= 0;
            });
            CHECK(check_every_operator_selected(g, "ascend910b", line) ==
                  6 * static_cast<int>(kernels));
        }
}

TEST_CASE("operators of generated graphs are selected on both lookup paths: ND, NCHW, NHWC, "
          "NCDHW, DHWCN, NCL, FRACTAL_NZ, NC1HWC0, several dtypes, dims above 15",
          "[compile][keys]") {
    ScopedTempDir dir;
    // One kernel per OpType: AIV only, deterministic unsaid, what the op compiler writes.
    const char* types[] = {"Nd", "Nchw", "Nhwc", "Ncdhw", "Dhwcn", "Ncl", "Nz", "Nc1hwc0", "Empty"};
    for (const char* t : types)
        write_text(dir / (std::string("k/") + t + ".json"),
                   std::string(R"({"kernelName":")") + t +
                       R"(_k","blockDim":40,"magic":"RT_DEV_BINARY_MAGIC_ELF",)"
                       R"("sub_operator_kernel_type":"KERNEL_TYPE_AIV_ONLY"})");
    write_text(dir / "graph.yaml", R"(name: gen
npu_arch: dav-2201
soc_version: Ascend910B1
super_kernel_optimize: false
inputs:
  - {name: x, shape: [48, 4096], dtype: float16}
  - {name: img, shape: [1, 3, 224, 224], dtype: float32, format: NCHW}
  - {name: w, shape: [2, 1, 16, 16], view_shape: [16, 32], dtype: bfloat16, format: FRACTAL_NZ}
ops:
  - {name: nd, type: Nd, kernel: {json_path: k/Nd.json}, inputs: [x, x], outputs: [{name: y, shape: [48, 4096], dtype: float16}]}
  - {name: nchw, type: Nchw, kernel: {json_path: k/Nchw.json}, inputs: [img], outputs: [{name: img2, shape: [1, 3, 224, 224], dtype: float32, format: NCHW}]}
  - {name: nhwc, type: Nhwc, kernel: {json_path: k/Nhwc.json}, inputs: [img], outputs: [{name: q, shape: [8, 17, 33, 255], dtype: int8, format: NHWC}]}
  - {name: ncdhw, type: Ncdhw, kernel: {json_path: k/Ncdhw.json}, inputs: [q], outputs: [{name: v, shape: [2, 16, 4, 64, 64], dtype: int32, format: NCDHW}]}
  - {name: dhwcn, type: Dhwcn, kernel: {json_path: k/Dhwcn.json}, inputs: [v], outputs: [{name: f, shape: [3, 3, 3, 256, 512], dtype: float16, format: DHWCN}]}
  - {name: ncl, type: Ncl, kernel: {json_path: k/Ncl.json}, inputs: [f], outputs: [{name: s, shape: [4, 1024, 77], dtype: int64, format: NCL}]}
  - {name: nz, type: Nz, kernel: {json_path: k/Nz.json}, inputs: [w, x], outputs: [{name: z, shape: [256, 3, 16, 16], view_shape: [48, 4096], dtype: bfloat16, format: FRACTAL_NZ}]}
  - {name: c0, type: Nc1hwc0, kernel: {json_path: k/Nc1hwc0.json}, inputs: [img], outputs: [{name: c, shape: [1, 1, 224, 224, 16], view_shape: [1, 3, 224, 224], dtype: float16, format: NC1HWC0}]}
  - {name: empty, type: Empty, kernel: {json_path: k/Empty.json}, inputs: [s], outputs: [{name: e, shape: [], dtype: bool}, {name: e0, shape: [0, 16], dtype: uint8}]}
)");
    for (auto line : k_lines) {
        auto g = load(dir / "graph.yaml");
        CHECK(check_every_operator_selected(g, "ascend910b", line) == 6 * 9);
    }
}

TEST_CASE("the JSON beside each static kernel keeps the op compiler's fields and gains what the "
          "runtime reads",
          "[compile][keys]") {
    ScopedTempDir dir;
    write_text(dir / "k/a.json",
               R"({"kernelName":"a_k","blockDim":8,"magic":"RT_DEV_BINARY_MAGIC_ELF",
      "coreType":"VectorCore","supportInfo":{"implMode":"high_precision","op_debug_config":""},
      "localMemorySize":4096,"compileInfo":{"x":1},
      "platformInfo":{"cubeCoreCnt":24,"vectorCoreCnt":48,"deterministicLevel":1}})");
    write_text(dir / "graph.yaml", R"(name: j
npu_arch: dav-2201
soc_version: Ascend910B1
inputs: [{name: x, shape: [16], dtype: float16}]
ops:
  - {name: a, type: A, kernel: {json_path: k/a.json}, inputs: [x], outputs: [{name: y, shape: [16], dtype: float16}]}
)");
    auto g = load(dir / "graph.yaml");
    ScopedTempDir out;
    const auto reading = install(g, out, "ascend910b");
    REQUIRE(reading.kernels.size() >= 1);
    const auto meta = nlohmann::json::parse(
        skforge::support::read_file(out / "opp/static_kernel/ai_core/p/ascend910b/A/a.json"));
    CHECK(meta["localMemorySize"] == 4096); // the op compiler's, kept
    CHECK(meta["schedule_mode"] == 0);      // it writes none for 0
    CHECK(meta["workspace"] == nlohmann::json{{"num", 0},
                                              {"size", nlohmann::json::array()},
                                              {"type", nlohmann::json::array()}});
    CHECK(meta["compileInfo"] == nlohmann::json{{"x", 1}});
    CHECK(meta["supportInfo"]["implMode"] == "high_precision");
    // implMode high_precision: the op-kernel engine looks the call up with p=2 only.
    for (const auto& k : reading.kernels)
        for (const auto& key : k.keys)
            CHECK(key.find(",p=1/") == std::string::npos);
    // Its platformInfo: found only on a device with those cores, in that deterministic level.
    const opbase::Registry registry(reading);
    std::vector<opbase::AclTensor> call(2, opbase::AclTensor{1, 2, {16}, {16}});
    opbase::Context ctx;
    ctx.deterministic_level = 1;
    CHECK(registry.select(opbase::Path::aclnn_executor, "A", ctx, call).kernel != nullptr);
    ctx.aiv = 40;
    CHECK(registry.select(opbase::Path::aclnn_executor, "A", ctx, call).kernel == nullptr);
    ctx.aiv = 48;
    ctx.deterministic_level = 0;
    CHECK(registry.select(opbase::Path::aclnn_executor, "A", ctx, call).kernel == nullptr);
}

namespace {

// A graph of operators of OpType A on the same call (float16[16] in, float16[16] out), one per
// kernel JSON text in `kernels`, in that order.
graph::Graph same_call_graph(const ScopedTempDir& dir, const std::vector<std::string>& kernels) {
    std::string ops;
    for (std::size_t i = 0; i < kernels.size(); ++i) {
        const std::string n = std::to_string(i);
        write_text(dir / ("k/a" + n + ".json"),
                   R"({"kernelName":"a)" + n +
                       R"(_k","blockDim":8,"magic":"RT_DEV_BINARY_MAGIC_ELF",)"
                       R"("sub_operator_kernel_type":"KERNEL_TYPE_AIV_ONLY")" +
                       kernels[i] + "}");
        ops += "  - {name: a" + n + ", type: A, kernel: {json_path: k/a" + n +
               ".json}, inputs: [x], outputs: [{name: y" + n + ", shape: [16], dtype: float16}]}\n";
    }
    write_text(dir / "graph.yaml", "name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n"
                                   "super_kernel_optimize: false\n"
                                   "inputs: [{name: x, shape: [16], dtype: float16}]\nops:\n" +
                                       ops);
    return load(dir / "graph.yaml");
}

// The stem of the kernel `registry` selects for the call of same_call_graph at `level`, through
// the aclnn executor ("" when none).
std::string selected_at(const opbase::Registry& registry, int level) {
    std::vector<opbase::AclTensor> call(2, opbase::AclTensor{1, 2, {16}, {16}});
    opbase::Context ctx;
    ctx.deterministic_level = level;
    const auto s = registry.select(opbase::Path::aclnn_executor, "A", ctx, call);
    return s.kernel == nullptr ? "" : std::filesystem::path(s.kernel->bin_path).stem().string();
}

} // namespace

TEST_CASE("a kernel with a platformInfo.deterministicLevel is keyed for its level's mode only, "
          "so no line selects it for the other",
          "[compile][keys][lines]") {
    ScopedTempDir dir;
    // Level 0 first: keyed d=0 only, so a deterministic call finds the level-1 kernel on every
    // line (before, its d=1 keys made 9.0.x and 9.1.x select it there).
    auto g = same_call_graph(
        dir, {R"(,"platformInfo":{"cubeCoreCnt":24,"vectorCoreCnt":48,"deterministicLevel":0})",
              R"(,"platformInfo":{"cubeCoreCnt":24,"vectorCoreCnt":48,"deterministicLevel":1})"});
    CHECK(compile::deterministic_level_ties(g, nullptr).empty());
    for (auto line : k_lines) {
        INFO(opbase::line_rules(line).name);
        ScopedTempDir out;
        const auto reading = install(g, out, "ascend910b", line);
        for (const auto& k : reading.kernels)
            for (const auto& key : k.keys)
                CHECK(key.find(k.bin_path.ends_with("a0.o") ? "/d=1," : "/d=0,") ==
                      std::string::npos);
        const opbase::Registry registry(reading);
        CHECK(selected_at(registry, 0) == "a0");
        CHECK(selected_at(registry, 1) == "a1");
    }
    // A kernel whose deterministic flag contradicts its level would be selected for no call.
    ScopedTempDir bad;
    auto h = same_call_graph(
        bad, {R"(,"deterministic":"true",)"
              R"("platformInfo":{"cubeCoreCnt":24,"vectorCoreCnt":48,"deterministicLevel":0})"});
    ScopedTempDir out;
    CHECK_THROWS_WITH(install(h, out, "ascend910b"),
                      Catch::Contains("says deterministic 'true' but "
                                      "platformInfo.deterministicLevel 0: CANN's runtime would "
                                      "select it for no call"));
}

TEST_CASE("kernels that differ only in deterministicLevel, both in one index: master selects by "
          "the level, 9.0.x and 9.1.x the first; compile warns",
          "[compile][keys][lines]") {
    ScopedTempDir dir;
    auto g = same_call_graph(
        dir, {R"(,"platformInfo":{"cubeCoreCnt":24,"vectorCoreCnt":48,"deterministicLevel":1})",
              R"(,"platformInfo":{"cubeCoreCnt":24,"vectorCoreCnt":48,"deterministicLevel":2})"});
    for (auto line : k_lines) {
        INFO(opbase::line_rules(line).name);
        ScopedTempDir out;
        const auto reading = install(g, out, "ascend910b", line);
        const opbase::Registry registry(reading);
        CHECK(selected_at(registry, 0).empty());
        CHECK(selected_at(registry, 1) == "a0");
        CHECK(selected_at(registry, 2) == (line == opbase::Line::master ? "a1" : "a0"));
    }
    const auto ties = compile::deterministic_level_ties(g, nullptr);
    REQUIRE(ties.size() == 1);
    CHECK(ties[0] == "operators 'a0' and 'a1' share the static key A/d=1,p=0/1,2,(10),(1),0/"
                     "1,2,(10),(1),0 and their kernels differ only in "
                     "platformInfo.deterministicLevel (1, 2): an installed tree keeps one kernel "
                     "per key, 'a1''s, which CANN 9.0.x and 9.1.x select at every level (they do "
                     "not compare it) and master at level 2 only");
}

TEST_CASE("a platformInfo with only deterministicLevel (asc-devkit 12c80e5d) is packaged as "
          "written; every line drops it with a warning and selects the first kernel",
          "[compile][keys][lines]") {
    ScopedTempDir dir;
    auto g = same_call_graph(dir, {R"(,"platformInfo":{"deterministicLevel":1})",
                                   R"(,"platformInfo":{"deterministicLevel":2})"});
    for (auto line : k_lines) {
        INFO(opbase::line_rules(line).name);
        ScopedTempDir out;
        const auto reading = install(g, out, "ascend910b", line);
        REQUIRE(reading.kernels.size() == 2 * 6); // d=1 only: 3 keys with strides, 3 without
        for (const auto& k : reading.kernels) {
            CHECK_FALSE(k.platform);
            REQUIRE(k.warnings.size() == 1);
            CHECK(k.warnings[0].starts_with(
                "Failed to read static kernel json file of platformInfo"));
        }
        const auto meta = nlohmann::json::parse(
            support::read_file(out / "opp/static_kernel/ai_core/p/ascend910b/A/a0.json"));
        CHECK(meta["platformInfo"] == nlohmann::json{{"deterministicLevel", 1}});
        const opbase::Registry registry(reading);
        CHECK(selected_at(registry, 1) == "a0");
        CHECK(selected_at(registry, 2) == "a0");
    }
    const auto ties = compile::deterministic_level_ties(g, nullptr);
    REQUIRE(ties.size() == 1);
    CHECK(ties[0].find("'a1''s, which CANN's runtime selects at every level on every line (it "
                       "drops a platformInfo without core counts)") != std::string::npos);
}

TEST_CASE("a strided or deterministic call finds the kernel on every line; 9.1.x and master "
          "after their retry without strides, 9.0.x at its one lookup",
          "[compile][keys][lines]") {
    ScopedTempDir dir;
    auto g = same_call_graph(dir, {""});
    for (auto line : k_lines) {
        INFO(opbase::line_rules(line).name);
        ScopedTempDir out;
        const auto reading = install(g, out, "ascend910b", line);
        const opbase::Registry registry(reading);
        // A view with strides other than the contiguous ones (every second element).
        std::vector<opbase::AclTensor> call(
            2, opbase::AclTensor{1, 2, {16}, {16}, std::vector<std::int64_t>{2}, 0});
        opbase::Context ctx;
        for (int level : {0, 1}) {
            ctx.deterministic_level = level;
            const auto s = registry.select(opbase::Path::aclnn_executor, "A", ctx, call);
            REQUIRE(s.kernel != nullptr);
            CHECK(s.retried == (line != opbase::Line::v9_0));
        }
        // Contiguous: found at the first lookup on every line.
        call.assign(2, opbase::AclTensor{1, 2, {16}, {16}});
        CHECK_FALSE(registry.select(opbase::Path::aclnn_executor, "A", ctx, call).retried);
    }
}

TEST_CASE("with the PCIe segment of the search-index opbase (c362be6c) the key with strides "
          "misses and the retry without strides finds the kernel",
          "[compile][keys][lines]") {
    ScopedTempDir dir;
    auto g = same_call_graph(dir, {""});
    ScopedTempDir out;
    const auto reading = install(g, out, "ascend910b");
    const opbase::Registry registry(reading);
    std::vector<opbase::AclTensor> call(2, opbase::AclTensor{1, 2, {16}, {16}});
    opbase::Context ctx;
    for (bool pcie : {false, true}) {
        ctx.pcie = pcie;
        for (auto path : {opbase::Path::aclnn_executor, opbase::Path::hostapi}) {
            const auto s = registry.select(path, "A", ctx, call);
            REQUIRE(s.kernel != nullptr);
            CHECK(s.retried == pcie);
        }
    }
}
