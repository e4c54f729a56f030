// SPDX-License-Identifier: Apache-2.0
// The vendor backend's input: kernel_info as CANN's super_kernel.compile reads it (op_list fields
// and types, events as integers, absolute paths) and the super_kernel_options string, which the
// vendor parses with the same `key=value:key=value` rules as skforge's scope options.
#include "skforge/codegen/cann_backend.hpp"
#include "skforge/support/error.hpp"

#include "graph_fixture.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

using namespace skforge;
using nlohmann::json;

namespace {

// kernels/<name>.o next to the fixture's metadata, so operators can name a bin_path.
std::string kernel(const std::string& name, const std::string& extra) {
    return "kernel: {json_path: kernels/" + name + ".json, bin_path: kernels/" + name + ".o}" +
           (extra.empty() ? "" : ", " + extra);
}

std::string npu_op(const std::string& name, const std::string& k, const std::string& inputs,
                   const std::string& extra) {
    return "  - {name: " + name + ", type: T" + k + ", " + kernel(k, extra) + ", inputs: [" +
           inputs + "], outputs: [{name: " + name + "_out, shape: [4], dtype: float16}]}\n";
}

// Loads `yaml`, its kernels' binaries written first.
void load_npu(test::GraphFixture& f, const std::string& yaml) {
    for (const char* k : {"vec", "cube", "mix"})
        test::write_text(f.dir / (std::string("kernels/") + k + ".o"), std::string(64, *k));
    REQUIRE(f.load(yaml));
}

const fusion::Segment& plan_one(test::GraphFixture& f, fusion::Plan& keep,
                                const std::string& yaml) {
    load_npu(f, yaml);
    keep = fusion::make_plan(f.graph, f.diags);
    REQUIRE_FALSE(f.diags.has_errors());
    REQUIRE(keep.segments.size() == 1);
    return keep.segments[0];
}

graph::ScopeOptions parse_back(const std::string& text) {
    graph::Diagnostics diags;
    auto o = graph::parse_scope_options(text, graph::ScopeOptions{}, {}, diags);
    INFO(diags.format());
    REQUIRE_FALSE(diags.has_errors());
    REQUIRE(diags.items().empty());
    return o;
}

} // namespace

TEST_CASE("kernel_info: one op_list entry per sub-kernel in plan order, as the vendor reads it",
          "[codegen][cann]") {
    test::GraphFixture f;
    fusion::Plan p;
    const auto& s =
        plan_one(f, p,
                 test::header("scopes: {s: \"early-start=1\"}\n") +
                     npu_op("a", "vec", "x", "scope: s, stream_id: 1, send_event_list: [5]") +
                     npu_op("b", "cube", "x", "scope: s") +
                     npu_op("c", "vec", "a_out, b_out", "scope: s, recv_event_list: [5]"));
    json info = json::parse(codegen::cann_kernel_info(f.graph, p, s, "/elsewhere"));
    REQUIRE(info.size() == 2);
    CHECK(info["super_kernel_options"] == codegen::cann_options_string(s.options));
    const json& ops = info["op_list"];
    REQUIRE(ops.size() == 3);
    const std::vector<std::string> kernels = {"vec", "cube", "vec"};
    for (std::size_t i = 0; i < ops.size(); ++i) {
        INFO("op " << i);
        CHECK(ops[i].size() == 6);
        // The fixture's directory is absolute: the base directory is not used.
        CHECK(ops[i]["bin_path"] == f.dir / ("kernels/" + kernels[i] + ".o"));
        CHECK(ops[i]["json_path"] == f.dir / ("kernels/" + kernels[i] + ".json"));
        CHECK(ops[i]["task_type"] == "normal");
    }
    CHECK(ops[0]["stream_id"] == 1);
    CHECK(ops[1]["stream_id"] == 0);
    // Event ids are integers; an empty list is written, not left out.
    CHECK(ops[0]["send_event_list"] == json::array({5}));
    CHECK(ops[0]["recv_event_list"] == json::array());
    CHECK(ops[2]["recv_event_list"] == json::array({5}));
    CHECK(ops[2]["send_event_list"] == json::array());
    CHECK(ops[1]["send_event_list"].is_array());
}

