// SPDX-License-Identifier: Apache-2.0
// The C interface's refusals (include/skforge/runtime.h), on a package installed for real: one
// whose program has a graph input and a prefetch (no kernel libraries), packed and installed by
// skforge's own libraries.
#include "skforge/install/layout.hpp"
#include "skforge/install/transaction.hpp"
#include "skforge/package/writer.hpp"
#include "skforge/runtime.h"
#include "skforge/support/log.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

using namespace skforge;

namespace {

const char* k_program = R"({"format": "skforge-host-program", "version": 1, "abi_version": 1,
  "graph": "g",
  "tensors": [{"name": "w", "dtype": "float32", "shape": [2, 8], "graph_input": true,
               "graph_output": false, "producer": ""}],
  "ops": [{"name": "p", "type": "Prefetch", "kind": "prefetch", "stream": 1, "library": "",
           "symbol": "", "block_dim": 1, "workspace": 0, "core_mask": 3, "inputs": [0],
           "outputs": [], "segment": -1}],
  "segments": [], "steps": [{"op": 0}]})";

// <dir>/root with package `pf` installed, its program `program`.
struct Installed {
    test::ScopedTempDir dir;
    std::string root() const { return dir / "root"; }
    explicit Installed(const std::string& program = k_program) {
        std::string src = dir / "src";
        test::write_text(src + "/host/program.json", program);
        test::write_text(src + "/config/host/binary_info_config.json", "{}\n");
        package::PackOptions o{src, dir / "pf.run", "1.0", "", ""};
        o.name = "pf";
        package::pack(o);
        std::filesystem::create_directories(root());
        install::Policy policy;
        support::NullLog log;
        auto pkg = install::verify_package(o.output, policy);
        auto tree = install::InstallTree::open(root(), install::Create::yes);
        install::TreeLock lock(*tree, install::LockMode::exclusive);
        install::install_package(*tree, pkg, install::InstallMode::install, policy, log);
    }
};

std::string last_error() {
    return skf_last_error();
}

// k_program with its tensors and operators replaced: a crafted program, installed for real
// (its manifest is right), as a package from anyone could be.
std::string crafted(const std::string& tensors, const std::string& ops = "",
                    const std::string& steps = R"([{"op": 0}])") {
    std::string program = k_program;
    auto swap = [&](const std::string& key, const std::string& close, const std::string& with) {
        auto at = program.find("\"" + key + "\": ");
        auto from = at + key.size() + 4;
        auto end = program.find(close, from) + close.size();
        program.replace(from, end - from, with);
    };
    swap("tensors", "}]", tensors);
    if (!ops.empty())
        swap("ops", "}]", ops);
    swap("steps", "]", steps);
    return program;
}

const std::string k_prefetch_of_w = R"([{"name": "p", "type": "Prefetch", "kind": "prefetch",
    "stream": 1, "library": "", "symbol": "", "block_dim": 1, "workspace": 0, "core_mask": 3,
    "inputs": [0], "outputs": [], "segment": -1}])";

// skf_open's code and message for package `pf` with program `program`.
std::pair<int, std::string> open_crafted(const std::string& program) {
    Installed f(program);
    skf_package* pkg = nullptr;
    int rc = skf_open(f.root().c_str(), "pf", "host:1", &pkg);
    std::string message = last_error();
    skf_close(pkg);
    return {rc, message};
}

} // namespace

