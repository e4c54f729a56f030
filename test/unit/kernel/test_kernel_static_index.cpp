// SPDX-License-Identifier: Apache-2.0
#include "opbase_reader.hpp"
#include "skforge/kernel/static_index.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <catch2/catch.hpp>

using namespace skforge::kernel;
namespace opbase = skforge::test::opbase;

TEST_CASE("kernel types map to opbase's coreType integers", "[kernel][index]") {
    CHECK(static_cast<int>(core_type_of(KernelType::aiv_only)) == 2);
    CHECK(static_cast<int>(core_type_of(KernelType::aic_only)) == 1);
    for (auto mix : {KernelType::mix_aiv_1_0, KernelType::mix_aic_1_0, KernelType::mix_aic_1_1,
                     KernelType::mix_aic_1_2})
        CHECK(static_cast<int>(core_type_of(mix)) == 0);
    CHECK(static_cast<int>(*parse_core_type("MIX")) == 0);
    CHECK(static_cast<int>(*parse_core_type("AiCore")) == 1);
    CHECK(static_cast<int>(*parse_core_type("VectorCore")) == 2);
    CHECK(static_cast<int>(*parse_core_type("MIX_AICORE")) == 3);
    CHECK(static_cast<int>(*parse_core_type("MIX_VECTOR_CORE")) == 4);
    CHECK(static_cast<int>(*parse_core_type("MIX_AIC")) == 0);
    CHECK_FALSE(parse_core_type("aicore"));
    CHECK_FALSE(parse_core_type(""));
}

TEST_CASE("a kernel's core type: its coreType, else its kernel type, else its magic",
          "[kernel][index]") {
    KernelMeta m;
    CHECK_FALSE(kernel_core_type(m));
    m.magic_name = "RT_DEV_BINARY_MAGIC_ELF_AIVEC";
    CHECK(kernel_core_type(m) == CoreType::vector_core);
    m.magic_name = "RT_DEV_BINARY_MAGIC_ELF_AICUBE";
    CHECK(kernel_core_type(m) == CoreType::ai_core);
    m.kernel_type = KernelType::mix_aic_1_2;
    CHECK(kernel_core_type(m) == CoreType::mix);
    m.core_type = "VectorCore";
    CHECK(kernel_core_type(m) == CoreType::vector_core);
    m.core_type = "NotAType";
    CHECK(kernel_core_type(m) == CoreType::mix);
}

TEST_CASE("kernel metadata gives coreType and deterministic", "[kernel][index]") {
    std::vector<MetaProblem> problems;
    auto m = parse_kernel_meta(R"({"kernelName":"k","blockDim":1,"magic":"RT_DEV_BINARY_MAGIC_ELF",
        "coreType":"MIX","deterministic":"ignore"})",
                               problems);
    CHECK(problems.empty());
    CHECK(m.core_type == "MIX");
    CHECK(m.deterministic == "ignore");
    m = parse_kernel_meta(
        R"({"kernelName":"k","magic":"RT_DEV_BINARY_MAGIC_ELF","deterministic":true})", problems);
    CHECK(m.deterministic == "true");
    parse_kernel_meta(
        R"({"kernelName":"k","magic":"RT_DEV_BINARY_MAGIC_ELF","deterministic":"maybe"})",
        problems);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].key == "deterministic");
}

TEST_CASE("dtype and format names have GE's codes", "[kernel][index]") {
    CHECK(ge_data_type("float32") == 0u);
    CHECK(ge_data_type("float") == 0u);
    CHECK(ge_data_type("float16") == 1u);
    CHECK(ge_data_type("int8") == 2u);
    CHECK(ge_data_type("int32") == 3u);
    CHECK(ge_data_type("int64") == 9u);
    CHECK(ge_data_type("bool") == 12u);
    CHECK(ge_data_type("bfloat16") == 27u);
    CHECK(ge_data_type("float8_e4m3fn") == 36u);
    CHECK_FALSE(ge_data_type("fp16"));
    CHECK_FALSE(ge_data_type(""));
    CHECK(ge_format("NCHW") == 0u);
    CHECK(ge_format("ND") == 2u);
    CHECK(ge_format("NC1HWC0") == 3u);
    CHECK(ge_format("FRACTAL_Z") == 4u);
    CHECK(ge_format("FRACTAL_NZ") == 29u);
    CHECK(ge_format("NCL") == 47u);
    CHECK_FALSE(ge_format("nd"));
    CHECK_FALSE(ge_format(""));
}

