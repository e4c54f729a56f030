// SPDX-License-Identifier: Apache-2.0
// The NPU backend in the vendor's conventions. The scenarios are those of the vendor's SuperKernel
// compiler's system tests (hicann/graph-autofusion super_kernel/tests/st: two vector-only
// sub-kernels of blockDim 32 and 1 on stream 1, built by the op compiler as
// `<kernel>_middle(uint64_t args_offset)`, under each option), plus a MIX 1:2 SuperKernel, two
// streams, event locks and dav-3510. Each test asserts the constructs the vendor's expected
// source has for that option; the golden files at the end fix whole sources of the examples.
#include "graph_fixture.hpp"
#include "skforge/codegen/ascendc.hpp"
#include "skforge/graph/graph.hpp"
#include "skforge/support/atomic_file.hpp"
#include "skforge/support/file.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <random>
#include <set>
#include <sstream>

using namespace skforge;
using Catch::Contains;

namespace {

// How many times `what` occurs in `text`.
std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

// Where `what` first occurs; fails the test when it does not.
std::size_t at(const std::string& text, const std::string& what) {
    auto pos = text.find(what);
    INFO(what);
    REQUIRE(pos != std::string::npos);
    return pos;
}

// A sub-kernel as the op compiler writes it for SuperKernel use: its function renamed
// <kernelName>_middle, its parameters, and an object of `bytes` bytes.
void sub_kernel(test::ScopedTempDir& dir, const std::string& name, const std::string& type,
                int block_dim, const std::string& params, std::size_t bytes,
                const std::string& names, const std::string& extra = "", int split = 4) {
    test::write_text(dir / ("kernels/" + name + ".o"), std::string(bytes, 'x'));
    test::write_text(dir / ("kernels/" + name + ".json"),
                     R"({"kernelName":")" + name + R"(","blockDim":)" + std::to_string(block_dim) +
                         R"(,"magic":"RT_DEV_BINARY_MAGIC_ELF","sub_operator_kernel_type":")" +
                         type + R"(","supportSuperKernel":1,"split_mode":)" +
                         std::to_string(split) + "," + R"("sub_operator_kernel_name":)" + names +
                         R"(,"sub_operator_params":[)" + params + "]" + extra + "}");
}

std::string aicore(const std::string& func) {
    return R"({"AiCore":{"func_name":")" + func + R"(","obj_files":"k.o"}})";
}

// The ST scenario's graph: is_inf (blockDim 32) then pows (blockDim 1), both vector-only on
// stream 1, in one scope with `options`; `third` adds a second is_inf after pows.
struct Scenario {
    test::GraphFixture f;
    fusion::Plan plan;
    codegen::NpuTarget target{"dav-2201", "Ascend910B1", ""};

    /// Nothing loaded yet: write kernels into f.dir, then load().
    Scenario() = default;

    explicit Scenario(const std::string& options, bool third = false,
                      const std::string& pows_extra = "") {
        sub_kernel(f.dir, "is_inf__kernel0", "KERNEL_TYPE_AIV_ONLY", 32, R"("x","y","workspace")",
                   3000, aicore("is_inf__kernel0_middle"));
        sub_kernel(f.dir, "pows__kernel0", "KERNEL_TYPE_AIV_ONLY", 1,
                   R"("x1","x2","y","workspace")", 9000, aicore("pows__kernel0_middle"),
                   pows_extra);
        std::string yaml = "name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n"
                           "inputs: [{name: x, shape: [1024], dtype: float16}]\n"
                           "scopes:\n  sk: \"" +
                           options + "\"\nops:\n" + op("inf", "is_inf__kernel0", "x", "a") +
                           op("pows", "pows__kernel0", "a, x", "b");
        if (third)
            yaml += op("inf2", "is_inf__kernel0", "b", "c");
        load(yaml);
    }

    static std::string op(const std::string& name, const std::string& kernel,
                          const std::string& inputs, const std::string& out) {
        return "  - {name: " + name + ", type: T" + name +
               ", stream_id: 1, kernel: {json_path: " + "kernels/" + kernel +
               ".json, bin_path: kernels/" + kernel + ".o}, inputs: [" + inputs +
               "], outputs: [{name: " + out + ", shape: [1024], dtype: float16}], scope: sk}\n";
    }

    void load(const std::string& yaml) {
        INFO(yaml);
        REQUIRE(f.load(yaml));
        plan = fusion::make_plan(f.graph, f.diags);
        INFO(f.first());
        REQUIRE_FALSE(f.diags.has_errors());
        REQUIRE(plan.segments.size() == 1);
    }
    const fusion::Segment& seg() const { return plan.segments.front(); }
    std::string source() const { return codegen::npu_entry_source(f.graph, seg(), target); }
    std::vector<std::vector<std::vector<std::string>>> commands() const {
        return codegen::bisheng_commands(f.graph, seg(), target);
    }
    // The bisheng compiles, space-joined.
    std::vector<std::string> compiles() const {
        std::vector<std::string> out;
        auto stages = commands();
        for (const auto& c : stages.front())
            if (c.front() == "bisheng") {
                std::string line;
                for (const auto& w : c)
                    line += (line.empty() ? "" : " ") + w;
                out.push_back(line);
            }
        return out;
    }
};

// The vendor's defaults (early-start on, func-align 512) spelled out: skforge's scope defaults
// come from GE's graph options instead.
const std::string k_vendor_defaults = "early-start=1:func-align=512";

const std::string k_aiv_sync = "ffts_cross_core_sync(PIPE_MTE3, AscendC::GetffstMsg(0x0, "
                               "AscendC::SYNC_AIV_ONLY_ALL));\n";
const std::string k_aiv_wait = "wait_flag_dev(AscendC::SYNC_AIV_ONLY_ALL);";
const std::string k_early_defines = "-D__ASCENDC_ENABLE_SET_NEXT_TASK_START "
                                    "-D__ASCENDC_ENABLE_WAIT_PRE_TASK_END "
                                    "-D__ASCENDC_SUPERKERNEL_EARLY_START_V2";

} // namespace