TEST_CASE("kernel_info: only events both set and waited inside the SuperKernel are listed",
          "[codegen][cann]") {
    test::GraphFixture f;
    fusion::Plan p;
    // o runs before the scope and sends event 3 to b: the launch waits for it, the SuperKernel
    // does not (the vendor refuses a first sub-kernel with a receive event).
    const auto& s =
        plan_one(f, p,
                 test::header() + npu_op("o", "vec", "x", "stream_id: 1, send_event_list: [3]") +
                     npu_op("b", "vec", "x", "scope: s, recv_event_list: [3]") +
                     npu_op("c", "vec", "b_out", "scope: s"));
    json ops = json::parse(codegen::cann_kernel_info(f.graph, p, s, "/"))["op_list"];
    REQUIRE(ops.size() == 2);
    CHECK(ops[0]["recv_event_list"] == json::array());
    CHECK(ops[1]["send_event_list"] == json::array());
}

TEST_CASE("kernel_info: an event between two sub-kernels is listed under stream-fusion=0 too",
          "[codegen][cann]") {
    // The stream pass pairs no event without stream fusion; the vendor still needs the event to
    // see that b (stream 2) is ordered after a (stream 1), else it refuses two real streams.
    for (const char* fusion : {"0", "1"}) {
        test::GraphFixture f;
        fusion::Plan p;
        const auto& s = plan_one(
            f, p,
            test::header(std::string("scopes: {s: \"stream-fusion=") + fusion + "\"}\n") +
                npu_op("a", "vec", "x", "scope: s, stream_id: 1, send_event_list: [7]") +
                npu_op("b", "vec", "a_out", "scope: s, stream_id: 2, recv_event_list: [7]"));
        json ops = json::parse(codegen::cann_kernel_info(f.graph, p, s, "/"))["op_list"];
        INFO(fusion);
        REQUIRE(ops.size() == 2);
        CHECK(ops[0]["send_event_list"] == json::array({7}));
        CHECK(ops[1]["recv_event_list"] == json::array({7}));
    }
}

namespace {

// A tiling (stream 3) and a prefetch (stream 2) beside scope s: a notifies the tiling (1), b waits
// for it (2) and notifies the prefetch of x (3), c waits for the prefetch (4); the extras go to
// a's and c's fields.
std::string side_graph(const std::string& a_extra, const std::string& c_extra) {
    return test::header() + npu_op("a", "vec", "x", "scope: s, send_event_list: [1]" + a_extra) +
           "  - {name: t, type: Tiling, kind: aicpu_tiling, tiling_for: b, stream_id: 3, " +
           kernel("vec", "") +
           ", inputs: [a_out], outputs: [{name: tiling, shape: [4], dtype: int32}], "
           "recv_event_list: [1], send_event_list: [2]}\n" +
           npu_op("b", "vec", "a_out, tiling",
                  "scope: s, recv_event_list: [2], send_event_list: [3]") +
           "  - {name: pf, kind: prefetch, stream_id: 2, inputs: [x], recv_event_list: [3], "
           "send_event_list: [4]}\n" +
           npu_op("c", "vec", "b_out, x", "scope: s, recv_event_list: [4]" + c_extra);
}

} // namespace

TEST_CASE("kernel_info: notify/wait with operators beside the cores are listed (tiling sink, "
          "prefetch)",
          "[codegen][cann]") {
    test::GraphFixture f;
    fusion::Plan p;
    const auto& s = plan_one(f, p, side_graph("", ""));
    json ops = json::parse(codegen::cann_kernel_info(f.graph, p, s, "/"))["op_list"];
    REQUIRE(ops.size() == 3);
    CHECK(ops[0]["send_event_list"] == json::array({1}));
    CHECK(ops[0]["recv_event_list"] == json::array());
    CHECK(ops[1]["recv_event_list"] == json::array({2}));
    CHECK(ops[1]["send_event_list"] == json::array({3}));
    CHECK(ops[2]["recv_event_list"] == json::array({4}));
    CHECK(ops[2]["send_event_list"] == json::array());
}

TEST_CASE("kernel_info: notify/wait on the first or last sub-kernel is refused where the vendor "
          "refuses them",
          "[codegen][cann]") {
    test::GraphFixture f;
    // c, the last sub-kernel, also notifies the tiling's stream.
    load_npu(f, side_graph("", ", send_event_list: [5]") +
                    "  - {name: pf2, kind: prefetch, stream_id: 2, inputs: "
                    "[x], recv_event_list: [5], send_event_list: [6]}\n" +
                    npu_op("d", "vec", "x", "stream_id: 4, recv_event_list: [6]"));
    // The plan for the graph's dav-2201 refuses it before any backend runs...
    fusion::make_plan(f.graph, f.diags);
    REQUIRE(f.diags.error_count() == 1);
    CHECK_THAT(f.diags.format(), Catch::Contains("error: 'c' is the last sub-kernel of "
                                                 "SuperKernel 's' and notifies 'pf2'"));
    // ... and the vendor backend, by the same rule, never gets a plan made for another target.
    graph::Diagnostics host_diags;
    auto p = fusion::make_plan(f.graph, graph::dependencies(f.graph), host_diags,
                               fusion::PlanDepth::full, "host");
    REQUIRE_FALSE(host_diags.has_errors());
    REQUIRE(p.segments.size() == 1);
    CHECK_THROWS_WITH(codegen::cann_kernel_info(f.graph, p, p.segments[0], "/"),
                      Catch::Contains("operator 'c' is the last sub-kernel of SuperKernel 's' and "
                                      "notifies event 5 with an operator beside the cores: the "
                                      "vendor's SuperKernel compiler refuses it"));
}