TEST_CASE("runtime C API: opens, describes, binds and runs an installed package",
          "[runtime][capi]") {
    Installed f;
    skf_package* pkg = nullptr;
    REQUIRE(skf_open(f.root().c_str(), "pf", "host:2", &pkg) == SKF_OK);
    CHECK(std::string(skf_device(pkg)) == "host:2");
    CHECK(std::string(skf_graph_name(pkg)) == "g");
    REQUIRE(skf_tensor_count(pkg) == 1);
    skf_tensor_info info{};
    REQUIRE(skf_tensor_info_at(pkg, 0, &info) == SKF_OK);
    CHECK(std::string(info.name) == "w");
    CHECK(std::string(info.dtype) == "float32");
    CHECK(info.is_output == 0);
    CHECK(info.rank == 2);
    CHECK(info.dims[0] == 2);
    CHECK(info.dims[1] == 8);
    CHECK(info.bytes == 64);
    CHECK(skf_tensor_role(pkg, 0) == SKF_ROLE_INPUT);
    std::vector<float> w(16, 1.0f);
    REQUIRE(skf_bind(pkg, "w", w.data()) == SKF_OK);
    REQUIRE(skf_run(pkg, nullptr) == SKF_OK);
    REQUIRE(skf_run_unfused(pkg, nullptr) == SKF_OK);
    skf_stats st{};
    REQUIRE(skf_get_stats(pkg, &st) == SKF_OK);
    CHECK(st.runs == 2);
    CHECK(st.launches == 0); // a prefetch runs beside the cores: no launch
    CHECK(last_error().empty());
    skf_close(pkg);
    CHECK(std::string(skf_version()) == SKF_VERSION);
    CHECK(skf_version_number() == SKF_VERSION_NUMBER);
}

TEST_CASE("runtime C API: refuses an unknown tensor, naming the ones there are",
          "[runtime][capi]") {
    Installed f;
    skf_package* pkg = nullptr;
    REQUIRE(skf_open(f.root().c_str(), "pf", "host:1", &pkg) == SKF_OK);
    float x = 0;
    CHECK(skf_bind(pkg, "v", &x) == SKF_E_NOT_FOUND);
    CHECK(last_error() == "skf_bind: package 'pf' has no tensor 'v'; its tensors: w");
    CHECK(skf_run_segment(pkg, "sk0", nullptr) == SKF_E_NOT_FOUND);
    CHECK(last_error() == "skf_run_segment: package 'pf' has no SuperKernel 'sk0' (its "
                          "SuperKernels: none)");
    skf_tensor_info info{};
    CHECK(skf_tensor_info_at(pkg, 1, &info) == SKF_E_ARGUMENT);
    CHECK(last_error().find("tensor index 1 out of range") != std::string::npos);
    CHECK(skf_segment_name(pkg, 0) == nullptr);
    skf_close(pkg);
}

TEST_CASE("runtime C API: a run with a graph tensor unbound is refused, naming it",
          "[runtime][capi]") {
    Installed f;
    skf_package* pkg = nullptr;
    REQUIRE(skf_open(f.root().c_str(), "pf", "host", &pkg) == SKF_OK);
    CHECK(skf_run(pkg, nullptr) == SKF_E_UNBOUND);
    CHECK(last_error() == "skf_run: package 'pf' needs 1 unbound tensor: w (bind them with "
                          "skf_bind)");
    CHECK(skf_run_unfused(pkg, nullptr) == SKF_E_UNBOUND);
    std::vector<float> w(16);
    REQUIRE(skf_bind(pkg, "w", w.data()) == SKF_OK);
    REQUIRE(skf_bind(pkg, "w", nullptr) == SKF_OK); // unbinds
    CHECK(skf_run(pkg, nullptr) == SKF_E_UNBOUND);
    skf_stats st{};
    REQUIRE(skf_get_stats(pkg, &st) == SKF_OK);
    CHECK(st.runs == 0);
    skf_close(pkg);
}

TEST_CASE("runtime C API: bad device strings and arguments are refused before anything opens",
          "[runtime][capi]") {
    Installed f;
    for (const char* device : {"gpu", "host:0", "host:257", "host:", "npu", "npu:", "npu:-1",
                               "npu:1x", "HOST", "host:2 "}) {
        skf_package* pkg = reinterpret_cast<skf_package*>(&f); // must be reset to NULL
        CHECK(skf_open(f.root().c_str(), "pf", device, &pkg) == SKF_E_ARGUMENT);
        CHECK(pkg == nullptr);
        CHECK(last_error() == std::string("device '") + device +
                                  "': expected host, host:<workers> (1 to 256) or npu:<id>");
    }
    skf_package* pkg = nullptr;
    CHECK(skf_open(f.root().c_str(), nullptr, "host", &pkg) == SKF_E_ARGUMENT);
    CHECK(skf_open(f.root().c_str(), "pf", "host", nullptr) == SKF_E_ARGUMENT);
    CHECK(skf_open(f.root().c_str(), "nothere", "host", &pkg) == SKF_E_NOT_FOUND);
    CHECK(last_error().find("package 'nothere' is not installed under ") != std::string::npos);
    CHECK(last_error().find("(installed: pf)") != std::string::npos);
    CHECK(skf_open((f.dir / "elsewhere").c_str(), "pf", "host", &pkg) != SKF_OK);
    CHECK(pkg == nullptr);
}

