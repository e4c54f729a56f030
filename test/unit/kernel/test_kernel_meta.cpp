// SPDX-License-Identifier: Apache-2.0
#include "skforge/kernel/kernel_meta.hpp"
#include "skforge/kernel/soc.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace skforge::kernel;

TEST_CASE("kernel metadata fields are read", "[kernel][meta]") {
    std::vector<MetaProblem> problems;
    auto m = parse_kernel_meta(
        R"({"kernelName":"k","blockDim":24,"magic":"RT_DEV_BINARY_MAGIC_ELF_AIVEC",
        "opParaSize":16,"binFileName":"k","binFileSuffix":".o","workspace":{"num":2,"size":[10,20],"type":[0,1]},
        "sub_operator_kernel_type":"KERNEL_TYPE_MIX_AIC_1_2","supportSuperKernel":1,"sub_op_with_sync_all":true,
        "split_mode":8})",
        problems);
    CHECK(problems.empty());
    CHECK(m.block_dim == 24);
    CHECK(m.magic == 0x41415246);
    CHECK(m.workspace.total() == 30);
    CHECK(m.kernel_type == KernelType::mix_aic_1_2);
    CHECK(m.support_super_kernel);
    CHECK(m.sync_all);
    CHECK(m.split_mode == 8);
}

TEST_CASE("the magic table has the vendor's values and the host magic", "[kernel][meta]") {
    CHECK(find_magic("RT_DEV_BINARY_MAGIC_PLAIN")->value == 0xabceed50);
    CHECK(find_magic("RT_DEV_BINARY_MAGIC_PLAIN_AICPU")->value == 0xabceed51);
    CHECK(find_magic("RT_DEV_BINARY_MAGIC_PLAIN_AIVEC")->value == 0xabceed52);
    CHECK(find_magic("RT_DEV_BINARY_MAGIC_ELF")->value == 0x43554245);
    CHECK(find_magic("RT_DEV_BINARY_MAGIC_ELF_AICPU")->value == 0x41415243);
    CHECK(find_magic("RT_DEV_BINARY_MAGIC_ELF_AIVEC")->value == 0x41415246);
    CHECK(find_magic("RT_DEV_BINARY_MAGIC_ELF_AICUBE")->value == 0x41494343);
    CHECK(find_magic("RT_DEV_BINARY_MAGIC_ELF_AICPU")->aicpu);
    CHECK(find_magic(k_host_magic_name)->value == k_host_magic);
    CHECK(find_magic("NOPE") == nullptr);
}

TEST_CASE("bad metadata is reported field by field", "[kernel][meta]") {
    std::vector<MetaProblem> problems;
    parse_kernel_meta(R"({"kernelName":"k","blockDim":"x","magic":"BOGUS","sha256":"abc",
        "workspace":{"num":3,"size":[1]}})",
                      problems);
    std::vector<std::string> keys;
    for (const auto& p : problems)
        keys.push_back(p.key);
    CHECK(keys == std::vector<std::string>{"blockDim", "workspace", "magic", "sha256"});
    problems.clear();
    parse_kernel_meta("[1,2]", problems);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].message == "not a JSON object");
}

TEST_CASE("kernel and binary file names must be one path component", "[kernel][meta]") {
    auto problems_of = [](const std::string& fields) {
        std::vector<MetaProblem> problems;
        parse_kernel_meta(R"({"magic":"RT_DEV_BINARY_MAGIC_ELF",)" + fields + "}", problems);
        return problems;
    };
    CHECK(problems_of(R"("kernelName":"Add_1e3c","binFileName":"Add_1e3c")").empty());
    auto p = problems_of(R"("kernelName":"a/b")");
    REQUIRE(p.size() == 1);
    CHECK(p[0].key == "kernelName");
    CHECK(p[0].message == "'kernelName' 'a/b' contains '/' (it names files, so it must be one "
                          "path component)");
    p = problems_of(R"("kernelName":"k","binFileName":"..")");
    REQUIRE(p.size() == 1);
    CHECK(p[0].key == "binFileName");
    CHECK_THAT(p[0].message, Catch::StartsWith("'binFileName' '..' is '.' or '..'"));
    p = problems_of(R"("kernelName":"k","binFileName":"k","binFileSuffix":"/../../x")");
    REQUIRE(p.size() == 1);
    CHECK(p[0].key == "binFileSuffix");
    CHECK_THAT(p[0].message,
               Catch::StartsWith("'binFileName' + 'binFileSuffix' 'k/../../x' contains '/'"));
}