TEST_CASE("the static simplifiedKey: OpType, d and p, then dtype,format,(dims) in hex",
          "[kernel][index]") {
    std::vector<KeyTensor> t = {{1, 2, {16, 32}}, {27, 29, {1, 2, 16, 16}}, {3, 2, {}}};
    CHECK(static_simplified_key("Add", 0, 0, t) ==
          "Add/d=0,p=0/1,2,(10,20)/1b,1d,(1,2,10,10)/3,2,()");
    CHECK(static_simplified_key("Add", 1, 2, {}) == "Add/d=1,p=2");
    // The vendor's own test index (opbase tests/nnopbase/common/utils/file_faker.cpp) keys a
    // float NCHW 512x512x3x3 call so (it ends with a '/', which the runtime ignores).
    std::vector<KeyTensor> conv(3, KeyTensor{0, 0, {512, 512, 3, 3}});
    CHECK(static_simplified_key("TestStaticAdd", 0, 1, conv) + "/" ==
          "TestStaticAdd/d=0,p=1/0,0,(200,200,3,3)/0,0,(200,200,3,3)/0,0,(200,200,3,3)/");
}

TEST_CASE("the runtime turns our keys into the bytes it builds for the call", "[kernel][index]") {
    struct Case {
        std::vector<KeyTensor> tensors;
        int d;
    };
    const Case cases[] = {
        {{{1, 2, {16}}, {1, 2, {16}}}, 0},
        {{{27, 29, {4, 8, 16, 16}}, {0, 2, {}}, {9, 0, {1}}}, 1},
        {{{1, 2, {(std::int64_t{1} << 59) + 5, 0, 255}}}, 0},
        {{}, 1},
    };
    for (const auto& c : cases) {
        std::vector<opbase::CallTensor> call;
        for (const auto& t : c.tensors)
            call.push_back({t.dtype, t.format, t.shape});
        auto key = static_simplified_key("MatMulV3", c.d, 0, c.tensors);
        INFO(key);
        CHECK(opbase::convert_static_key(key) == opbase::call_key("MatMulV3", c.d == 1, 0, call));
        // A different shape, dtype or mode is another call.
        CHECK(opbase::convert_static_key(key) != opbase::call_key("MatMulV3", c.d == 0, 0, call));
    }
    std::vector<KeyTensor> a = {{1, 2, {16}}}, b = {{1, 2, {17}}}, c = {{27, 2, {16}}};
    CHECK(opbase::convert_static_key(static_simplified_key("Add", 0, 0, a)) !=
          opbase::convert_static_key(static_simplified_key("Add", 0, 0, b)));
    CHECK(opbase::convert_static_key(static_simplified_key("Add", 0, 0, a)) !=
          opbase::convert_static_key(static_simplified_key("Add", 0, 0, c)));
}

TEST_CASE("the vendor's sample keys read as the calls they describe", "[kernel][index]") {
    // opbase's file_faker.cpp: Flash with four float ND 1x1x1x1x1 tensors; an absent tensor '_'.
    std::vector<opbase::CallTensor> flash(4, opbase::CallTensor{0, 2, {1, 1, 1, 1, 1}});
    CHECK(opbase::convert_static_key(
              "Flash/d=0,p=0/0,2,(1,1,1,1,1)/0,2,(1,1,1,1,1)/0,2,(1,1,1,1,1)/0,2,(1,1,1,1,1)") ==
          opbase::call_key("Flash", false, 0, flash));
    auto with_gap = opbase::call_key("X", false, 0, {});
    opbase::append8(with_gap, '_');
    CHECK(opbase::convert_static_key("X/d=0,p=0/_") == with_gap);
}

