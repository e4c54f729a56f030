// SPDX-License-Identifier: Apache-2.0
// The runtime-side key builder, cross-checked against the opbase-logic reader of the tests
// (opbase_reader.hpp, the independent judge written from opbase's code) on the same calls.
#include "opbase_reader.hpp"
#include "skforge/kernel/runtime_key.hpp"

#include <catch2/catch.hpp>

using namespace skforge::kernel;
namespace opbase = skforge::test::opbase;

namespace {

// The reader's tensor for one of ours.
opbase::AclTensor acl(const RuntimeTensor& t) {
    opbase::AclTensor a;
    a.dtype = t.dtype;
    a.storage_format = t.format;
    a.storage_dims = t.storage_shape;
    a.view_dims = t.view_shape.empty() ? t.storage_shape : t.view_shape;
    a.view_strides = t.view_strides;
    a.view_offset = t.offset;
    return a;
}

opbase::Key judge(KeyPath path, const RuntimeCall& call, bool strides) {
    std::vector<opbase::AclTensor> tensors;
    for (const auto& t : call.tensors)
        tensors.push_back(acl(t));
    opbase::Context ctx;
    ctx.deterministic_level = call.deterministic_level;
    ctx.hostapi_impl_mode = static_cast<std::uint64_t>(call.hostapi_impl_mode);
    return opbase::path_call_key(path == KeyPath::aclnn_executor ? opbase::Path::aclnn_executor
                                                                 : opbase::Path::hostapi,
                                 call.op_type, ctx, tensors, strides);
}

// ND, NCHW, FRACTAL_NZ (view and storage shapes differ), strided with an offset, deterministic.
std::vector<RuntimeCall> calls() {
    return {
        {"Add", {{1, 2, {16}, {}, {}, 0}, {1, 2, {16}, {}, {}, 0}}, 0, 2},
        {"Conv", {{0, 0, {1, 3, 8, 8}, {}, {}, 0}}, 0, 1},
        {"Mul", {{27, 29, {2, 1, 16, 16}, {16, 32}, {}, 0}}, 0, 2},
        {"Slice", {{1, 2, {8, 8}, {4, 4}, std::vector<std::int64_t>{8, 1}, 18}}, 0, 2},
        {"Add", {{1, 2, {16}, {}, {}, 0}}, 1, 2},
    };
}

} // namespace

TEST_CASE("runtime keys: each path's byte key is the reader's, with and without strides",
          "[kernel][runtime_key]") {
    for (const auto& call : calls())
        for (auto path : {KeyPath::aclnn_executor, KeyPath::hostapi})
            for (bool strides : {true, false}) {
                INFO(call.op_type << " path " << static_cast<int>(path) << " strides " << strides);
                CHECK(runtime_call_key(path, call, strides) == judge(path, call, strides));
                // The text an index entry must say converts to the same bytes, by both.
                auto text = runtime_call_key_text(path, call, strides);
                CHECK(runtime_index_key(text) == opbase::convert_static_key(text));
                CHECK(*runtime_index_key(text) == runtime_call_key(path, call, strides));
            }
}

TEST_CASE("runtime keys: formats like ND, view shape, strides and offset as each path keys them",
          "[kernel][runtime_key]") {
    auto c = calls();
    CHECK(runtime_call_key_text(KeyPath::aclnn_executor, c[1], true) ==
          "Conv/d=0,p=0/0,2,(1,3,8,8),(c0,40,8,1),0");
    CHECK(runtime_call_key_text(KeyPath::hostapi, c[1], true) == "Conv/d=0,p=1/0,0,(1,3,8,8),(),0");
    CHECK(runtime_call_key_text(KeyPath::aclnn_executor, c[2], false) ==
          "Mul/d=0,p=0/1b,1d,(10,20)");
    CHECK(runtime_call_key_text(KeyPath::hostapi, c[2], false) == "Mul/d=0,p=2/1b,1d,(2,1,10,10)");
    CHECK(runtime_call_key_text(KeyPath::aclnn_executor, c[3], true) ==
          "Slice/d=0,p=0/1,2,(4,4),(8,1),12");
    CHECK(runtime_call_key_text(KeyPath::aclnn_executor, c[4], false) == "Add/d=1,p=0/1,2,(10)");
}