TEST_CASE("kernel types and core kinds", "[kernel][meta]") {
    CHECK(parse_kernel_type("KERNEL_TYPE_AIV_ONLY") == KernelType::aiv_only);
    CHECK_FALSE(parse_kernel_type("KERNEL_TYPE_MIX_AIC_2_1"));
    CHECK(is_vector_only(KernelType::aiv_only));
    CHECK(is_cube_only(KernelType::aic_only));
    CHECK_FALSE(is_vector_only(KernelType::mix_aic_1_2));
    CHECK(soc_cores("Ascend910B3", "dav-2201").aic == 20);
    CHECK(soc_cores("ascend910b3", "dav-2201").aic == 20); // any case, as soc_dir
    CHECK(soc_cores("Unknown", "").aiv == 48);
}

// The shape CANN's op compiler writes for a SuperKernel sub-operator (graph-autofusion
// super_kernel/tests/ut/test_super_kernel_sub_op_infos.py, asc-devkit
// super_kernel_sub_op_compile.py).
TEST_CASE("sub-operator fields of a SuperKernel sub-kernel are read", "[kernel][meta]") {
    std::vector<MetaProblem> problems;
    auto m = parse_kernel_meta(
        R"({"binFileName":"te_op_add","binFileSuffix":".o","blockDim":36,"kernelName":"te_op_add",
        "magic":"RT_DEV_BINARY_MAGIC_ELF_AIVEC","workspace":{"num":1,"size":[32],"type":[0]},
        "sub_operator_params":["input_x","input_y","output_z","workspace"],
        "sub_operator_kernel_type":"KERNEL_TYPE_AIV_ONLY",
        "sub_operator_kernel_name":{"AiCore":{"func_name":"add_aiv","obj_files":"add_aiv.o"},
            "dav-c220-cube":{"func_name":"add_aic","obj_files":"add_aic.o"},
            "dav-c220-vec":{"func_name":"add_aiv","obj_files":["add_aiv.o","more.o"]}},
        "sub_operator_early_start_set_flag":true,"sub_operator_early_start_wait_flag":false,
        "sub_operator_call_dcci_after_kernel_end":true,"sub_operator_op_type":"Add",
        "timestamp_option":false,"debugBufSize":2048,"debugOptions":"printf","taskRation":"0:1",
        "coreType":"VectorCore","compileInfo":{},"vendor_future":{"a":[1,2]}})",
        problems);
    CHECK(problems.empty());
    REQUIRE(m.sub_kernel_names.size() == 3);
    CHECK(m.sub_kernel_names.at("AiCore").func_name == "add_aiv");
    CHECK(m.sub_kernel_names.at("AiCore").obj_files == std::vector<std::string>{"add_aiv.o"});
    CHECK(m.sub_kernel_names.at("dav-c220-cube").func_name == "add_aic");
    CHECK(m.sub_kernel_names.at("dav-c220-vec").obj_files ==
          std::vector<std::string>{"add_aiv.o", "more.o"});
    CHECK(m.sub_operator_params ==
          std::vector<std::string>{"input_x", "input_y", "output_z", "workspace"});
    CHECK(m.early_start_set_flag);
    CHECK_FALSE(m.early_start_wait_flag);
    CHECK(m.call_dcci_after_kernel_end);
    CHECK_FALSE(m.call_dcci_before_kernel_start);
    CHECK(m.op_type == "Add");
    CHECK_FALSE(m.timestamp_option);
    CHECK(m.debug_buf_size == 2048);
    CHECK(m.debug_options == "printf");
    CHECK(uses_debug_buffer(m));
    CHECK(m.task_ration == "0:1");
    CHECK(m.core_type == "VectorCore");
    CHECK(m.extra_json == R"({"compileInfo":{},"vendor_future":{"a":[1,2]}})");
}

TEST_CASE("a kernel without sub-operator fields keeps the defaults", "[kernel][meta]") {
    std::vector<MetaProblem> problems;
    auto m = parse_kernel_meta(R"({"kernelName":"k","magic":"RT_DEV_BINARY_MAGIC_ELF"})", problems);
    CHECK(problems.empty());
    CHECK(m.sub_kernel_names.empty());
    CHECK(m.sub_operator_params.empty());
    CHECK_FALSE(m.early_start_set_flag);
    CHECK_FALSE(uses_debug_buffer(m));
    CHECK(m.extra_json == "{}");
}