TEST_CASE("ascendc ST default: entry, parameters, split calls, preload, early start, section",
          "[codegen][ascendc]") {
    Scenario sc(k_vendor_defaults);
    std::string src = sc.source();
    INFO(src);
    // The entry the runtime launches: no arguments, aligned, its parameters from the table.
    CHECK_THAT(src, Contains("extern \"C\" __global__ __attribute__((aligned(512))) __aicore__ "
                             "void auto_gen_t_sk_kernel(void) {"));
    CHECK_THAT(src, Contains("GM_ADDR *param_base = (GM_ADDR *)get_para_base();"));
    CHECK_THAT(src, Contains("GM_ADDR ffts_addr = param_base[0];"));
    CHECK_THAT(src, Contains("set_ffts_base_addr((uint64_t)ffts_addr);"));
    // The op compiler's SuperKernel builds and their split copies, each declared once.
    for (std::string f : {"is_inf__kernel0_middle", "pows__kernel0_middle"})
        for (std::string s : {"", "_split1", "_split2", "_split3"})
            CHECK(count(src, "extern \"C\" __aicore__ void " + f + s + "(uint64_t args_offset);") ==
                  1);
    // Called with their first parameter's slot: 1 after the FFTS address, 4 = 1 + 3 parameters.
    CHECK_THAT(src, Contains("is_inf__kernel0_middle(1);"));
    CHECK_THAT(src, Contains("is_inf__kernel0_middle_split3(1);"));
    CHECK_THAT(src, Contains("pows__kernel0_middle_split2(4);"));
    // On the vector cores below each blockDim, one copy per core id modulo split-mode.
    CHECK_THAT(src, Contains("if ASCEND_IS_AIV {\n        if (AscendC::GetBlockIdx() < 32) {"));
    CHECK_THAT(src, Contains("if (AscendC::GetBlockIdx() < 1) {"));
    CHECK_THAT(src, Contains("uint8_t coreid = (uint8_t)get_coreid();"));
    CHECK_THAT(src, Contains("if ((coreid % 4) == 0) {"));
    CHECK_THAT(src, Contains("} else if ((coreid % 4) == 2) {"));
    // preload-code=per-func: both sub-kernels' code before the first runs, in 2 KiB lines.
    auto first_call = at(src, "is_inf__kernel0_middle(1);");
    CHECK(at(src, "preload((const void *)is_inf__kernel0_middle, 2);") < first_call);
    CHECK(at(src, "preload((const void *)pows__kernel0_middle_split3, 5);") < first_call);
    // Early start between them: set on the vector cores, config (vector << 2) | vector = 5.
    auto barrier = at(src, "AscendC::SetNextTaskStart();");
    CHECK(barrier > first_call);
    CHECK_THAT(src, Contains("// AIV only, no complement early start set flag."));
    CHECK_THAT(src, Contains("g_super_kernel_early_start_config = 5;"));
    CHECK(count(src, "AscendC::WaitPreTaskEndImpl<5>();") == 2); // vector and cube cores
    CHECK(at(src, "pows__kernel0_middle(4);") > at(src, "AscendC::WaitPreTaskEndImpl<5>();"));
    CHECK(count(src, "ffts_cross_core_sync") == 0);
    // The runtime's record of the kernel type: MIX with vector cores only.
    CHECK_THAT(src, Contains("static const struct FunLevelMixCoreType t_sk_mix_aiv_section "
                             "__attribute__ ((used, section (\".ascend.meta.t_sk_mix_aiv\"))) = "
                             "{ {{F_TYPE_KTYPE, sizeof(unsigned int)}, K_TYPE_MIX_AIV_MAIN}, "
                             "{{F_TYPE_MIX_TASK_RATION, sizeof(unsigned int)}, 0, 1} };"));
    auto launch = codegen::npu_launch(sc.f.graph, sc.seg(), sc.target);
    CHECK(launch.type == kernel::KernelType::mix_aiv_1_0);
    CHECK(launch.block_dim == 32);
    auto compiles = sc.compiles();
    REQUIRE(compiles.size() == 1);
    CHECK_THAT(compiles[0], Contains(k_early_defines));
    CHECK_THAT(compiles[0], Contains("--cce-aicore-arch=dav-c220-vec --cce-aicore-only"));
    CHECK_THAT(compiles[0], Contains("-Dauto_gen_t_sk_kernel=t_sk_mix_aiv"));
}

TEST_CASE("ascendc ST early-start=0: cross-core sync of the vector cores between sub-kernels",
          "[codegen][ascendc]") {
    Scenario sc("early-start=0:func-align=512");
    std::string src = sc.source();
    INFO(src);
    CHECK(count(src, "SetNextTaskStart") == 0);
    CHECK(count(src, "WaitPreTaskEnd") == 0);
    CHECK(count(src, "g_super_kernel_early_start_config") == 0);
    CHECK(count(src, k_aiv_sync) == 1);
    auto sync = at(src, k_aiv_sync);
    CHECK(at(src, k_aiv_wait) > sync);
    CHECK(sync > at(src, "is_inf__kernel0_middle(1);"));
    CHECK(sync < at(src, "pows__kernel0_middle(4);"));
    auto compiles = sc.compiles();
    REQUIRE(compiles.size() == 1);
    CHECK(count(compiles[0], "EARLY_START") == 0);
    CHECK(count(compiles[0], "TASK_START") == 0);
}

TEST_CASE("ascendc ST debug-sync-all=1: the vector cores synchronise after every sub-kernel",
          "[codegen][ascendc]") {
    Scenario sc(k_vendor_defaults + ":debug-sync-all=1");
    std::string src = sc.source();
    INFO(src);
    CHECK(count(src, k_aiv_sync) == 2);
    CHECK(count(src, k_aiv_wait) == 2);
    CHECK(at(src, k_aiv_sync) > at(src, "is_inf__kernel0_middle(1);"));
    CHECK(src.rfind(k_aiv_sync) > at(src, "pows__kernel0_middle(4);"));
    CHECK(count(src, "AscendC::SetNextTaskStart();") == 1); // early start stays
}

TEST_CASE("ascendc ST debug-dcci-all=1: the data cache written back after every sub-kernel",
          "[codegen][ascendc]") {
    Scenario sc(k_vendor_defaults + ":debug-dcci-all=1");
    std::string src = sc.source();
    INFO(src);
    std::string dcci = "pipe_barrier(PIPE_ALL);\n";
    CHECK(count(src, dcci) == 2);
    CHECK(count(src, "dcci((__gm__ uint64_t*)0, cache_line_t::ENTIRE_DATA_CACHE, "
                     "dcci_dst_t::CACHELINE_OUT);") == 2);
    CHECK(src.rfind(dcci) > at(src, "pows__kernel0_middle(4);"));
    CHECK(count(src, "dcci-before-kernel-start") == 0); // the sub-kernels' own option
}

TEST_CASE("ascendc ST feed-sync-all=1: the flag area after the parameters, cleared, per kernel",
          "[codegen][ascendc]") {
    Scenario sc(k_vendor_defaults + ":feed-sync-all=1");
    std::string src = sc.source();
    INFO(src);
    // Slot 8: the FFTS address, 3 + 4 parameters, then the workspace.
    CHECK_THAT(src, Contains("GM_ADDR workspace = param_base[8];"));
    CHECK(codegen::npu_param_layout(sc.f.graph, sc.seg(), sc.target).workspace_offset == 8);
    CHECK_THAT(src, Contains("AscendC::g_superKernelAutoSyncAllConfigGmBaseAddr = workspace;"));
    // 32 cores x 512 bytes: two sub-kernels need 2 x 128.
    CHECK(codegen::npu_sync_bytes(sc.f.graph, sc.seg(), sc.target) == 16384);
    CHECK_THAT(src, Contains("uint32_t sizePerCore = 16384 / get_block_num();"));
    CHECK(at(src, "sizePerCore") > at(src, "set_ffts_base_addr"));
    // Neither sub-kernel synchronises all cores itself: feeding is off for both.
    CHECK(count(src, "AscendC::g_superKernelAutoSyncAllEnable = false;") == 2);
    CHECK_THAT(sc.compiles()[0], Contains("-D__ASCENDC_SUPERKERNEL_AUTO_SYNC_ALL__"));
}

TEST_CASE("ascendc feed-sync-all=1 with a sub-kernel that synchronises all cores on fewer",
          "[codegen][ascendc]") {
    Scenario sc(k_vendor_defaults + ":feed-sync-all=1", false, R"(,"sub_op_with_sync_all":1)");
    std::string src = sc.source();
    INFO(src);
    CHECK(count(src, "AscendC::g_superKernelAutoSyncAllEnable = false;") == 1); // is_inf
    CHECK(count(src, "AscendC::g_superKernelAutoSyncAllEnable = true;") == 1);  // pows
    // Its flag lines: 64 bytes per sub-kernel and kind of core.
    CHECK_THAT(src,
               Contains("AscendC::g_superKernelAutoSyncAllConfigGmBaseAddr + 2 * 64 + 1 * 64;"));
    CHECK(count(src, "AscendC::SuperKernelAutoSyncAllEndImpl();") == 4); // each split copy
    CHECK(count(src, "AscendC::SuperKernelAutoSyncAllComplementImpl();") == 1);
}

TEST_CASE("ascendc ST preload-code=max: one whole preload, none per sub-kernel",
          "[codegen][ascendc]") {
    Scenario sc(k_vendor_defaults + ":preload-code=max");
    std::string src = sc.source();
    INFO(src);
    CHECK(count(src, "AscendC::PreLoad(8);") == 1);
    CHECK(at(src, "AscendC::PreLoad(8);") < at(src, "is_inf__kernel0_middle(1);"));
    CHECK(count(src, "preload((const void *)") == 0);
    Scenario none(k_vendor_defaults + ":preload-code=none");
    CHECK(count(none.source(), "reload") == 0);
}

TEST_CASE("ascendc ST func-align=256: the entry's alignment", "[codegen][ascendc]") {
    Scenario sc("early-start=1:func-align=256");
    CHECK_THAT(sc.source(), Contains("extern \"C\" __global__ __attribute__((aligned(256))) "
                                     "__aicore__ void auto_gen_t_sk_kernel(void)"));
    Scenario none("early-start=1:func-align=0");
    CHECK(count(none.source(), "aligned(") == 0);
}

