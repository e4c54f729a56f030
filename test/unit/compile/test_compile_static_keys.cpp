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
opbase::Reading install(graph::Graph& g, const ScopedTempDir& dir, const std::string& soc_dir) {
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
    return opbase::read_static_kernels(dir / "opp", soc_dir);
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
// (op-kernel engine) both impl modes the engine picks from; returns how many calls were tried.
int check_every_operator_selected(graph::Graph& g, const std::string& soc_dir) {
    ScopedTempDir dir;
    const auto reading = install(g, dir, soc_dir);
    REQUIRE(reading.index_read);
    REQUIRE(reading.skipped.empty());
    for (const auto& k : reading.kernels) {
        INFO(k.bin_path);
        CHECK(k.warnings.empty());
        CHECK(k.has_run_info);
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
                                 << impl << ", deterministic " << level);
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

TEST_CASE("every operator of the examples is selected on both lookup paths", "[compile][keys]") {
    for (const char* example : {"moe_block", "tbe_cut", "two_stream", "decoder"}) {
        INFO(example);
        auto g = load(std::string(SKFORGE_SOURCE_DIR) + "/share/skforge/examples/" + example +
                      "/graph.yaml");
        const auto kernels = std::count_if(
            g.ops.begin(), g.ops.end(), [](const graph::Op& op) { return op.kernel_index >= 0; });
        CHECK(check_every_operator_selected(g, "ascend910b") == 6 * static_cast<int>(kernels));
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
    auto g = load(dir / "graph.yaml");
    CHECK(check_every_operator_selected(g, "ascend910b") == 6 * 9);
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