TEST_CASE("the reader takes only well-formed staticList entries, as the runtime does",
          "[kernel][index]") {
    skforge::test::ScopedTempDir dir;
    const std::string ai = dir / "opp/static_kernel/ai_core";
    skforge::test::write_text(ai + "/config/ascend910b/binary_info_config.json", R"json({
      "Add": {"dynamicRankSupport": true, "simplifiedKeyMode": 0, "staticList": [
        {"binDesc": {"blockDim": 8, "kernelName": "add_k", "workspace": [0, 64]}, "coreType": 2,
         "binPath": "p1/ascend910b/Add/add.o", "simplifiedKey": "Add/d=0,p=0/1,2,(10)"},
        {"binDesc": {"blockDim": 8, "kernelName": "add_k"}, "coreType": "VectorCore",
         "binPath": "p1/ascend910b/Add/add.o", "simplifiedKey": "Add/d=1,p=0/1,2,(10)"},
        {"binDesc": {"blockDim": 8, "kernelName": "add_k"}, "coreType": 2,
         "binPath": "p1/ascend910b/Add/add.o"}],
        "binaryList": [{"binPath": "p1/ascend910b/Add/add.json", "simplifiedKey": ["Add/x"]}]},
      "Mul": {"binaryList": [{"binPath": "p1/ascend910b/Mul/mul.o", "coreType": 2,
        "simplifiedKey": ["Mul/d=0,p=0/1,2,(10)"]}]},
      "Neg": {"staticList": [{"coreType": 1, "binPath": "p1/ascend910b/Neg/neg.o",
        "simplifiedKey": ["Neg/d=0,p=0/1,2,(10)", "Neg/d=1,p=0/1,2,(10)"],
        "binDesc": {"blockDim": 1, "kernelName": "neg",
                    "workspace": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21]}}]}
    })json");
    auto r = opbase::read_static_kernels(dir / "opp", "ascend910b");
    REQUIRE(r.index_read);
    REQUIRE(r.kernels.size() == 1);
    const auto& k = r.kernels[0];
    CHECK(k.op_type == "Add");
    CHECK(k.keys == std::vector<std::string>{"Add/d=0,p=0/1,2,(10)"});
    CHECK(k.core_type == 2);
    CHECK(k.bin_path == ai + "/p1/ascend910b/Add/add.o");
    CHECK(k.json_path == ai + "/p1/ascend910b/Add/add.json");
    CHECK(k.block_dim == 8);
    CHECK(k.kernel_name == "add_k");
    CHECK(k.workspace == std::vector<std::uint64_t>{0, 64});
    // The string coreType, the missing key and 21 workspaces; binaryList is never read.
    CHECK(r.skipped.size() == 3);
    CHECK_FALSE(opbase::read_static_kernels(dir / "opp", "ascend910b1").index_read);
}

TEST_CASE("each lookup path keys a tensor its own way", "[kernel][index]") {
    // The issue's NCHW case: float32 [1,3,224,224].
    const CallTensor nchw{0, 0, {1, 3, 224, 224}, {}};
    auto exec = path_key_tensor(KeyPath::aclnn_executor, nchw, false);
    CHECK(exec.format == 2); // FormatsLikeND: keyed as ND
    CHECK(exec.shape == std::vector<std::int64_t>{1, 3, 224, 224});
    CHECK_FALSE(exec.strides);
    auto host = path_key_tensor(KeyPath::hostapi, nchw, false);
    CHECK(host.format == 0);
    for (std::uint32_t f : {0u, 1u, 30u, 31u, 47u})
        CHECK(format_keyed_as_nd(f));
    for (std::uint32_t f : {2u, 3u, 29u, 27u, 35u})
        CHECK_FALSE(format_keyed_as_nd(f));
    // FRACTAL_NZ: the executor keys the view shape, the engine the storage shape.
    const CallTensor nz{27, 29, {2, 1, 16, 16}, {16, 32}};
    CHECK(path_key_tensor(KeyPath::aclnn_executor, nz, false).shape ==
          std::vector<std::int64_t>{16, 32});
    CHECK(path_key_tensor(KeyPath::aclnn_executor, nz, false).format == 29);
    CHECK(path_key_tensor(KeyPath::hostapi, nz, false).shape ==
          std::vector<std::int64_t>{2, 1, 16, 16});
    // With strides: the executor's are the view's contiguous ones, the engine's none; offset 0.
    CHECK(path_key_tensor(KeyPath::aclnn_executor, nz, true).strides ==
          std::vector<std::int64_t>{32, 1});
    CHECK(path_key_tensor(KeyPath::hostapi, nz, true).strides == std::vector<std::int64_t>{});
    CHECK(contiguous_strides(std::vector<std::int64_t>{2, 3, 4}) ==
          std::vector<std::int64_t>{12, 4, 1});
    CHECK(contiguous_strides(std::vector<std::int64_t>{}).empty());
    std::vector<KeyTensor> strided = {path_key_tensor(KeyPath::aclnn_executor, nz, true)};
    CHECK(static_simplified_key("M", 0, 0, strided) == "M/d=0,p=0/1b,1d,(10,20),(20,1),0");
}

TEST_CASE("the impl modes the op-kernel engine keys by", "[kernel][index]") {
    CHECK(hostapi_impl_modes("") == std::vector<int>{1, 2});
    CHECK(hostapi_impl_modes("high_performance") == std::vector<int>{1});
    CHECK(hostapi_impl_modes("high_precision") == std::vector<int>{2});
    // super_performance is index 3, which the index's d=,p= text cannot carry.
    CHECK(hostapi_impl_modes("super_performance").empty());
}