TEST_CASE("runtime C API: npu without CANN's runtime names set_env.sh", "[runtime][capi]") {
    Installed f;
    ::setenv("SKFORGE_ASCENDCL", "libascendcl_not_here.so", 1);
    skf_package* pkg = nullptr;
    CHECK(skf_open(f.root().c_str(), "pf", "npu:3", &pkg) == SKF_E_DEVICE);
    ::unsetenv("SKFORGE_ASCENDCL");
    CHECK(pkg == nullptr);
    CHECK(last_error().find("npu:3: cannot load CANN's runtime libascendcl_not_here.so") == 0);
    CHECK(last_error().find("set_env.sh") != std::string::npos);
}

TEST_CASE("runtime C API: a closed handle is refused, not used", "[runtime][capi]") {
    Installed f;
    skf_package* pkg = nullptr;
    REQUIRE(skf_open(f.root().c_str(), "pf", "host:1", &pkg) == SKF_OK);
    skf_close(pkg);
    float x = 0;
    CHECK(skf_bind(pkg, "w", &x) == SKF_E_MISUSE);
    CHECK(last_error() == "skf_bind: the handle is closed or did not come from skf_open");
    CHECK(skf_run(pkg, nullptr) == SKF_E_MISUSE);
    CHECK(skf_run_segment(pkg, "x", nullptr) == SKF_E_MISUSE);
    CHECK(skf_tensor_count(pkg) == 0);
    CHECK(skf_device(pkg) == nullptr);
    skf_stats st{};
    CHECK(skf_get_stats(pkg, &st) == SKF_E_MISUSE);
    CHECK(skf_run(nullptr, nullptr) == SKF_E_MISUSE);
    CHECK(last_error() == "skf_run: the handle is NULL");
    skf_close(pkg); // closing twice is harmless
    skf_close(nullptr);
}

TEST_CASE("runtime C API: the last error is kept per thread", "[runtime][capi]") {
    CHECK(skf_run(nullptr, nullptr) == SKF_E_MISUSE);
    std::string other;
    std::thread([&] {
        other = last_error();
        CHECK(skf_bind(nullptr, "w", nullptr) == SKF_E_MISUSE);
    }).join();
    CHECK(other.empty());
    CHECK(last_error() == "skf_run: the handle is NULL");
}