TEST_CASE("ascendc ST three operators: offsets run on, each preload one step ahead",
          "[codegen][ascendc]") {
    Scenario sc(k_vendor_defaults, true);
    std::string src = sc.source();
    INFO(src);
    CHECK_THAT(src, Contains("is_inf__kernel0_middle(8);")); // 1 + 3 + 4
    CHECK(count(src, "extern \"C\" __aicore__ void is_inf__kernel0_middle(uint64_t") == 1);
    CHECK(count(src, "g_super_kernel_early_start_config = 5;") == 2);
    // The third's code is fetched while the first runs.
    auto third_preload = src.rfind("preload((const void *)is_inf__kernel0_middle, 2);");
    CHECK(third_preload > at(src, "is_inf__kernel0_middle(1);"));
    CHECK(third_preload < at(src, "pows__kernel0_middle(4);"));
}

TEST_CASE("ascendc MIX 1:2: cube and vector halves, AI-core block index, two compiles",
          "[codegen][ascendc]") {
    Scenario sc;
    sub_kernel(sc.f.dir, "mm", "KERNEL_TYPE_MIX_AIC_1_2", 24, R"("a","b","c","workspace")", 5000,
               R"({"dav-c220-cube":{"func_name":"mm_middle_mix_aic","obj_files":"mm_aic.o"},)"
               R"("dav-c220-vec":{"func_name":"mm_middle_mix_aiv","obj_files":"mm_aiv.o"}})",
               "", 1);
    sub_kernel(sc.f.dir, "relu", "KERNEL_TYPE_AIV_ONLY", 48, R"("x","y","workspace")", 3000,
               aicore("relu_middle"), "", 1);
    sc.load("name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n"
            "inputs: [{name: x, shape: [1024], dtype: float16}]\n"
            "scopes:\n  sk: \"early-start=0:split-mode=1\"\nops:\n" +
            Scenario::op("mm", "mm", "x, x", "a") + Scenario::op("relu", "relu", "a", "b"));
    std::string src = sc.source();
    INFO(src);
    auto launch = codegen::npu_launch(sc.f.graph, sc.seg(), sc.target);
    CHECK(launch.type == kernel::KernelType::mix_aic_1_2);
    CHECK(launch.block_dim == 24); // 48 vector cores are 24 AI cores
    // The MIX kernel counts AI cores on both kinds; the vector kernel counts vector cores.
    CHECK_THAT(src, Contains("if ASCEND_IS_AIC {\n        if (get_block_idx() < 24) {\n"
                             "            mm_middle_mix_aic(1);"));
    CHECK_THAT(src, Contains("if ASCEND_IS_AIV {\n        if (get_block_idx() < 24) {\n"
                             "            mm_middle_mix_aiv(1);"));
    CHECK_THAT(src, Contains("if (AscendC::GetBlockIdx() < 48) {\n            relu_middle(5);"));
    CHECK(count(src, "_split1") == 0); // split-mode=1
    CHECK_THAT(src, Contains("__gm__ struct OpSystemRunCfg g_opSystemRunCfg = {0};"));
    // early-start=0 in a MIX SuperKernel: all cores of both kinds.
    CHECK(count(src, "AscendC::SyncAll<false>();") == 1);
    for (std::string half : {"aic", "aiv"}) {
        std::string core = half == "aic" ? "__DAV_CUBE__" : "__DAV_VEC__";
        CHECK_THAT(src, Contains("#if (defined(" + core +
                                 ") && __NPU_ARCH__ == 2201)\n"
                                 "static const struct FunLevelMixCoreType t_sk_mix_" +
                                 half + "_section"));
    }
    CHECK(count(src, "K_TYPE_MIX_AIC_MAIN}, {{F_TYPE_MIX_TASK_RATION, sizeof(unsigned int)}, 1, "
                     "2} };") == 2);
    auto compiles = sc.compiles();
    REQUIRE(compiles.size() == 2);
    CHECK_THAT(compiles[0], Contains("--cce-aicore-arch=dav-c220-cube"));
    CHECK_THAT(compiles[0], Contains("-o obj/sk_mix_aic.o"));
    CHECK_THAT(compiles[1], Contains("--cce-aicore-arch=dav-c220-vec"));
    for (const auto& c : compiles) {
        CHECK_THAT(c, Contains("-D__MIX_CORE_MACRO__=1"));
        CHECK(count(c, "-cce-aicore-long-call") == 0);
    }
}

TEST_CASE("ascendc two streams: a program per kind of core, cross-core flags for dependencies",
          "[codegen][ascendc]") {
    Scenario sc;
    sub_kernel(sc.f.dir, "v", "KERNEL_TYPE_AIV_ONLY", 48, R"("x","y","workspace")", 3000,
               aicore("v_middle"), "", 1);
    sub_kernel(sc.f.dir, "c", "KERNEL_TYPE_AIC_ONLY", 24, R"("x","y","workspace")", 3000,
               aicore("c_middle"), "", 1);
    auto op = [](const std::string& name, const std::string& k, int stream,
                 const std::string& inputs, const std::string& extra) {
        return "  - {name: " + name + ", type: T" + name +
               ", stream_id: " + std::to_string(stream) + ", kernel: {json_path: kernels/" + k +
               ".json, bin_path: kernels/" + k + ".o}, inputs: [" + inputs +
               "], outputs: [{name: " + name + "_out, shape: [1024], dtype: float16}], scope: sk" +
               extra + "}\n";
    };
    // a (vector, stream 0) and b (cube, stream 1) are independent; c (vector, stream 0) needs
    // both: a by stream order, b by event 3.
    sc.load("name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n"
            "inputs: [{name: x, shape: [1024], dtype: float16}]\n"
            "scopes:\n  sk: \"stream-fusion=1:early-start=1:split-mode=1\"\nops:\n" +
            op("a", "v", 0, "x", "") + op("b", "c", 1, "x", ", send_event_list: [3]") +
            op("c", "v", 0, "a_out, b_out", ", recv_event_list: [3]"));
    std::string src = sc.source();
    INFO(src);
    // From the 9.0 line (asc-devkit's generator, which the graph engine builds) the two programs
    // are always inlined into the entry; the 8.5 line's are plain `inline`.
    auto aic = at(src, "__aicore__ inline __attribute__((always_inline)) void "
                       "auto_gen_t_sk_kernel_aic(void) {");
    auto aiv = at(src, "__aicore__ inline __attribute__((always_inline)) void "
                       "auto_gen_t_sk_kernel_aiv(void) {");
    for (auto cann : {codegen::CannVersion::v8_5, codegen::CannVersion::v9_1}) {
        codegen::NpuTarget line = sc.target;
        line.cann = cann;
        std::string text = codegen::npu_entry_source(sc.f.graph, sc.seg(), line);
        bool always = cann != codegen::CannVersion::v8_5;
        for (std::string side : {"aic", "aiv"})
            CHECK(count(text, std::string("__aicore__ inline ") +
                                  (always ? "__attribute__((always_inline)) " : "") +
                                  "void auto_gen_t_sk_kernel_" + side + "(void) {") == 1);
    }
    auto entry = at(src, "void auto_gen_t_sk_kernel(void) {");
    CHECK(aic < aiv);
    CHECK(aiv < entry);
    CHECK_THAT(src, Contains("if ASCEND_IS_AIC {\n        auto_gen_t_sk_kernel_aic();\n    }"));
    CHECK_THAT(src, Contains("if ASCEND_IS_AIV {\n        auto_gen_t_sk_kernel_aiv();\n    }"));
    // Early start is the vendor's single-program mechanism: off here, so no defines either.
    CHECK(count(src, "SetNextTaskStart") == 0);
    CHECK(count(sc.compiles()[0], "EARLY_START") == 0);
    // b (cube) tells c (vector) through the cube-to-vector flag: one set, one wait.
    std::string set = "ffts_cross_core_sync(PIPE_MTE3, AscendC::GetffstMsg(0x02, "
                      "AscendC::SYNC_AIC_AIV_FLAG));";
    std::string wait = "wait_flag_dev(AscendC::SYNC_AIC_AIV_FLAG);";
    CHECK(count(src, set) == 1);
    CHECK(count(src, wait) == 1);
    CHECK(at(src, set) > at(src, "c_middle(4);"));
    CHECK(at(src, set) < aiv);
    CHECK(at(src, wait) > aiv);
    CHECK(at(src, wait) < at(src, "v_middle(8);")); // b's event lock took slot 7
    // a then c on stream 0: the vector cores synchronise between them.
    auto a_call = at(src, "v_middle(1);");
    CHECK(at(src, k_aiv_sync) > a_call);
    CHECK(at(src, k_aiv_sync) < at(src, "v_middle(8);"));
    // The event is inside: no lock.
    CHECK(count(src, "NotifyFunc<") == 0);
    CHECK(count(src, "WaitFunc<") == 0);
}