TEST_CASE("static_call_keys: both paths, with strides first, duplicates once", "[kernel][index]") {
    const std::vector<CallTensor> nd = {{1, 2, {16}, {}}, {1, 2, {16}, {}}};
    const int both[] = {0, 1};
    const int high_precision[] = {2};
    auto keys = static_call_keys("Add", both, high_precision, nd);
    CHECK(keys == std::vector<std::string>{
                      "Add/d=0,p=0/1,2,(10),(1),0/1,2,(10),(1),0",
                      "Add/d=0,p=0/1,2,(10)/1,2,(10)",
                      "Add/d=0,p=2/1,2,(10),(),0/1,2,(10),(),0",
                      "Add/d=0,p=2/1,2,(10)/1,2,(10)",
                      "Add/d=1,p=0/1,2,(10),(1),0/1,2,(10),(1),0",
                      "Add/d=1,p=0/1,2,(10)/1,2,(10)",
                      "Add/d=1,p=2/1,2,(10),(),0/1,2,(10),(),0",
                      "Add/d=1,p=2/1,2,(10)/1,2,(10)",
                  });
    // Each is the byte key one of the runtime's builders makes for the call.
    std::vector<opbase::AclTensor> call(2, opbase::AclTensor{1, 2, {16}, {16}});
    opbase::Context ctx;
    ctx.hostapi_impl_mode = 2;
    for (auto path : {opbase::Path::aclnn_executor, opbase::Path::hostapi})
        for (bool stride : {true, false})
            CHECK(std::any_of(keys.begin(), keys.end(), [&](const std::string& k) {
                return opbase::convert_static_key(k) ==
                       opbase::path_call_key(path, "Add", ctx, call, stride);
            }));
}

TEST_CASE("platformInfo core counts only for SoCs skforge has them for", "[kernel][index]") {
    CHECK(platform_core_counts("Ascend910B1") == std::pair<std::uint32_t, std::uint32_t>{24, 48});
    CHECK(platform_core_counts("Ascend910B4") == std::pair<std::uint32_t, std::uint32_t>{20, 40});
    CHECK_FALSE(platform_core_counts("Ascend910_9391"));
    CHECK_FALSE(platform_core_counts(""));
}

TEST_CASE("the reader reads the JSON beside each kernel as UpdateStaticJsonExtraInfo does",
          "[kernel][index]") {
    skforge::test::ScopedTempDir dir;
    const std::string ai = dir / "opp/static_kernel/ai_core";
    auto entry = [](const std::string& stem) {
        return R"({"binDesc": {"blockDim": 8, "kernelName": "k"}, "coreType": 2, "binPath": "p/A/)" +
               stem + R"(.o", "simplifiedKey": "A/d=0,p=0/1,2,()" + stem.substr(1) + ")\"}";
    };
    // a1: what the op compiler writes for schedule_mode 0 and no localMemorySize; a2: complete,
    // with platformInfo; a3: no platformInfo (inherits a2's); a4: a runInfo lacking tiling_key.
    skforge::test::write_text(ai + "/config/s/binary_info_config.json",
                              R"({"A": {"staticList": [)" + entry("a1") + "," + entry("a2") + "," +
                                  entry("a3") + "," + entry("a4") + "]}}");
    skforge::test::write_text(ai + "/p/A/a1.json", R"({"blockDim": 8, "workspace": {"num": 0}})");
    skforge::test::write_text(ai + "/p/A/a2.json", R"({"blockDim": 8, "localMemorySize": 0,
        "schedule_mode": 1, "workspace": {"num": 1, "size": [64]},
        "platformInfo": {"cubeCoreCnt": 20, "vectorCoreCnt": 40}})");
    skforge::test::write_text(ai + "/p/A/a3.json",
                              R"({"blockDim": 8, "localMemorySize": 0, "schedule_mode": 0,
        "workspace": {"num": 0}})");
    skforge::test::write_text(ai + "/p/A/a4.json", R"({"runInfo": {"aicpu_block_dim": 0,
        "block_dim": 8, "local_memory_size": 0, "schedule_mode": 0, "tiling_cond": 0,
        "clear_atomic": 0, "tiling_data": "00ff"}, "workspace": {"num": 0}})");
    auto r = opbase::read_static_kernels(dir / "opp", "s");
    REQUIRE(r.kernels.size() == 4);
    CHECK_FALSE(r.kernels[0].has_run_info);
    REQUIRE(r.kernels[0].warnings.size() == 1);
    CHECK(r.kernels[0].warnings[0].find("runInfo") != std::string::npos);
    CHECK_FALSE(r.kernels[0].platform);
    CHECK(r.kernels[1].warnings.empty());
    CHECK(r.kernels[1].platform == opbase::Platform{20, 40, -1});
    CHECK(r.kernels[2].warnings.empty());
    CHECK(r.kernels[2].platform == opbase::Platform{20, 40, -1});
    CHECK_FALSE(r.kernels[3].has_run_info);
    // A device of 24/48 cores finds a1 (no platformInfo) but not a2 or a3.
    const opbase::Registry reg(r);
    const opbase::Platform big{24, 48, 0}, small{20, 40, 0};
    CHECK(reg.find(opbase::convert_static_key("A/d=0,p=0/1,2,(1)"), &big) == &r.kernels[0]);
    CHECK(reg.find(opbase::convert_static_key("A/d=0,p=0/1,2,(2)"), &big) == nullptr);
    CHECK(reg.find(opbase::convert_static_key("A/d=0,p=0/1,2,(3)"), &small) == &r.kernels[2]);
}