TEST_CASE("runtime keys: each line's lookups in its order", "[kernel][runtime_key]") {
    auto call = calls()[0];
    auto v90 = runtime_lookups(line_rules(CannLine::v9_0), KeyPath::aclnn_executor, call);
    REQUIRE(v90.size() == 1); // no strides, no second lookup
    CHECK_FALSE(v90[0].with_strides);
    CHECK(v90[0].key == judge(KeyPath::aclnn_executor, call, false));
    for (auto line : {CannLine::v9_1, CannLine::master}) {
        auto l = runtime_lookups(line_rules(line), KeyPath::hostapi, call);
        REQUIRE(l.size() == 2);
        CHECK(l[0].with_strides);
        CHECK(l[0].key == judge(KeyPath::hostapi, call, true));
        CHECK(l[1].key == judge(KeyPath::hostapi, call, false));
    }
}

TEST_CASE("runtime keys: the line of a CANN version", "[kernel][runtime_key]") {
    CHECK(cann_line_of("9.0.0") == CannLine::v9_0);
    CHECK(cann_line_of("9.0.1") == CannLine::v9_0);
    CHECK(cann_line_of("9.1.0.pre") == CannLine::v9_1);
    CHECK(cann_line_of("9.2.0") == CannLine::master);
    CHECK(cann_line_of("master") == CannLine::master);
    CHECK_FALSE(cann_line_of("8.5.0"));
    CHECK_FALSE(cann_line_of("x"));
}

TEST_CASE("runtime keys: platformInfo matched as each line matches it, like the reader",
          "[kernel][runtime_key]") {
    const KernelPlatform device{24, 48, 1};
    const KernelPlatform level0{24, 48, 0};
    const KernelPlatform other_cores{20, 40, -1};
    auto reader = [](const KernelPlatform& k, const KernelPlatform& d) {
        opbase::StaticKernel s;
        s.platform = opbase::Platform{k.aic, k.aiv, k.deterministic_level};
        return opbase::platform_fits(s, {d.aic, d.aiv, d.deterministic_level});
    };
    const auto& master = line_rules(CannLine::master);
    CHECK(platform_fits(master, level0, device) == reader(level0, device));
    CHECK_FALSE(platform_fits(master, level0, device));
    CHECK(platform_fits(master, other_cores, device) == reader(other_cores, device));
    CHECK(platform_fits(master, std::nullopt, device));
    // 9.0.x and 9.1.x match the core counts only (MatchBinWithCoreNum).
    for (auto line : {CannLine::v9_0, CannLine::v9_1}) {
        CHECK(platform_fits(line_rules(line), level0, device));
        CHECK_FALSE(platform_fits(line_rules(line), other_cores, device));
    }
}

TEST_CASE("runtime keys: a simplifiedKey read back into its parts", "[kernel][runtime_key]") {
    auto k = parse_simplified_key("Mul/d=1,p=2/1b,1d,(10,20),(20,1),3/1,2,()");
    REQUIRE(k);
    CHECK(k->op_type == "Mul");
    CHECK(k->deterministic == 1);
    CHECK(k->impl_mode == 2);
    REQUIRE(k->tensors.size() == 2);
    CHECK(k->tensors[0].format == 29);
    CHECK(k->tensors[0].shape == std::vector<std::int64_t>{16, 32});
    CHECK(k->tensors[0].strides == std::vector<std::int64_t>{32, 1});
    CHECK(k->tensors[0].offset == 3);
    CHECK_FALSE(k->tensors[1].strides);
    CHECK_FALSE(parse_simplified_key("Mul/x/1"));
    CHECK_FALSE(parse_simplified_key("Mul/d=0,p=0/1,2"));
}

TEST_CASE("runtime keys: dtype and format codes named back", "[kernel][runtime_key]") {
    CHECK(ge_format_name(29) == "FRACTAL_NZ");
    CHECK(ge_format_name(2) == "ND");
    CHECK_FALSE(ge_format_name(9999));
    CHECK(ge_data_type_name(1) == "float16");
    CHECK(ge_data_type_name(0) == "float");
    CHECK(ge_data_type_name(27) == "bfloat16");
}