TEST_CASE("wrongly typed sub-operator fields are reported by key", "[kernel][meta]") {
    std::vector<MetaProblem> problems;
    auto m = parse_kernel_meta(
        R"({"kernelName":"k","magic":"RT_DEV_BINARY_MAGIC_ELF","sub_operator_params":"x",
        "sub_operator_kernel_name":{"AiCore":{"func_name":7},"dav-c220-vec":{"func_name":"v","obj_files":3},
            "dynamic_func_names":{"1":{"AiCore":"f"}}},
        "sub_operator_early_start_set_flag":"yes","debugBufSize":-1})",
        problems);
    std::vector<std::string> keys;
    for (const auto& p : problems)
        keys.push_back(p.key);
    CHECK(keys == std::vector<std::string>{
                      "sub_operator_kernel_name.AiCore", "sub_operator_kernel_name.dav-c220-vec",
                      "sub_operator_params", "sub_operator_early_start_set_flag", "debugBufSize"});
    CHECK(m.sub_kernel_names.count("dynamic_func_names") == 0);
    problems.clear();
    parse_kernel_meta(
        R"({"kernelName":"k","magic":"RT_DEV_BINARY_MAGIC_ELF","sub_operator_kernel_name":[]})",
        problems);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].key == "sub_operator_kernel_name");
}

TEST_CASE("what the runtime reads beside a static kernel is read, checked and filled in",
          "[kernel][meta]") {
    using namespace skforge::kernel;
    std::vector<MetaProblem> problems;
    const std::string base = R"({"kernelName":"k","blockDim":8,"magic":"RT_DEV_BINARY_MAGIC_ELF")";
    auto m = parse_kernel_meta(base + R"(,"localMemorySize":4096,"schedule_mode":1,
        "supportInfo":{"implMode":"high_performance"},
        "platformInfo":{"cubeCoreCnt":24,"vectorCoreCnt":48,"deterministicLevel":1},
        "runInfo":{"aicpu_block_dim":0,"block_dim":8,"local_memory_size":0,"schedule_mode":1,
                   "tiling_cond":0,"tiling_key":7,"clear_atomic":0,"tiling_data":"0aff"}})",
                               problems);
    CHECK(problems.empty());
    CHECK(m.local_memory_size == 4096u);
    CHECK(m.schedule_mode == 1u);
    CHECK(m.impl_mode == "high_performance");
    CHECK(nlohmann::json::parse(m.platform_info_json)["vectorCoreCnt"] == 48);
    CHECK(nlohmann::json::parse(m.run_info_json)["tiling_key"] == 7);
    CHECK(nlohmann::json::parse(m.extra_json).contains("supportInfo")); // kept whole
    // The op compiler leaves them out for -1 and 0.
    m = parse_kernel_meta(base + "}", problems);
    CHECK_FALSE(m.local_memory_size);
    CHECK_FALSE(m.schedule_mode);
    CHECK(m.run_info_json.empty());
    // What the runtime would fail to read is refused, naming the field.
    for (
        const char* bad :
        {R"("localMemorySize":-1)", R"("schedule_mode":"1")", R"("runInfo":{"block_dim":8})",
         R"("runInfo":[])", R"("platformInfo":{"cubeCoreCnt":24})",
         R"("platformInfo":{"cubeCoreCnt":24,"vectorCoreCnt":48,"deterministicLevel":300})",
         R"("runInfo":{"aicpu_block_dim":0,"block_dim":8,"local_memory_size":0,"schedule_mode":1,"tiling_cond":0,"tiling_key":7,"clear_atomic":0,"tiling_data":"abc"})"}) {
        problems.clear();
        parse_kernel_meta(base + "," + bad + "}", problems);
        INFO(bad);
        CHECK(problems.size() >= 1);
    }
    // What asc-devkit 12c80e5d writes when it does not know the core counts: only the
    // deterministic level. Accepted and kept (the runtime drops it with a warning).
    problems.clear();
    m = parse_kernel_meta(base + R"(,"platformInfo":{"deterministicLevel":1}})", problems);
    CHECK(problems.empty());
    CHECK(nlohmann::json::parse(m.platform_info_json) == nlohmann::json{{"deterministicLevel", 1}});
    for (const char* bad : {R"("platformInfo":{"deterministicLevel":128})",
                            R"("platformInfo":{"vectorCoreCnt":48,"deterministicLevel":1})"}) {
        problems.clear();
        parse_kernel_meta(base + "," + bad + "}", problems);
        INFO(bad);
        CHECK(problems.size() == 1);
    }
    problems.clear();
    parse_kernel_meta(base + R"(,"runInfo":{"block_dim":8}})", problems);
    REQUIRE_FALSE(problems.empty());
    CHECK(problems[0].message ==
          "'runInfo.aicpu_block_dim' is missing: CANN's runtime (UpdateStaticJsonExtraInfo) would "
          "drop the kernel's runInfo with a warning");
}