namespace {

// A two-stream entry's cross-core flags run as the hardware counts them. Each kind of core's
// program is read as a list of points: the call of each sub-kernel ("// [p] ..." starts its
// block) and the sets and waits of the flag of each direction; the k-th wait of a direction
// passes on the k-th set. ordered(p, q) tells whether sub-kernel q's call on the cores of its
// kind can start only after sub-kernel p's call on the other kind ended, by program order and
// those pairs alone: it does not know which edge a flag was meant for.
class FlagRun {
  public:
    FlagRun(const std::string& src, const std::string& kernel) {
        // A kind with no sub-kernel has no program.
        auto entry = at(src, "void auto_gen_" + kernel + "_kernel(void) {");
        auto aic = src.find("void auto_gen_" + kernel + "_kernel_aic(void) {");
        auto aiv = src.find("void auto_gen_" + kernel + "_kernel_aiv(void) {");
        if (aic != npos)
            read(0, src.substr(aic, (aiv != npos ? aiv : entry) - aic));
        if (aiv != npos)
            read(1, src.substr(aiv, entry - aiv));
    }
    // Sets and waits of the flag from kind `from` (0 cube, 1 vector).
    std::size_t sets(int from) const { return count_of(from, Point::set); }
    std::size_t waits(int from) const { return count_of(1 - from, Point::wait); }
    // q's call on kind `to` after p's call on the other kind.
    bool ordered(std::size_t p, std::size_t q, int to) const {
        auto from = call_of(1 - to, p), target = call_of(to, q);
        REQUIRE(from.second != npos);
        REQUIRE(target.second != npos);
        std::set<std::pair<int, std::size_t>> seen{from};
        std::vector<std::pair<int, std::size_t>> todo{from};
        while (!todo.empty()) {
            auto [side, i] = todo.back();
            todo.pop_back();
            if (side == target.first && i <= target.second)
                return true;
            std::vector<std::pair<int, std::size_t>> next;
            if (i + 1 < pts(side).size())
                next.emplace_back(side, i + 1);
            if (pts(side)[i].kind == Point::set) { // the matching wait on the other kind
                std::size_t k = rank(side, i, Point::set);
                auto w = nth(1 - side, Point::wait, k);
                if (w != npos)
                    next.emplace_back(1 - side, w);
            }
            for (auto n : next)
                if (seen.insert(n).second)
                    todo.push_back(n);
        }
        return false;
    }

  private:
    static constexpr std::size_t npos = std::string::npos;
    struct Point {
        enum Kind { call, set, wait } kind;
        std::size_t sub;
    };
    void read(int side, const std::string& text) {
        const std::string set = side == 0 ? "GetffstMsg(0x02, AscendC::SYNC_AIC_AIV_FLAG)"
                                          : "GetffstMsg(0x02, AscendC::SYNC_AIV_FLAG)";
        const std::string wait = side == 0 ? "wait_flag_dev(AscendC::SYNC_AIV_FLAG);"
                                           : "wait_flag_dev(AscendC::SYNC_AIC_AIV_FLAG);";
        std::istringstream in(text);
        std::string line;
        std::size_t sub = npos;
        bool called = false;
        while (std::getline(in, line)) {
            auto h = line.find("// [");
            if (h != npos && line.find("] ", h) != npos && line.find(": KERNEL_TYPE") != npos) {
                sub = std::stoul(line.substr(h + 4));
                called = false;
            } else if (line.find(set) != npos) {
                pts(side).push_back({Point::set, sub});
            } else if (line.find(wait) != npos) {
                pts(side).push_back({Point::wait, sub});
            } else if (!called && line.find("preload(") == npos && line.find("_middle(") != npos) {
                pts(side).push_back({Point::call, sub});
                called = true;
            }
        }
    }
    std::size_t count_of(int side, Point::Kind k) const {
        return static_cast<std::size_t>(std::count_if(pts(side).begin(), pts(side).end(),
                                                      [&](const Point& p) { return p.kind == k; }));
    }
    std::size_t rank(int side, std::size_t i, Point::Kind k) const {
        std::size_t r = 0;
        for (std::size_t j = 0; j < i; ++j)
            r += pts(side)[j].kind == k ? 1u : 0u;
        return r;
    }
    std::size_t nth(int side, Point::Kind k, std::size_t n) const {
        for (std::size_t j = 0; j < pts(side).size(); ++j)
            if (pts(side)[j].kind == k && n-- == 0)
                return j;
        return npos;
    }
    std::pair<int, std::size_t> call_of(int side, std::size_t sub) const {
        for (std::size_t j = 0; j < pts(side).size(); ++j)
            if (pts(side)[j].kind == Point::call && pts(side)[j].sub == sub)
                return {side, j};
        return {side, npos};
    }
    std::vector<Point>& pts(int side) { return m_points[static_cast<std::size_t>(side)]; }
    const std::vector<Point>& pts(int side) const {
        return m_points[static_cast<std::size_t>(side)];
    }
    std::vector<Point> m_points[2];
};

// A two-stream graph of cube ("c", AIC_ONLY) and vector ("v", AIV_ONLY) sub-kernels: kinds,
// streams, and events as (sender, receiver) positions.
struct TwoStreamGraph {
    std::string kinds;
    std::vector<int> streams;
    std::vector<std::pair<std::size_t, std::size_t>> events;

    std::string yaml() const {
        std::string out = "name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n"
                          "inputs: [{name: x, shape: [1024], dtype: float16}]\n"
                          "scopes:\n  sk: \"stream-fusion=1:split-mode=1\"\nops:\n";
        for (std::size_t p = 0; p < kinds.size(); ++p) {
            std::string send, recv;
            for (std::size_t e = 0; e < events.size(); ++e) {
                auto id = std::to_string(100 + e);
                if (events[e].first == p)
                    send += (send.empty() ? "" : ", ") + id;
                if (events[e].second == p)
                    recv += (recv.empty() ? "" : ", ") + id;
            }
            std::string k(1, kinds[p]);
            out += "  - {name: o" + std::to_string(p) + ", type: T" + k +
                   ", stream_id: " + std::to_string(streams[p]) + ", kernel: {json_path: kernels/" +
                   k + ".json, bin_path: kernels/" + k + ".o}, inputs: [x], outputs: [{name: o" +
                   std::to_string(p) + "_out, shape: [1024], dtype: float16}], scope: sk" +
                   (send.empty() ? "" : ", send_event_list: [" + send + "]") +
                   (recv.empty() ? "" : ", recv_event_list: [" + recv + "]") + "}\n";
        }
        return out;
    }
};

// Every cross-kind dependency of `g` (each event, and each next sub-kernel of a stream) ordered
// by the flags its entry writes, and each direction's sets as many as its waits.
void check_flags_order(const TwoStreamGraph& g) {
    Scenario sc;
    sub_kernel(sc.f.dir, "v", "KERNEL_TYPE_AIV_ONLY", 48, R"("x","y","workspace")", 3000,
               aicore("v_middle"), "", 1);
    sub_kernel(sc.f.dir, "c", "KERNEL_TYPE_AIC_ONLY", 24, R"("x","y","workspace")", 3000,
               aicore("c_middle"), "", 1);
    sc.load(g.yaml());
    std::string src = sc.source();
    INFO(g.yaml());
    INFO(src);
    REQUIRE_THAT(src, Contains("two-stream mode"));
    FlagRun run(src, "t_sk");
    CHECK(run.sets(0) == run.waits(0));
    CHECK(run.sets(1) == run.waits(1));
    std::vector<std::pair<std::size_t, std::size_t>> deps = g.events;
    for (std::size_t p = 0; p < g.kinds.size(); ++p)
        for (std::size_t q = p + 1; q < g.kinds.size(); ++q)
            if (g.streams[q] == g.streams[p]) {
                deps.emplace_back(p, q);
                break;
            }
    for (auto [p, q] : deps)
        if (g.kinds[p] != g.kinds[q]) {
            INFO("[" << p << "] -> [" << q << "]");
            CHECK(run.ordered(p, q, g.kinds[q] == 'c' ? 0 : 1));
        }
}

} // namespace

