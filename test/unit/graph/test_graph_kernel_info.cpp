// SPDX-License-Identifier: Apache-2.0
// The vendor's kernel_info read as a graph (lib/graph/src/kernel_info.cpp).
#include "graph_fixture.hpp"
#include "skforge/graph/graph.hpp"

#include <catch2/catch.hpp>

using namespace skforge;

TEST_CASE("kernel_info: told apart from graph YAML by being a JSON object with an op_list",
          "[graph][kernel_info]") {
    CHECK(graph::is_kernel_info(R"( {"op_list": []})"));
    CHECK(graph::is_kernel_info("{\"super_kernel_options\": \"\", \"op_list\": [{}]}\n"));
    CHECK_FALSE(graph::is_kernel_info("{name: g, ops: []}"));          // a YAML flow mapping
    CHECK_FALSE(graph::is_kernel_info(R"({"name": "g", "ops": []})")); // JSON, but a graph
    CHECK_FALSE(graph::is_kernel_info("name: g\nops: []\n"));
    CHECK_FALSE(graph::is_kernel_info(R"(["op_list"])"));
}

TEST_CASE("kernel_info: the vendor's defaults, one scope, operators in order",
          "[graph][kernel_info]") {
    graph::Diagnostics diags;
    auto g = graph::parse_kernel_info(
        R"({"super_kernel_options": "stream-fusion=1",
            "op_list": [{"bin_path": "a.o", "json_path": "a.json"},
                        {"bin_path": "b.o", "json_path": "b.json", "stream_id": 3,
                         "task_type": "dynamic", "send_event_list": [4], "recv_event_list": [2],
                         "extra": 1},
                        {"bin_path": "c.o"}]})",
        "dir/info.json", diags);
    INFO(diags.format());
    CHECK_FALSE(diags.has_errors());
    CHECK(g.name == "info");
    CHECK(g.npu_arch == "dav-2201");
    CHECK(g.from_kernel_info);
    REQUIRE(g.scopes.size() == 1);
    CHECK(g.scopes[0].options == "stream-fusion=1");
    // The entry without json_path is skipped as the vendor skips it; an unknown key is warned of.
    REQUIRE(g.ops.size() == 2);
    CHECK(diags.format().find("op_list[2] has no json_path and is skipped") != std::string::npos);
    CHECK(diags.format().find("op_list[1].extra is not read") != std::string::npos);
    CHECK(g.ops[0].name == "op0");
    CHECK(g.ops[0].stream_id == 0); // absent: the vendor's -1, skforge's first stream
    CHECK(g.ops[0].task_type == graph::TaskType::normal);
    CHECK(g.ops[0].send_events.empty());
    CHECK(g.ops[1].stream_id == 3);
    CHECK(g.ops[1].task_type == graph::TaskType::dynamic);
    CHECK(g.ops[1].send_events == std::vector<std::int64_t>{4});
    CHECK(g.ops[1].recv_events == std::vector<std::int64_t>{2});
    CHECK(g.ops[1].kernel.bin_path == "b.o");
    CHECK(g.ops[1].scope == "superkernel");
}

TEST_CASE("kernel_info: malformed entries are errors naming the entry and key",
          "[graph][kernel_info]") {
    auto errors = [](const std::string& text) {
        graph::Diagnostics diags;
        graph::parse_kernel_info(text, "k.json", diags);
        return diags.has_errors() ? diags.format() : std::string();
    };
    CHECK(errors(R"({"op_list": []})").find("op_list: is not a list of sub-kernels") !=
          std::string::npos);
    CHECK(errors(R"({"op_list": [{"json_path": "a.json"}]})").find("op_list[0].bin_path") !=
          std::string::npos);
    CHECK(errors(R"({"op_list": [{"json_path": "a", "bin_path": "b", "stream_id": -2}]})")
              .find("op_list[0].stream_id: is -2") != std::string::npos);
    CHECK(errors(R"({"op_list": [{"json_path": "a", "bin_path": "b", "task_type": "x"}]})")
              .find("op_list[0].task_type") != std::string::npos);
    CHECK(errors(R"({"op_list": [{"json_path": "a", "bin_path": "b", "send_event_list": ["7"]}]})")
              .find("op_list[0].send_event_list: holds \"7\"") != std::string::npos);
    CHECK(errors(R"({"op_list": [{"json_path": "a", "bin_path": "b"}], "super_kernel_options": 1})")
              .find("super_kernel_options: is not a string") != std::string::npos);
}

TEST_CASE("kernel_info: without tensors, an operator depends on the one before it on its stream",
          "[graph][kernel_info]") {
    graph::Diagnostics diags;
    auto g = graph::parse_kernel_info(
        R"({"op_list": [{"bin_path": "a", "json_path": "a", "stream_id": 0},
                        {"bin_path": "a", "json_path": "a", "stream_id": 1},
                        {"bin_path": "a", "json_path": "a", "stream_id": 0},
                        {"bin_path": "a", "json_path": "a", "stream_id": 1, "recv_event_list": [9]},
                        {"bin_path": "a", "json_path": "a", "stream_id": 0, "send_event_list": [9]}]})",
        "k.json", diags);
    REQUIRE(g.ops.size() == 5);
    auto deps = graph::dependencies(g);
    auto of = [&](std::size_t i) { return std::vector<int>(deps[i].begin(), deps[i].end()); };
    CHECK(of(0).empty());
    CHECK(of(1).empty());
    CHECK(of(2) == std::vector<int>{0});
    CHECK(of(3) == std::vector<int>{1}); // event 9 is sent later: no dependency on its sender
    CHECK(of(4) == std::vector<int>{2});
    // A YAML graph's operators without tensors stay independent.
    g.from_kernel_info = false;
    auto plain = graph::dependencies(g);
    CHECK(plain[2].empty());
}