TEST_CASE("with_runtime_fields fills only what is missing", "[kernel][meta]") {
    using namespace skforge::kernel;
    auto j = nlohmann::json::parse(with_runtime_fields(R"({"blockDim":8,"x":{"y":1}})"));
    CHECK(j == nlohmann::json::parse(R"({"blockDim":8,"x":{"y":1},"localMemorySize":0,
        "schedule_mode":0,"workspace":{"num":0,"size":[],"type":[]}})"));
    j = nlohmann::json::parse(with_runtime_fields(
        R"({"localMemorySize":64,"schedule_mode":1,"workspace":{"size":[8,16]}})",
        std::pair<std::uint32_t, std::uint32_t>{20, 40}));
    CHECK(j["localMemorySize"] == 64);
    CHECK(j["schedule_mode"] == 1);
    CHECK(j["workspace"]["num"] == 2);
    CHECK(j["platformInfo"] == nlohmann::json{{"cubeCoreCnt", 20}, {"vectorCoreCnt", 40}});
    j = nlohmann::json::parse(
        with_runtime_fields(R"({"platformInfo":{"cubeCoreCnt":1,"vectorCoreCnt":2}})",
                            std::pair<std::uint32_t, std::uint32_t>{20, 40}));
    CHECK(j["platformInfo"]["cubeCoreCnt"] == 1);
}

TEST_CASE("integer fields given as floats are taken only when whole and in range",
          "[kernel][meta]") {
    // A fuzz finding: "blockDim": 2e30 was converted with undefined behaviour.
    for (const char* bad : {"2e30", "-1.0", "1.5", "4294967296"}) {
        std::vector<MetaProblem> problems;
        parse_kernel_meta(std::string(R"({"kernelName":"k","magic":"RT_DEV_BINARY_MAGIC_ELF",)") +
                              R"("blockDim":)" + bad + "}",
                          problems);
        INFO(bad);
        CHECK(std::any_of(problems.begin(), problems.end(),
                          [](const MetaProblem& p) { return p.key == "blockDim"; }));
    }
    std::vector<MetaProblem> problems;
    auto m = parse_kernel_meta(
        R"({"kernelName":"k","magic":"RT_DEV_BINARY_MAGIC_ELF","blockDim":8.0})", problems);
    CHECK(m.block_dim == 8);
    // The same in arrays: every workspace size is read as the scalar would be.
    for (const char* bad : {"[2e30]", "[16, -1]", "[1.5]", "[\"16\"]"}) {
        std::vector<MetaProblem> ws_problems;
        parse_kernel_meta(std::string(R"({"kernelName":"k","magic":"RT_DEV_BINARY_MAGIC_ELF",)") +
                              R"("blockDim":1,"workspace":{"num":1,"size":)" + bad +
                              R"(,"type":[0]}})",
                          ws_problems);
        INFO(bad);
        CHECK(std::any_of(ws_problems.begin(), ws_problems.end(),
                          [](const MetaProblem& p) { return p.key == "size"; }));
    }
    std::vector<MetaProblem> ws_ok;
    auto w =
        parse_kernel_meta(R"({"kernelName":"k","magic":"RT_DEV_BINARY_MAGIC_ELF","blockDim":1,)"
                          R"("workspace":{"num":2,"size":[16, 32.0],"type":[0, 0]}})",
                          ws_ok);
    CHECK(w.workspace.size == std::vector<std::uint64_t>{16, 32});
}