TEST_CASE("ascendc two streams: crossed events keep their order with counting flags",
          "[codegen][ascendc]") {
    // o0 (cube, stream 0) tells o4 (vector, stream 1), o2 (cube, stream 0) tells o3 (vector,
    // stream 1); o1 (vector, stream 1) is independent and makes the entry two-stream. The
    // vector cores wait once before o3: that wait must pass on o2's set, not on o0's, so o0's
    // flag to o4 (implied: o0, o2, o3, o4) is dropped, as the vendor drops it.
    check_flags_order({"cvcvv", {0, 1, 0, 1, 1}, {{0, 4}, {2, 3}}});
    check_flags_order({"vcvcc", {0, 1, 0, 1, 1}, {{0, 4}, {2, 3}}});
}

TEST_CASE("ascendc two streams: random graphs keep every cross-kind dependency",
          "[codegen][ascendc]") {
    std::mt19937 rng(20261202);
    for (int round = 0; round < 150; ++round) {
        TwoStreamGraph g;
        std::size_t n = 3 + rng() % 6;
        for (std::size_t p = 0; p < n; ++p) {
            g.kinds += rng() % 2 ? 'c' : 'v';
            g.streams.push_back(p < 2 ? static_cast<int>(p) : static_cast<int>(rng() % 2));
        }
        // Events between streams, never between o0 and o1 (their neighbourhood makes the entry
        // two-stream), each pair at most once.
        for (std::size_t p = 0; p < n; ++p)
            for (std::size_t q = p + 1; q < n; ++q)
                if (g.streams[p] != g.streams[q] && !(p == 0 && q == 1) && rng() % 10 < 4)
                    g.events.emplace_back(p, q);
        check_flags_order(g);
    }
}

TEST_CASE("ascendc events with the outside: locks in the parameter table, reset by the kernel",
          "[codegen][ascendc]") {
    Scenario sc;
    sub_kernel(sc.f.dir, "v", "KERNEL_TYPE_AIV_ONLY", 48, R"("x","y","workspace")", 3000,
               aicore("v_middle"), "", 1);
    auto op = [](const std::string& name, int stream, const std::string& input,
                 const std::string& extra) {
        return "  - {name: " + name + ", type: T" + name +
               ", stream_id: " + std::to_string(stream) +
               ", kernel: {json_path: kernels/v.json, bin_path: kernels/v.o}, inputs: [" + input +
               "], outputs: [{name: " + name + "_out, shape: [1024], dtype: float16}]" + extra +
               "}\n";
    };
    // head (stream 2, outside) tells b; a tells tail (stream 2, outside).
    sc.load("name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n"
            "inputs: [{name: x, shape: [1024], dtype: float16}]\n"
            "scopes:\n  sk: \"early-start=1:split-mode=1\"\nops:\n" +
            op("head", 2, "x", ", send_event_list: [7]") +
            op("a", 1, "x", ", scope: sk, send_event_list: [8]") +
            op("b", 1, "a_out", ", scope: sk, recv_event_list: [7]") +
            op("tail", 2, "x", ", recv_event_list: [8]"));
    auto layout = codegen::npu_param_layout(sc.f.graph, sc.seg(), sc.target);
    CHECK(layout.param_offset == std::vector<std::uint32_t>{1, 5});
    CHECK(layout.notify_offset == std::vector<std::uint32_t>{4, 8});
    CHECK(layout.wait_offset == std::vector<std::uint32_t>{5, 8});
    CHECK(layout.workspace_offset == 9);
    std::string src = sc.source();
    INFO(src);
    auto notify = at(src, "NotifyFunc<false>(param_base[4]);");
    auto wait = at(src, "WaitFunc<false>(param_base[8]);");
    CHECK(notify > at(src, "v_middle(1);"));
    CHECK(notify > at(src, "AscendC::WaitPreTaskEndImpl<5>();")); // after a finished
    CHECK(wait < at(src, "v_middle(5);"));
    // The kernel leaves b's lock at 0 for the next launch, after b.
    auto reset = at(src, "reinterpret_cast<__gm__ uint64_t*>(param_base[8]);\n"
                         "            *lock = 0;");
    CHECK(reset > at(src, "v_middle(5);"));
}

// A sub-kernel of kind `before` then one of kind `current` that waits for an operator on
// another stream: the entry under CANN line `cann`.
std::string wait_after(const std::string& before, const std::string& current,
                       codegen::CannVersion cann) {
    Scenario sc;
    sc.target.cann = cann;
    auto names = [](const std::string& type, const std::string& f) {
        return type.find("AIV") != std::string::npos ? aicore(f + "_middle")
               : type.find("AIC_ONLY") != std::string::npos
                   ? aicore(f + "_middle")
                   : R"({"dav-c220-cube":{"func_name":")" + f + R"(_mix_aic","obj_files":"k.o"},)" +
                         R"("dav-c220-vec":{"func_name":")" + f +
                         R"(_mix_aiv","obj_files":"k.o"}})";
    };
    sub_kernel(sc.f.dir, "p", before, 8, R"("x","y","workspace")", 3000, names(before, "p"), "", 1);
    sub_kernel(sc.f.dir, "c", current, 8, R"("x","y","workspace")", 3000, names(current, "c"), "",
               1);
    auto op = [](const std::string& name, const std::string& k, int stream,
                 const std::string& input, const std::string& extra) {
        return "  - {name: " + name + ", type: T" + name +
               ", stream_id: " + std::to_string(stream) + ", kernel: {json_path: kernels/" + k +
               ".json, bin_path: kernels/" + k + ".o}, inputs: [" + input +
               "], outputs: [{name: " + name + "_out, shape: [1024], dtype: float16}]" + extra +
               "}\n";
    };
    sc.load("name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n"
            "inputs: [{name: x, shape: [1024], dtype: float16}]\n"
            "scopes:\n  sk: \"early-start=1:split-mode=1:stream-fusion=0\"\nops:\n" +
            op("head", "p", 2, "x", ", send_event_list: [7]") +
            op("a", "p", 1, "x", ", scope: sk") +
            op("b", "c", 1, "a_out", ", scope: sk, recv_event_list: [7]"));
    return sc.source();
}

const std::string k_hold_vector = "// the barrier below does not hold the vector cores: hold them "
                                  "here\n    AscendC::SyncAll<true>();";
const std::string k_hold_cube =
    "// the barrier below does not hold the cube cores: hold them "
    "here\n    ffts_cross_core_sync(PIPE_FIX, AscendC::GetffstMsg(0x0, "
    "AscendC::SYNC_AIC_FLAG));\n    wait_flag_dev(AscendC::SYNC_AIC_FLAG);";