TEST_CASE("the reader reads the JSON beside each kernel by each release line's rules",
          "[kernel][index]") {
    skforge::test::ScopedTempDir dir;
    const std::string ai = dir / "opp/static_kernel/ai_core";
    auto entry = [](const std::string& stem) {
        return R"({"binDesc": {"blockDim": 8, "kernelName": "k"}, "coreType": 2, "binPath": "p/A/)" +
               stem + R"(.o", "simplifiedKey": "A/d=1,p=0/1,2,()" + stem.substr(1) + ")\"}";
    };
    // b1: a complete runInfo, platformInfo with level 1; b2: the top-level fields only (what
    // skforge writes); b3: nothing of the run info, a platformInfo with level 2.
    skforge::test::write_text(ai + "/config/s/binary_info_config.json",
                              R"({"A": {"staticList": [)" + entry("b1") + "," + entry("b2") + "," +
                                  entry("b3") + "]}}");
    skforge::test::write_text(ai + "/p/A/b1.json", R"({"runInfo": {"aicpu_block_dim": 0,
        "block_dim": 8, "local_memory_size": 0, "schedule_mode": 0, "tiling_cond": 0,
        "tiling_key": 0, "clear_atomic": 0, "tiling_data": ""}, "workspace": {"num": 0},
        "platformInfo": {"cubeCoreCnt": 24, "vectorCoreCnt": 48, "deterministicLevel": 1}})");
    skforge::test::write_text(ai + "/p/A/b2.json", R"({"blockDim": 8, "localMemorySize": 0,
        "schedule_mode": 0, "workspace": {"num": 0}})");
    skforge::test::write_text(ai + "/p/A/b3.json", R"({"blockDim": 8,
        "platformInfo": {"cubeCoreCnt": 24, "vectorCoreCnt": 48, "deterministicLevel": 2}})");
    // 9.0.x: runInfo only, kept from entry to entry; no warning for the top-level fields it does
    // not read; deterministicLevel not read.
    auto r = opbase::read_static_kernels(dir / "opp", "s", opbase::Line::v9_0);
    REQUIRE(r.kernels.size() == 3);
    for (const auto& k : r.kernels) {
        CHECK(k.warnings.empty());
        CHECK(k.has_run_info);
    }
    CHECK_FALSE(r.kernels[0].run_info_inherited);
    CHECK(r.kernels[1].run_info_inherited);
    CHECK(r.kernels[2].run_info_inherited);
    CHECK(r.kernels[0].platform == opbase::Platform{24, 48, -1});
    CHECK(r.kernels[2].platform == opbase::Platform{24, 48, -1});
    // 9.1.x: master's run info (b3 lacks localMemorySize: a warning), no level.
    r = opbase::read_static_kernels(dir / "opp", "s", opbase::Line::v9_1);
    CHECK(r.kernels[1].has_run_info);
    CHECK_FALSE(r.kernels[1].run_info_inherited);
    CHECK_FALSE(r.kernels[2].has_run_info);
    CHECK(r.kernels[2].warnings.size() == 1);
    CHECK(r.kernels[2].platform == opbase::Platform{24, 48, -1});
    // master: the level too.
    r = opbase::read_static_kernels(dir / "opp", "s");
    CHECK(r.kernels[0].platform == opbase::Platform{24, 48, 1});
    CHECK(r.kernels[2].platform == opbase::Platform{24, 48, 2});
    CHECK(opbase::parse_line("9.0") == opbase::Line::v9_0);
    CHECK(opbase::parse_line("master") == opbase::Line::master);
    CHECK_FALSE(opbase::parse_line("9.2"));
}