TEST_CASE("runtime C API: device memory on the host is zeroed, copied both ways and freed once",
          "[runtime][capi]") {
    Installed f;
    skf_package* pkg = nullptr;
    REQUIRE(skf_open(f.root().c_str(), "pf", "host:1", &pkg) == SKF_OK);
    void* p = nullptr;
    REQUIRE(skf_device_malloc(pkg, 64, &p) == SKF_OK);
    REQUIRE(p != nullptr);
    std::vector<unsigned char> back(64, 0xff), data(64);
    REQUIRE(skf_copy_to_host(pkg, back.data(), p, 64) == SKF_OK);
    CHECK(back == std::vector<unsigned char>(64, 0));
    for (std::size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<unsigned char>(i);
    REQUIRE(skf_copy_to_device(pkg, p, data.data(), 64) == SKF_OK);
    REQUIRE(skf_copy_to_host(pkg, back.data(), p, 64) == SKF_OK);
    CHECK(back == data);
    // bound and run like any memory
    REQUIRE(skf_bind(pkg, "w", p) == SKF_OK);
    CHECK(skf_run(pkg, nullptr) == SKF_OK);
    REQUIRE(skf_device_free(pkg, p) == SKF_OK);
    CHECK(skf_device_free(pkg, p) == SKF_E_ARGUMENT);
    CHECK(last_error().find("freed twice") != std::string::npos);
    int local = 0;
    CHECK(skf_device_free(pkg, &local) == SKF_E_ARGUMENT);
    CHECK(skf_copy_to_device(pkg, nullptr, data.data(), 8) == SKF_E_ARGUMENT);
    void* left = nullptr;
    REQUIRE(skf_device_malloc(pkg, 8, &left) == SKF_OK); // freed by skf_close (ASan would say)
    skf_close(pkg);
    CHECK(skf_device_malloc(pkg, 8, &left) == SKF_E_MISUSE);
    CHECK(left == nullptr);
}

TEST_CASE("runtime C API: a tensor whose size wraps 64 bits is refused at open, named",
          "[runtime][capi][crafted]") {
    // 3 × 6148914691236517205 int8 = 2^64 - 1 bytes: rounded up to 64 it wrapped to a 64-byte
    // block, which the prefetch then read 2^64 bytes of.
    auto [rc, message] = open_crafted(crafted(
        R"([{"name": "w", "dtype": "int8", "shape": [3, 6148914691236517205],
             "graph_input": false, "graph_output": false}])"));
    CHECK(rc == SKF_E_PACKAGE);
    CHECK_THAT(message, Catch::Contains("host/program.json: tensors[0]: tensor 'w' of int8 is "
                                        "larger than memory can hold"));
    // a product that overflows 64 bits on its own
    std::tie(rc, message) = open_crafted(crafted(
        R"([{"name": "w", "dtype": "float32", "shape": [4294967296, 4294967296],
             "graph_input": false, "graph_output": false}])"));
    CHECK(rc == SKF_E_PACKAGE);
    CHECK_THAT(message, Catch::Contains("tensors[0].shape: more elements than 64 bits count"));
}

TEST_CASE("runtime C API: a tensor of more than 8 dims is refused at open (the kernel ABI and "
          "skf_tensor_info hold 8)",
          "[runtime][capi][crafted]") {
    auto [rc, message] = open_crafted(crafted(
        R"([{"name": "w", "dtype": "float32", "shape": [1, 1, 1, 1, 1, 1, 1, 1, 2],
             "graph_input": true, "graph_output": false}])"));
    CHECK(rc == SKF_E_PACKAGE);
    CHECK_THAT(message, Catch::Contains("tensors[0].shape: 9 dimensions; a tensor has at most 8"));
}

TEST_CASE("runtime C API: two tensors of one name are refused at open, naming it",
          "[runtime][capi][crafted]") {
    // Before, the package opened and every run said "needs 1 unbound tensor: w" after w was
    // bound (the bind went to the first).
    auto [rc, message] = open_crafted(
        crafted(R"([{"name": "w", "dtype": "float32", "shape": [2, 8], "graph_input": true,
                     "graph_output": false},
                    {"name": "w", "dtype": "float32", "shape": [2, 8], "graph_input": true,
                     "graph_output": false}])"));
    CHECK(rc == SKF_E_PACKAGE);
    CHECK_THAT(message, Catch::Contains("tensors[1]: tensor 'w' is named twice (also "
                                        "tensors[0]); a caller binds tensors by name"));
}

TEST_CASE("runtime C API: a workspace of 2^64 - 1 bytes is refused at open, not rounded to 64",
          "[runtime][capi][crafted]") {
    std::string ops = k_prefetch_of_w;
    ops.replace(ops.find(R"("workspace": 0)"), 14, R"("workspace": 18446744073709551615)");
    auto [rc, message] = open_crafted(crafted(
        R"([{"name": "w", "dtype": "float32", "shape": [16], "graph_input": true,
             "graph_output": false}])",
        ops));
    CHECK(rc == SKF_E_PACKAGE);
    CHECK_THAT(message, Catch::Contains("ops[0].workspace: 18446744073709551615 bytes, more than "
                                        "memory can hold"));
}