TEST_CASE("kernel_info: an event between two sub-kernels of one stream is refused where the "
          "vendor refuses it",
          "[codegen][cann]") {
    // graph-autofusion 423ae264 / e1cbeb9b super_kernel_op_infos.py
    // (find_all_inner_event_id_set): "self send/receive pair within 1 real stream", for any later
    // receiver on the sender's stream, not only the next sub-kernel.
    test::GraphFixture f;
    load_npu(f, test::header() + npu_op("a", "vec", "x", "scope: s, send_event_list: [1]") +
                    npu_op("m", "vec", "x", "scope: s") +
                    npu_op("b", "vec", "a_out, m_out", "scope: s, recv_event_list: [1]"));
    fusion::make_plan(f.graph, f.diags);
    REQUIRE(f.diags.error_count() == 1);
    CHECK_THAT(f.diags.format(),
               Catch::Contains("error: 'b' receives event 1 from 'a' on the same stream (0) in "
                               "SuperKernel 's': CANN's SuperKernel compiler refuses an event "
                               "between two sub-kernels of one stream (\"super kernel do not "
                               "support self send/receive pair within 1 real stream\")"));
    // The host target builds it (its runtime fills every flag); the vendor backend never gets it.
    graph::Diagnostics host_diags;
    auto p = fusion::make_plan(f.graph, graph::dependencies(f.graph), host_diags,
                               fusion::PlanDepth::full, "host");
    REQUIRE_FALSE(host_diags.has_errors());
    REQUIRE(p.segments.size() == 1);
    auto same = fusion::same_stream_events(f.graph, p.segments[0]);
    REQUIRE(same.size() == 1);
    CHECK(same[0].event == 1);
    CHECK(f.graph.ops[static_cast<std::size_t>(same[0].sender)].name == "a");
    CHECK(f.graph.ops[static_cast<std::size_t>(same[0].receiver)].name == "b");
    CHECK_THROWS_WITH(codegen::cann_kernel_info(f.graph, p, p.segments[0], "/"),
                      Catch::Contains("'b' receives event 1 from 'a' on the same stream (0) in "
                                      "SuperKernel 's'"));
}

TEST_CASE("kernel_info: relative kernel paths are made absolute against the base directory",
          "[codegen][cann]") {
    test::GraphFixture f;
    fusion::Plan p;
    const auto& s = plan_one(f, p, test::header() + npu_op("a", "vec", "x", "scope: s"));
    // The same graph as if it had been loaded by a relative path from /work/run.
    f.graph.dir = "in/g/../g";
    f.graph.kernels[0].path = "in/g/kernels/vec.json";
    json op = json::parse(codegen::cann_kernel_info(f.graph, p, s, "/work/run"))["op_list"][0];
    CHECK(op["bin_path"] == "/work/run/in/g/kernels/vec.o");
    CHECK(op["json_path"] == "/work/run/in/g/kernels/vec.json");
}

TEST_CASE("kernel_info: an operator without a kernel binary is refused, by name",
          "[codegen][cann]") {
    test::GraphFixture f;
    fusion::Plan p;
    const auto& s = plan_one(f, p, test::header() + npu_op("a", "vec", "x", "scope: s"));
    f.graph.ops[0].kernel.bin_path.clear();
    CHECK_THROWS_WITH(codegen::cann_kernel_info(f.graph, p, s, "/"),
                      Catch::Contains("operator 'a' has no kernel binary"));
}