TEST_CASE("ascendc wait after another kind of core: each CANN line's extra synchronisation",
          "[codegen][ascendc]") {
    using codegen::CannVersion;
    const std::string aic = "KERNEL_TYPE_AIC_ONLY", aiv = "KERNEL_TYPE_AIV_ONLY",
                      mix_aic = "KERNEL_TYPE_MIX_AIC_1_0", mix = "KERNEL_TYPE_MIX_AIC_1_1";
    auto has = [](const std::string& src, const std::string& what) {
        INFO(src);
        return src.find(what) != std::string::npos;
    };
    // 8.5 (graph-autofusion 423ae264): only AIC_ONLY then AIV_ONLY holds the vector cores.
    CHECK(has(wait_after(aic, aiv, CannVersion::v8_5), k_hold_vector));
    CHECK_FALSE(has(wait_after(mix_aic, aiv, CannVersion::v8_5), "hold them here"));
    CHECK_FALSE(has(wait_after(aic, mix, CannVersion::v8_5), "hold them here"));
    CHECK_FALSE(has(wait_after(aiv, aic, CannVersion::v8_5), "hold them here"));
    // 9.0 (e1cbeb9b): by device type; a cube kind before a vector or MIX one holds the vector
    // cores, a vector kind before a cube one the cube cores.
    CHECK(has(wait_after(aic, aiv, CannVersion::v9_0), k_hold_vector));
    CHECK(has(wait_after(mix_aic, aiv, CannVersion::v9_0), k_hold_vector));
    CHECK(has(wait_after(aic, mix, CannVersion::v9_0), k_hold_vector));
    CHECK(has(wait_after(aiv, aic, CannVersion::v9_0), k_hold_cube));
    CHECK_FALSE(has(wait_after(aiv, aiv, CannVersion::v9_0), "hold them here"));
    CHECK_FALSE(has(wait_after(mix, aic, CannVersion::v9_0), "hold them here"));
}

TEST_CASE("ascendc a sub-kernel JSON's dcci-disable flag counts from the 9.0 line on",
          "[codegen][ascendc]") {
    auto source = [](codegen::CannVersion cann) {
        Scenario sc;
        sc.target.cann = cann;
        sub_kernel(sc.f.dir, "v", "KERNEL_TYPE_AIV_ONLY", 8, R"("x","y","workspace")", 3000,
                   aicore("v_middle"),
                   R"(,"sub_operator_call_dcci_before_kernel_start":true,)"
                   R"("sub_operator_call_dcci_disable_on_kernel":true)",
                   1);
        sc.load("name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n"
                "inputs: [{name: x, shape: [1024], dtype: float16}]\n"
                "scopes:\n  sk: \"early-start=1:split-mode=1\"\nops:\n" +
                Scenario::op("a", "v", "x", "a_out") + Scenario::op("b", "v", "a_out", "b_out"));
        return sc.source();
    };
    // 8.5 has no such flag: the sub-kernel's own dcci-before stays (super_kernel_sub_op_infos.py
    // gen_dcci_before_kernel_start_call_block at 423ae264); 9.0 drops it.
    CHECK(source(codegen::CannVersion::v8_5).find("// dcci-before-kernel-start") !=
          std::string::npos);
    CHECK(source(codegen::CannVersion::v9_0).find("dcci-before-kernel-start") == std::string::npos);
}

TEST_CASE("ascendc tiling sink and prefetch: notify after the producer, wait before the "
          "consumer, on the vendor's slots, naming the peer",
          "[codegen][ascendc]") {
    Scenario sc;
    sub_kernel(sc.f.dir, "v", "KERNEL_TYPE_AIV_ONLY", 48, R"("x","y","workspace")", 3000,
               aicore("v_middle"), "", 1);
    auto kernel = ", kernel: {json_path: kernels/v.json, bin_path: kernels/v.o}";
    auto out = [](const std::string& name) {
        return "outputs: [{name: " + name + ", shape: [1024], dtype: float16}]";
    };
    // pre produces what scale's AICPU tiling reads (event 1); scale waits for its tiling
    // (event 2), then lets the prefetch of w start (event 3); post waits for it (event 4).
    sc.load(std::string("name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n"
                        "inputs: [{name: x, shape: [1024], dtype: float16}, "
                        "{name: w, shape: [1024], dtype: float16}]\n"
                        "scopes:\n  sk: \"early-start=1:split-mode=1\"\nops:\n") +
            "  - {name: pre, type: Pre, stream_id: 1" + kernel + ", inputs: [x], " + out("y") +
            ", send_event_list: [1], scope: sk}\n" +
            "  - {name: tile, type: Tiling, kind: aicpu_tiling, tiling_for: scale, stream_id: 3" +
            kernel + ", inputs: [y], " + out("tiling") +
            ", recv_event_list: [1], send_event_list: [2]}\n" +
            "  - {name: scale, type: Scale, stream_id: 1" + kernel + ", inputs: [y, tiling], " +
            out("z") + ", recv_event_list: [2], send_event_list: [3], scope: sk}\n" +
            "  - {name: pf, kind: prefetch, stream_id: 2, inputs: [w], recv_event_list: [3], "
            "send_event_list: [4]}\n" +
            "  - {name: post, type: Post, stream_id: 1" + kernel + ", inputs: [z, w], " + out("o") +
            ", recv_event_list: [4], scope: sk}\n");
    REQUIRE(sc.seg().ops.size() == 3); // the tiling and the prefetch are not fused
    // pre: parameters 1-3, its notify slot 4; scale: 5-7, notify 8, wait 9; post: 10-12, wait 13.
    auto layout = codegen::npu_param_layout(sc.f.graph, sc.seg(), sc.target);
    CHECK(layout.param_offset == std::vector<std::uint32_t>{1, 5, 10});
    CHECK(layout.notify_offset == std::vector<std::uint32_t>{4, 8, 13});
    CHECK(layout.wait_offset == std::vector<std::uint32_t>{5, 9, 13});
    auto slots = fusion::vendor_param_slots(sc.f.graph, sc.seg(), sc.target.arch);
    CHECK(slots[0].notify == 4);
    CHECK(slots[1].notify == 8);
    CHECK(slots[1].wait == 9);
    CHECK(slots[2].wait == 13);
    std::string src = sc.source();
    INFO(src);
    // Tiling sink: the producer's notify once all cores finished it, then the consumer's wait
    // on its lock, then every core waits with block 0, and only then the consumer runs.
    auto pre_done = at(src, "AscendC::WaitPreTaskEndImpl<5>();");
    auto notify_tiling = at(src, "// pre notifies tile (AICPU tiling of scale, stream 3): event 1\n"
                                 "        NotifyFunc<false>(param_base[4]);");
    auto wait_tiling =
        at(src, "// scale waits for tile (AICPU tiling of scale, stream 3): event 2\n"
                "        WaitFunc<false>(param_base[9]);");
    CHECK(at(src, "v_middle(1);") < pre_done);
    CHECK(pre_done < notify_tiling);
    CHECK(notify_tiling < wait_tiling);
    CHECK(wait_tiling < at(src, "v_middle(5);"));
    CHECK(src.find(k_aiv_sync, wait_tiling) < at(src, "v_middle(5);"));
    // Prefetch: scale lets it start after scale; post waits for it before it runs.
    auto notify_prefetch = at(src, "// scale notifies pf (prefetch of w, stream 2): event 3\n"
                                   "        NotifyFunc<false>(param_base[8]);");
    auto wait_prefetch = at(src, "// post waits for pf (prefetch of w, stream 2): event 4\n"
                                 "        WaitFunc<false>(param_base[13]);");
    CHECK(at(src, "v_middle(5);") < notify_prefetch);
    CHECK(notify_prefetch < wait_prefetch);
    CHECK(wait_prefetch < at(src, "v_middle(10);"));
    // Both wait locks are left at 0 for the next launch, after the last sub-kernel.
    for (std::string slot : {"9", "13"})
        CHECK(src.find("reinterpret_cast<__gm__ uint64_t*>(param_base[" + slot +
                       "]);\n"
                       "            *lock = 0;") > at(src, "v_middle(10);"));
    CHECK(count(src, "NotifyFunc<false>(param_base[") == 2);
    CHECK(count(src, "WaitFunc<false>(param_base[") == 2);
}

