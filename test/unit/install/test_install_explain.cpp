// SPDX-License-Identifier: Apache-2.0
// skinstall explain's inputs: a call from a dump JSON or from --tensor text, refused with the
// field named.
#include "skforge/install/doctor.hpp"
#include "skforge/install/explain.hpp"
#include "skforge/support/error.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <filesystem>

using namespace skforge::install;
using Catch::Matchers::Contains;
using nlohmann::json;

TEST_CASE("explain: a dump JSON's tensors, view shape, strides, determinism and impl mode",
          "[install][explain]") {
    auto dump = json::parse(R"({"op_type": "Nz",
        "inputs": [{"dtype": "bfloat16", "format": "FRACTAL_NZ", "shape": [2, 1, 16, 16],
                    "origin_format": "ND", "origin_shape": [16, 32], "stride": [64, 2],
                    "offset": 3}],
        "outputs": [{"dtype": "float", "format": "FORMAT_NCHW", "shape": [1, 3, 8, 8]}],
        "attrs": [], "deterministic": "true", "impl_mode": "high_performance"})");
    auto call = call_from_dump(dump, "d.json");
    CHECK(call.op_type == "Nz");
    REQUIRE(call.tensors.size() == 2);
    CHECK(call.tensors[0].dtype == 27);
    CHECK(call.tensors[0].format == 29);
    CHECK(call.tensors[0].storage_shape == std::vector<std::int64_t>{2, 1, 16, 16});
    CHECK(call.tensors[0].view_shape == std::vector<std::int64_t>{16, 32});
    CHECK(call.tensors[0].view_strides == std::vector<std::int64_t>{64, 2});
    CHECK(call.tensors[0].offset == 3);
    CHECK(call.tensors[1].format == 0);
    CHECK_FALSE(call.tensors[1].view_strides);
    CHECK(call.deterministic_level == 1);
    CHECK(call.hostapi_impl_mode == 1);
    dump["deterministic"] = "false";
    dump["impl_mode"] = "";
    CHECK(call_from_dump(dump, "d.json").deterministic_level == 0);
    CHECK(call_from_dump(dump, "d.json").hostapi_impl_mode == 2);
}

TEST_CASE("explain: a dump JSON it cannot key is refused naming the file and field",
          "[install][explain]") {
    CHECK_THROWS_WITH(call_from_dump(json::object(), "d.json"), Contains("d.json: no op_type"));
    auto dump = json::parse(R"({"op_type": "Add", "inputs": [{"dtype": "float16",
        "shape": [-1, 16]}], "outputs": []})");
    CHECK_THROWS_WITH(call_from_dump(dump, "d.json"),
                      Contains("d.json: inputs[0].shape has -1, not a static dimension"));
    dump["inputs"][0] = {{"dtype", "float99"}, {"shape", {16}}};
    CHECK_THROWS_WITH(call_from_dump(dump, "d.json"), Contains("unknown dtype 'float99'"));
}

TEST_CASE("explain: --tensor text", "[install][explain]") {
    auto t = tensor_from_text("bfloat16:FRACTAL_NZ:2,1,16,16:16,32:32,1:5");
    CHECK(t.dtype == 27);
    CHECK(t.storage_shape == std::vector<std::int64_t>{2, 1, 16, 16});
    CHECK(t.view_shape == std::vector<std::int64_t>{16, 32});
    CHECK(t.view_strides == std::vector<std::int64_t>{32, 1});
    CHECK(t.offset == 5);
    CHECK(tensor_from_text("float16:ND:16").storage_shape == std::vector<std::int64_t>{16});
    CHECK_THROWS_WITH(tensor_from_text("float16:ND"), Contains("DTYPE:FORMAT:DIMS"));
    CHECK_THROWS_WITH(tensor_from_text("float16:ND:16x"), Contains("DIMS '16x'"));
    CHECK_THROWS_WITH(tensor_from_text("float16:XYZ:16"), Contains("unknown format 'XYZ'"));
    CHECK_THROWS_WITH(impl_mode_index("fast"), Contains("'fast'"));
}

TEST_CASE("doctor: the base path as opbase's GetBuiltInBasePath resolves it", "[install][doctor]") {
    skforge::test::ScopedTempDir dir;
    const std::string home = dir.path();
    CHECK(runtime_base_path(home.c_str(), "/opp") == "/opp"); // no opp_latest
    CHECK(runtime_base_path(nullptr, nullptr).empty());
    std::filesystem::create_directory(dir / "opp_latest");
    CHECK(runtime_base_path(home.c_str(), "/opp") == home + "/opp_latest");
    CHECK(runtime_base_path(nullptr, "/opp") == "/opp");
}