TEST_CASE("super_kernel_options: the planned value of every option the vendor parses",
          "[codegen][cann]") {
    graph::ScopeOptions o;
    CHECK(codegen::cann_options_string(o) ==
          "func-align=2048:preload-code=per-func:early-start=0:stream-fusion=1:debug-dcci-all=0:"
          "debug-sync-all=0:feed-sync-all=0:profiling=0:strict-scope-check=bypass:split-mode=4");
    o.func_align = 256;
    o.preload_code = graph::PreloadCode::max;
    o.early_start = 2;
    o.stream_fusion = false;
    o.debug_dcci_all = o.debug_sync_all = o.feed_sync_all = o.profiling = true;
    o.compile_options = " -g  -O2\t-DX=1 ";
    o.strict_scope_check = graph::StrictScopeCheck::abort;
    o.dcci_before_kernel_start = {"MatMul*", "Add"};
    o.dcci_after_kernel_end = {"Mul"};
    o.dcci_disable_on_kernel = {"Relu"};
    o.split_mode = 2;
    o.debug_aic_num = 4;
    o.debug_aiv_num = 8;
    CHECK(codegen::cann_options_string(o) ==
          "func-align=256:preload-code=max:early-start=2:stream-fusion=0:debug-dcci-all=1:"
          "debug-sync-all=1:feed-sync-all=1:profiling=1:compile-options=-g,-O2,-DX=1:"
          "strict-scope-check=abort:dcci-before-kernel-start=MatMul*,Add:"
          "dcci-after-kernel-end=Mul:dcci-disable-on-kernel=Relu:split-mode=2:debug-aic-num=4:"
          "debug-aiv-num=8");
}

TEST_CASE("super_kernel_options: skforge's own parser reads it back to the same options",
          "[codegen][cann]") {
    graph::ScopeOptions o;
    o.func_align = 0;
    o.preload_code = graph::PreloadCode::none;
    o.early_start = 1;
    o.dcci_after_kernel_end = {"Soft*"};
    o.split_mode = 64;
    o.debug_aic_num = 0;
    o.debug_aiv_num = 2;
    // graph-autofusion's parser refuses a count of 0 (asc-devkit's copy takes it since
    // 7a8cec21); both read an absent one as 0: left out.
    CHECK_THAT(codegen::cann_options_string(o),
               Catch::Contains("debug-aiv-num=2") && !Catch::Contains("debug-aic-num"));
    auto back = parse_back(codegen::cann_options_string(o));
    CHECK(back.func_align == 0);
    CHECK(back.preload_code == graph::PreloadCode::none);
    CHECK(back.early_start == 1);
    CHECK(back.stream_fusion);
    CHECK(back.dcci_after_kernel_end == std::vector<std::string>{"Soft*"});
    CHECK(back.dcci_before_kernel_start.empty());
    CHECK(back.split_mode == 64);
    CHECK(back.debug_aic_num == 0);
    CHECK(back.debug_aiv_num == 2);
    // Defaults that differ from the vendor's are written out, so they do not fall back.
    graph::ScopeOptions vendor_like;
    vendor_like.func_align = 512;
    vendor_like.stream_fusion = false;
    CHECK(parse_back(codegen::cann_options_string(vendor_like)).func_align == 512);
    CHECK_FALSE(parse_back(codegen::cann_options_string(vendor_like)).stream_fusion);
}

TEST_CASE("super_kernel_options: a compile-options word with ',' or ':' is refused",
          "[codegen][cann]") {
    graph::ScopeOptions o;
    o.compile_options = "-g -Wl,--gc-sections";
    CHECK_THROWS_AS(codegen::cann_options_string(o), support::Error);
    CHECK_THROWS_WITH(codegen::cann_options_string(o),
                      Catch::Contains("'-Wl,--gc-sections'") && Catch::Contains("--sk-backend"));
}

TEST_CASE("the vendor call: kernel name, driver command and probe", "[codegen][cann]") {
    test::GraphFixture f;
    fusion::Plan p;
    const auto& s = plan_one(f, p, test::header() + npu_op("a", "vec", "x", "scope: my-sk"));
    CHECK(codegen::cann_kernel_name(f.graph, s) == "t_my_sk");
    CHECK(
        codegen::cann_command("d.py", "cann/s/kernel_info.json", "t_s", "Ascend910B1", "cann/s") ==
        std::vector<std::string>{"python3", "-B", "d.py", "cann/s/kernel_info.json", "t_s",
                                 "Ascend910B1", "cann/s"});
    auto probe = codegen::cann_probe_command();
    REQUIRE(probe.size() == 4);
    CHECK(probe[3].find("from superkernel import super_kernel") != std::string::npos);
    const std::string driver = codegen::cann_driver_program();
    CHECK(driver.find("super_kernel.compile(kernel_info, kernel_name)") != std::string::npos);
    CHECK(driver.find("kernel_meta_parent_dir") != std::string::npos);
}