TEST_CASE("ascendc dav-3510: no FFTS address, each line's cross-core flags, c310 compile",
          "[codegen][ascendc]") {
    Scenario sc("early-start=0:func-align=512");
    sc.target = {"dav-3510", "Ascend910_9391", ""};
    std::string src = sc.source();
    INFO(src);
    CHECK(count(src, "ffts_addr") == 0);
    CHECK(count(src, "set_ffts_base_addr") == 0);
    CHECK_THAT(src, Contains("is_inf__kernel0_middle(0);"));
    CHECK_THAT(src, Contains("pows__kernel0_middle(3);"));
    // 9.0 on (asc-devkit's get_wait_flag_for_chip): the dav-2201 set, the wait on PIPE_S.
    const std::string vendor = "ffts_cross_core_sync(PIPE_MTE3, AscendC::GetffstMsg(0x0, "
                               "AscendC::SYNC_AIV_ONLY_ALL));\n"
                               "    wait_flag_dev(PIPE_S, AscendC::SYNC_AIV_ONLY_ALL);";
    CHECK_THAT(src, Contains(vendor));
    CHECK(count(src, "wait_flag_dev(AscendC::") == 0);
    CHECK(count(src, "CrossCore") == 0);
    sc.target.cann = codegen::CannVersion::v9_1;
    CHECK_THAT(sc.source(), Contains(vendor));
    // 8.5: skforge's AscendC calls (that line's generator writes dav-2201's wait_flag_dev(id)).
    sc.target.cann = codegen::CannVersion::v8_5;
    std::string old = sc.source();
    CHECK(count(old, "ffts") == 0);
    CHECK_THAT(old,
               Contains("AscendC::CrossCoreSetFlag<0x0, PIPE_MTE3>(AscendC::SYNC_AIV_ONLY_ALL);\n"
                        "    AscendC::CrossCoreWaitFlag(AscendC::SYNC_AIV_ONLY_ALL);"));
    auto compiles = sc.compiles();
    REQUIRE(compiles.size() == 1);
    CHECK_THAT(compiles[0],
               Contains("--cce-aicore-arch=dav-c310-vec -D__DAV_C310__ --cce-aicore-only"));
    CHECK_THAT(compiles[0], Contains("--cce-no-dcache-flush"));
}

// asc-devkit 1ea13f3b (9.0.x) writes the cube barrier's wait as the literal text
// `{get_wait_flag_for_chip("AscendC::SYNC_AIC_FLAG")}` (a vendor defect, fixed by d65d6cb4 and
// b4f2983b): skforge writes the wait on every line and chip.
TEST_CASE("ascendc cube barrier under early-start=0: the wait, never the 9.0.x placeholder",
          "[codegen][ascendc]") {
    Scenario sc;
    for (const std::string k : {"c1", "c2"})
        sub_kernel(sc.f.dir, k, "KERNEL_TYPE_AIC_ONLY", 16, R"("x","y","workspace")", 3000,
                   aicore(k + "_middle"), "", 1);
    sc.load("name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n"
            "inputs: [{name: x, shape: [1024], dtype: float16}]\n"
            "scopes:\n  sk: \"early-start=0:debug-sync-all=1:split-mode=1\"\nops:\n" +
            Scenario::op("a", "c1", "x", "a_out") + Scenario::op("b", "c2", "a_out", "b_out"));
    const std::string set = "ffts_cross_core_sync(PIPE_FIX, AscendC::GetffstMsg(0x0, "
                            "AscendC::SYNC_AIC_FLAG));\n";
    for (auto cann :
         {codegen::CannVersion::v8_5, codegen::CannVersion::v9_0, codegen::CannVersion::v9_1})
        for (const std::string arch : {"dav-2201", "dav-3510"}) {
            codegen::NpuTarget t{arch, "Ascend910B1", "", cann};
            std::string src = codegen::npu_entry_source(sc.f.graph, sc.seg(), t);
            INFO(src);
            CHECK(count(src, "get_wait_flag_for_chip") == 0);
            CHECK(count(src, "{") == count(src, "}"));
            if (arch == "dav-3510" && cann == codegen::CannVersion::v8_5)
                CHECK(count(src, "AscendC::CrossCoreWaitFlag(AscendC::SYNC_AIC_FLAG);") == 3);
            else
                CHECK(count(src,
                            set + "    " +
                                (arch == "dav-3510" ? "wait_flag_dev(PIPE_S, " : "wait_flag_dev(") +
                                "AscendC::SYNC_AIC_FLAG);") == 3);
        }
}

// A MIX 1:1 SuperKernel (one cube and one vector sub-kernel of 20 blocks each, debug counts
// 20:20) on `arch` under `cann`, with a toolkit at /opt/cann: its bisheng compiles.
std::vector<std::string> mix_1_1_compiles(const std::string& arch, codegen::CannVersion cann) {
    Scenario sc(k_vendor_defaults + ":debug-aic-num=20:debug-aiv-num=20");
    sc.target = {arch, arch == "dav-3510" ? "Ascend950PR_9599" : "Ascend910B1", "/opt/cann", cann};
    REQUIRE(codegen::npu_launch(sc.f.graph, sc.seg(), sc.target).type ==
            kernel::KernelType::mix_aic_1_1);
    return sc.compiles();
}

TEST_CASE("ascendc build: each line's include directories and the dav-3510 MIX 1:1 define",
          "[codegen][ascendc]") {
    using codegen::CannVersion;
#if defined(__aarch64__)
    const std::string asc = "-I/opt/cann/aarch64-linux/asc";
#else
    const std::string asc = "-I/opt/cann/x86_64-linux/asc";
#endif
    for (auto cann : {CannVersion::v8_5, CannVersion::v9_0, CannVersion::v9_1}) {
        const bool new_line = cann != CannVersion::v8_5;
        for (const std::string arch : {"dav-2201", "dav-3510"}) {
            auto compiles = mix_1_1_compiles(arch, cann);
            REQUIRE(compiles.size() == 2);
            for (const auto& c : compiles) {
                INFO(c);
                // asc-devkit gen_compile_info from 1ea13f3b: basic_api/reg_compute (micro_api is
                // gone), and the asc directory itself after asc/impl.
                const std::string regs = new_line ? "basic_api/reg_compute" : "micro_api";
                CHECK_THAT(c, Contains(asc + "/impl/c_api " + asc + "/impl/" + regs + " " + asc +
                                       "/impl/simt_api "));
                CHECK_THAT(c, Contains(asc + "/include/c_api " + asc + "/include/" + regs + " " +
                                       asc + "/include/simt_api "));
                CHECK(count(c, "micro_api") == (new_line ? 0U : 2U));
                CHECK(count(c, asc + "/impl " + asc + " ") == (new_line ? 1U : 0U));
                // add_define_options: MIX 1:1 on c310 only, before the early-start defines.
                const bool split = new_line && arch == "dav-3510";
                CHECK(count(c, "-D__ASCENDC_DAVID_SPLIT_CORE__ " + k_early_defines) ==
                      (split ? 1U : 0U));
                CHECK(count(c, "__ASCENDC_DAVID_SPLIT_CORE__") == (split ? 1U : 0U));
            }
        }
    }
    // Not for MIX 1:2 (or any other type) on dav-3510.
    Scenario sc(k_vendor_defaults + ":debug-aic-num=20:debug-aiv-num=40");
    sc.target = {"dav-3510", "Ascend950PR_9599", "/opt/cann"};
    for (const auto& c : sc.compiles())
        CHECK(count(c, "DAVID_SPLIT_CORE") == 0);
}

TEST_CASE("ascendc blockDim: never more cores than the SoC has", "[codegen][ascendc]") {
    Scenario sc(k_vendor_defaults + ":debug-aic-num=0:debug-aiv-num=64");
    auto launch = codegen::npu_launch(sc.f.graph, sc.seg(), sc.target);
    CHECK(launch.type == kernel::KernelType::mix_aiv_1_0);
    CHECK(launch.block_dim == 48); // Ascend910B1: 48 vector cores
    Scenario fits(k_vendor_defaults + ":debug-aic-num=0:debug-aiv-num=40");
    CHECK(codegen::npu_launch(fits.f.graph, fits.seg(), fits.target).block_dim == 40);
}