TEST_CASE("runtime C API: every number and index of a program is checked at open, named by its "
          "field",
          "[runtime][capi][crafted]") {
    const std::string w = R"([{"name": "w", "dtype": "float32", "shape": [16],
                               "graph_input": true, "graph_output": false}])";
    auto with = [&](const std::string& from, const std::string& to) {
        std::string ops = k_prefetch_of_w;
        ops.replace(ops.find(from), from.size(), to);
        return crafted(w, ops);
    };
    const std::pair<std::string, std::string> cases[] = {
        {with(R"("segment": -1)", R"("segment": 5)"),
         "ops[0].segment: 5 is out of range (0 segments; -1: none)"},
        {with(R"("stream": 1)", R"("stream": 4294967296)"),
         "ops[0].stream: 4294967296 is not an integer from 0 to 4294967295"},
        {with(R"("inputs": [0])", R"("inputs": [-1])"),
         "ops[0].inputs[0]: -1 is out of range (1 tensors)"},
        {with(R"("block_dim": 1)", R"("block_dim": 1.5)"),
         "ops[0].block_dim: 1.5 is not an integer from 0 to 4294967295"},
        {crafted(w, "", R"([{"op": 18446744073709551615}])"),
         "steps[0].op: 18446744073709551615 is out of range (1 operators)"},
        // a float where a list of integers belongs: converting 3e20 to int64 is undefined
        // (found by fuzz_runtime_program; test/fuzz/corpus/program/host_shape_float_3e20.json)
        {crafted(R"([{"name": "w", "dtype": "float32", "shape": [3e20],
                      "graph_input": true, "graph_output": false}])",
                 k_prefetch_of_w),
         "tensors[0].shape[0]: 3e+20 is not an integer from"},
        {with(R"("inputs": [0])", R"("inputs": [0], "notify": [2.5])"),
         "ops[0].notify[0]: 2.5 is not an integer from"},
    };
    for (const auto& [program, expected] : cases) {
        auto [rc, message] = open_crafted(program);
        CHECK(rc == SKF_E_PACKAGE);
        CHECK_THAT(message, Catch::Contains("host/program.json: " + expected));
    }
}

TEST_CASE("runtime C API: a device allocation whose rounding would wrap is refused",
          "[runtime][capi][crafted]") {
    Installed f;
    skf_package* pkg = nullptr;
    REQUIRE(skf_open(f.root().c_str(), "pf", "host:1", &pkg) == SKF_OK);
    for (std::size_t bytes : {SIZE_MAX, SIZE_MAX - 7, SIZE_MAX - 63}) {
        void* p = &pkg; // must be reset to NULL
        CHECK(skf_device_malloc(pkg, bytes, &p) == SKF_E_MEMORY);
        CHECK(p == nullptr);
        CHECK(last_error() ==
              "skf_device_malloc: out of memory for " + std::to_string(bytes) + " bytes");
    }
    skf_close(pkg);
}

TEST_CASE("runtime C API: a copy larger than the block skf_device_malloc gave is refused",
          "[runtime][capi][crafted]") {
    Installed f;
    skf_package* pkg = nullptr;
    REQUIRE(skf_open(f.root().c_str(), "pf", "host:1", &pkg) == SKF_OK);
    void* p = nullptr;
    REQUIRE(skf_device_malloc(pkg, 40, &p) == SKF_OK);
    auto* bytes = static_cast<unsigned char*>(p);
    std::vector<unsigned char> host(256, 7);
    CHECK(skf_copy_to_device(pkg, p, host.data(), 41) == SKF_E_ARGUMENT);
    CHECK(last_error() == "skf_copy_to_device: 41 bytes at offset 0 of a block of 40 bytes "
                          "(skf_device_malloc) would run past its end");
    CHECK(skf_copy_to_device(pkg, bytes + 30, host.data(), 11) == SKF_E_ARGUMENT);
    CHECK(skf_copy_to_host(pkg, host.data(), bytes + 39, 2) == SKF_E_ARGUMENT);
    CHECK(last_error() == "skf_copy_to_host: 2 bytes at offset 39 of a block of 40 bytes "
                          "(skf_device_malloc) would run past its end");
    // what fits is copied, and nothing of a refused copy was
    CHECK(skf_copy_to_device(pkg, bytes + 30, host.data(), 10) == SKF_OK);
    std::vector<unsigned char> back(40, 1);
    REQUIRE(skf_copy_to_host(pkg, back.data(), p, 40) == SKF_OK);
    CHECK(std::count(back.begin(), back.end(), 7) == 10);
    CHECK(std::count(back.begin(), back.begin() + 30, 0) == 30);
    REQUIRE(skf_device_free(pkg, p) == SKF_OK);
    skf_close(pkg);
}