TEST_CASE("kernel_info: dcci-disable-on-kernel is handed as each line's vendor takes it",
          "[codegen][cann]") {
    // graph-autofusion e1cbeb9b reads a sub-kernel's dcci-disable only from its JSON
    // (super_kernel_sub_op_infos.py, sub_operator_call_dcci_disable_on_kernel), which asc-devkit
    // 1ea13f3b's op compiler sets from the scope's option (super_kernel_sub_op_compile.py): a
    // sub-kernel the scope names whose JSON does not say so is handed a copy that does. asc-devkit
    // eeb99217's option parser refuses the key, and 423ae264 has no such flag.
    test::GraphFixture f;
    fusion::Plan p;
    const auto& s = plan_one(f, p,
                             test::header("scopes: {s: \"dcci-disable-on-kernel=Tcube\"}\n") +
                                 npu_op("a", "vec", "x", "scope: s") +
                                 npu_op("b", "cube", "a_out", "scope: s"));
    REQUIRE(s.subs.size() == 2);
    CHECK(s.subs[1].dcci_disabled);
    const auto& r90 = codegen::cann_release(codegen::CannVersion::v9_0);
    auto copies = codegen::cann_json_copies(f.graph, s, r90);
    REQUIRE(copies.size() == 1);
    CHECK(copies[0].position == 1);
    CHECK(copies[0].file == "sub_kernel_1.json");
    json copy = json::parse(copies[0].text);
    CHECK(copy["sub_operator_call_dcci_disable_on_kernel"] == true);
    json original = json::parse(test::read_text(f.dir / "kernels/cube.json"));
    copy.erase("sub_operator_call_dcci_disable_on_kernel");
    CHECK(copy == original); // nothing else changed
    json info = json::parse(codegen::cann_kernel_info(f.graph, p, s, "/elsewhere", r90));
    CHECK_THAT(info["op_list"][0]["json_path"].get<std::string>(),
               Catch::EndsWith("/kernels/vec.json"));
    CHECK(info["op_list"][1]["json_path"] == "sub_kernel_1.json"); // beside the kernel_info
    CHECK_THAT(info["super_kernel_options"].get<std::string>(),
               Catch::Contains("dcci-disable-on-kernel=Tcube"));
    // skforge's own SuperKernel JSON says what the vendor's then says (the copy's flag).
    json lists = json::parse(fusion::kernel_meta_json(
        f.graph, s, "dav-2201", r90.kernel_list))["SuperkernelInfo"]["kernelList"];
    int seen = 0;
    for (const auto& [core, entries] : lists.items())
        for (const auto& e : entries) {
            INFO(core << " " << e.dump());
            CHECK(e["sub_operator_call_dcci_disable_on_kernel"] == (e["func_name"] == "cube"));
            ++seen;
        }
    CHECK(seen == 2);

    // A JSON that says so already is handed as it is.
    test::write_text(f.dir / "kernels/cube.json",
                     original.dump().substr(0, original.dump().size() - 1) +
                         ",\"sub_operator_call_dcci_disable_on_kernel\":true}");
    test::GraphFixture g;
    fusion::Plan q;
    test::write_text(g.dir / "kernels/cube.json", test::read_text(f.dir / "kernels/cube.json"));
    const auto& t = plan_one(g, q,
                             test::header("scopes: {s: \"dcci-disable-on-kernel=Tcube\"}\n") +
                                 npu_op("a", "vec", "x", "scope: s") +
                                 npu_op("b", "cube", "a_out", "scope: s"));
    CHECK(codegen::cann_json_copies(g.graph, t, r90).empty());

    // 8.5: refused, naming the option and the line; without the option nothing changes.
    const auto& r85 = codegen::cann_release(codegen::CannVersion::v8_5);
    CHECK(codegen::cann_json_copies(f.graph, s, r85).empty());
    CHECK_THROWS_WITH(
        codegen::cann_kernel_info(f.graph, p, s, "/", r85),
        Catch::Contains("SuperKernel 's' has dcci-disable-on-kernel=Tcube: CANN 8.5's "
                        "SuperKernel compiler refuses the option") &&
            Catch::Contains("--cann-version 9.0"));
    test::GraphFixture h;
    fusion::Plan hp;
    const auto& u = plan_one(h, hp,
                             test::header("scopes: {s: \"early-start=1\"}\n") +
                                 npu_op("a", "vec", "x", "scope: s") +
                                 npu_op("b", "cube", "a_out", "scope: s"));
    CHECK_NOTHROW(codegen::cann_kernel_info(h.graph, hp, u, "/", r85));
    CHECK(codegen::cann_json_copies(h.graph, u, r90).empty());
}