TEST_CASE("ascendc build: split copies, one compile per core type, the vendor's links",
          "[codegen][ascendc]") {
    Scenario sc(k_vendor_defaults);
    auto stages = sc.commands();
    using C = std::vector<std::string>;
    REQUIRE(stages.size() == 4);
    REQUIRE(stages[0].size() == 7); // 3 copies of each sub-kernel, the compile
    CHECK(stages[0][0] == C{"llvm-objcopy",
                            "--redefine-sym=is_inf__kernel0_middle=is_inf__kernel0_middle_split1",
                            "obj/is_inf__kernel0.o", "obj/is_inf__kernel0_split1.o"});
    CHECK(stages[0][5] == C{"llvm-objcopy",
                            "--redefine-sym=pows__kernel0_middle=pows__kernel0_middle_split3",
                            "obj/pows__kernel0.o", "obj/pows__kernel0_split3.o"});
    CHECK(stages[0][6] == C{"bisheng",
                            "-c",
                            "-O3",
                            "-x",
                            "cce",
                            "-D__ASCENDC_ENABLE_SET_NEXT_TASK_START",
                            "-D__ASCENDC_ENABLE_WAIT_PRE_TASK_END",
                            "-D__ASCENDC_SUPERKERNEL_EARLY_START_V2",
                            "-DASCENDC_DUMP=0",
                            "--cce-disable-kernel-global-attr-check",
                            "gen/sk.cpp",
                            "--cce-aicore-arch=dav-c220-vec",
                            "--cce-aicore-only",
                            "-o",
                            "obj/sk_mix_aiv.o",
                            "-mllvm",
                            "-cce-aicore-stack-size=0x8000",
                            "-mllvm",
                            "-cce-aicore-function-stack-size=0x8000",
                            "-mllvm",
                            "-cce-aicore-record-overflow=false",
                            "-mllvm",
                            "-cce-aicore-addr-transform",
                            "-mllvm",
                            "-cce-aicore-dcci-insert-for-scalar=false",
                            "-mllvm",
                            "-cce-aicore-jump-expand=true",
                            "--cce-long-call=true",
                            "-mllvm",
                            "-cce-aicore-long-call",
                            "-std=c++17",
                            "-Dauto_gen_t_sk_kernel=t_sk_mix_aiv",
                            "-DTILING_KEY_VAR=0UL",
                            "-Dt_sk=t_sk_0_tilingkey"});
    C objs = {"obj/sk_mix_aiv.o"};
    for (std::string k : {"is_inf__kernel0", "pows__kernel0"})
        for (std::string s : {"", "_split1", "_split2", "_split3"})
            objs.push_back("obj/" + k + s + ".o");
    C relocatable = {"ld.lld", "-m", "aicorelinux", "-r", "-Ttext=0", "-q", "-x"};
    relocatable.insert(relocatable.end(), objs.begin(), objs.end());
    relocatable.insert(relocatable.end(), {"-static", "-o", "lib/sk.o"});
    CHECK(stages[1] == std::vector<C>{relocatable});
    CHECK(stages[2] == std::vector<C>{{"ld.lld", "-m", "aicorelinux", "-Ttext=0", "lib/sk.o",
                                       "-static", "-o", "lib/sk.o", "-q"}});
    REQUIRE(stages[3].size() == 1);
    CHECK(stages[3][0].size() == 10); // llvm-objcopy, 8 symbols, the object
    CHECK(stages[3][0][1] == "--localize-symbol=is_inf__kernel0_middle");
    CHECK(stages[3][0].back() == "lib/sk.o");
    // compile-options items, comma-separated, go before the source.
    Scenario user(k_vendor_defaults + ":compile-options=-g,-DX=1");
    CHECK_THAT(user.compiles()[0], Contains("-DASCENDC_DUMP=0 -g -DX=1 --cce-disable"));
}

TEST_CASE("ascendc build: the op compiler's pre-split archive is linked as it is, no copies made",
          "[codegen][ascendc]") {
    // is_inf's JSON names its split copies (obj_files_split1..3, asc-devkit
    // split_sub_kernel_objs); pows' does not, and gets skforge's renamed copies.
    Scenario sc;
    sub_kernel(sc.f.dir, "is_inf__kernel0", "KERNEL_TYPE_AIV_ONLY", 32, R"("x","y","workspace")",
               3000,
               R"({"AiCore":{"func_name":"is_inf__kernel0_middle","obj_files":"is_inf.o",)"
               R"("obj_files_split1":"is_inf_split1.o","obj_files_split2":"is_inf_split2.o",)"
               R"("obj_files_split3":"is_inf_split3.o"}})");
    sub_kernel(sc.f.dir, "pows__kernel0", "KERNEL_TYPE_AIV_ONLY", 1, R"("x1","x2","y","workspace")",
               9000, aicore("pows__kernel0_middle"));
    sc.load("name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n"
            "inputs: [{name: x, shape: [1024], dtype: float16}]\nscopes:\n  sk: \"" +
            k_vendor_defaults + "\"\nops:\n" + Scenario::op("inf", "is_inf__kernel0", "x", "a") +
            Scenario::op("pows", "pows__kernel0", "a, x", "b"));
    auto stages = sc.commands();
    using C = std::vector<std::string>;
    REQUIRE(stages.size() == 4);
    REQUIRE(stages[0].size() == 4); // pows' 3 copies, the compile
    for (std::size_t k = 0; k < 3; ++k)
        CHECK(stages[0][k][2] == "obj/pows__kernel0.o");
    C relocatable = {"ld.lld",
                     "-m",
                     "aicorelinux",
                     "-r",
                     "-Ttext=0",
                     "-q",
                     "-x",
                     "obj/sk_mix_aiv.o",
                     "obj/is_inf__kernel0.o"};
    for (std::string s : {"", "_split1", "_split2", "_split3"})
        relocatable.push_back("obj/pows__kernel0" + s + ".o");
    relocatable.insert(relocatable.end(), {"-static", "-o", "lib/sk.o"});
    CHECK(stages[1] == std::vector<C>{relocatable});
    // The entry calls the archive's copies by the same names, and they are made local.
    CHECK_THAT(codegen::npu_entry_source(sc.f.graph, sc.seg(), sc.target),
               Contains("is_inf__kernel0_middle_split3(1);"));
    CHECK(stages[3][0].size() == 10);
    CHECK(stages[3][0][4] == "--localize-symbol=is_inf__kernel0_middle_split3");
}

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

// Golden files: when a change to the generator is intended, regenerate them with
// SKFORGE_UPDATE_GOLDEN=1 and review the diff.
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

TEST_CASE("ascendc golden: moe_block sk2", "[codegen][ascendc]") {
    check_golden("moe_block_sk2_dav-2201.cpp",
                 entry_for("moe_block", "sk2", {"dav-2201", "Ascend910B1", ""}));
}

TEST_CASE("ascendc golden: two_stream sk_dual (two-stream mode)", "[codegen][ascendc]") {
    check_golden("two_stream_sk_dual_dav-3510.cpp",
                 entry_for("two_stream", "sk_dual", {"dav-3510", "Ascend910_9391", ""}));
}

// The decoder example's tiling sink (layer 0's attention, its tiling on the AICPU) and its
// prefetch stream (layer 0's MoE scope prefetches layer 1's router and expert weights, which
// layer 1's router waits for; layer 1's router lets layer 1's prefetch start).
TEST_CASE("ascendc golden: decoder's tiling sink and prefetch", "[codegen][ascendc]") {
    codegen::NpuTarget target{"dav-2201", "Ascend910B1", ""};
    check_golden("decoder_scope_0_part1_dav-2201.cpp",
                 entry_for("decoder", "scope_0_part1", target));
    check_golden("decoder_scope_1_part2_moe_dav-2201.cpp",
                 entry_for("decoder", "scope_1_part2_moe", target));
}

TEST_CASE("ascendc golden: tbe_cut's first split", "[codegen][ascendc]") {
    check_golden("tbe_cut_sk_attn_split_0_1_dav-2201.cpp",
                 entry_for("tbe_cut", "sk_attn_split_0_1", {"dav-2201", "Ascend910B1", ""}));
}
