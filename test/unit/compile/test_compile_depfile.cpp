// SPDX-License-Identifier: Apache-2.0
#include "skforge/compile/depfile.hpp"
#include "skforge/support/error.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <filesystem>

using namespace skforge;
using skforge::test::ScopedTempDir;
using skforge::test::write_text;

namespace {

// A host kernel's metadata, named `name`.
std::string host_meta(const std::string& name) {
    return R"({"kernelName":")" + name +
           R"(","blockDim":1,"magic":"RT_DEV_BINARY_MAGIC_SKFORGE_HOST",)"
           R"("sub_operator_kernel_type":"KERNEL_TYPE_AIV_ONLY","supportSuperKernel":1})";
}

// g.yaml: op a uses kernel `a` with source_path, ops b and c share kernel `b` (its source beside
// its metadata).
struct InputsFixture {
    ScopedTempDir dir;
    compile::CompileOptions o;
    InputsFixture() {
        write_text(dir / "k/a.json", host_meta("A_host"));
        write_text(dir / "src/a.cpp", "// a\n");
        write_text(dir / "k/b.json", host_meta("B_host"));
        write_text(dir / "k/b.cpp", "// b\n");
        write_graph("{json_path: k/b.json}");
        o.graph_path = dir / "g.yaml";
        o.npu_arch = "host";
    }
    // Writes g.yaml with kernel `b` (ops b and c) given as `b_kernel`.
    void write_graph(const std::string& b_kernel) {
        write_text(dir / "g.yaml", R"(name: g
inputs:
  - {name: x, shape: [4], dtype: float32}
ops:
  - {name: a, type: A, kernel: {json_path: k/a.json, source_path: src/a.cpp},
     inputs: [x], outputs: [{name: ya, shape: [4], dtype: float32}]}
  - {name: b, type: B, kernel: )" + b_kernel +
                                       R"(, inputs: [ya],
     outputs: [{name: yb, shape: [4], dtype: float32}]}
  - {name: c, type: B, kernel: )" + b_kernel +
                                       R"(, inputs: [yb],
     outputs: [{name: yc, shape: [4], dtype: float32}]}
)");
    }
    // `path` relative to the fixture's directory, so expectations do not name the temp dir.
    std::vector<std::string> relative(const std::vector<std::string>& paths) const {
        std::vector<std::string> out;
        for (const auto& p : paths)
            out.push_back(std::filesystem::relative(p, dir.path()).lexically_normal().string());
        return out;
    }
};

} // namespace

TEST_CASE("compile_inputs lists the graph, each kernel's metadata and host source once",
          "[compile][depfile]") {
    InputsFixture f;
    auto inputs = compile::compile_inputs(f.o);
    CHECK(inputs.front() == f.o.graph_path);
    CHECK(f.relative(inputs) ==
          std::vector<std::string>{"g.yaml", "k/a.json", "k/b.json", "src/a.cpp", "k/b.cpp"});
}

TEST_CASE("compile_inputs adds the binaries and the signing key, and no sources for NPU targets",
          "[compile][depfile]") {
    InputsFixture f;
    write_text(f.dir / "k/b.o", "object");
    write_text(f.dir / "key.pem", "key");
    f.write_graph("{json_path: k/b.json, bin_path: k/b.o}");
    f.o.sign_key = f.dir / "key.pem";

    // A host object given as bin_path is built from, so its source beside the metadata is not.
    CHECK(f.relative(compile::compile_inputs(f.o)) ==
          std::vector<std::string>{"g.yaml", "k/a.json", "k/b.json", "k/b.o", "src/a.cpp",
                                   "key.pem"});
    f.o.npu_arch = "dav-2201";
    CHECK(f.relative(compile::compile_inputs(f.o)) ==
          std::vector<std::string>{"g.yaml", "k/a.json", "k/b.json", "k/b.o", "key.pem"});
}

TEST_CASE("compile_inputs refuses a graph with errors, naming it", "[compile][depfile]") {
    InputsFixture f;
    write_text(f.dir / "g.yaml", "name: g\nops: [{name: a}]\n");
    CHECK_THROWS_WITH(compile::compile_inputs(f.o), Catch::Contains(f.o.graph_path + ": "));
}

TEST_CASE("depfile_escape writes spaces, $ and # as make and ninja read them",
          "[compile][depfile]") {
    CHECK(compile::depfile_escape("/a/b_c-1.2+x:y/k.json") == "/a/b_c-1.2+x:y/k.json");
    CHECK(compile::depfile_escape("my dir/a b.cpp") == "my\\ dir/a\\ b.cpp");
    CHECK(compile::depfile_escape("$HOME/$$") == "$$HOME/$$$$");
    CHECK(compile::depfile_escape("#1/x#") == "\\#1/x\\#");
}

TEST_CASE("depfile_escape refuses what make, ninja and CMake read differently",
          "[compile][depfile]") {
    for (std::string bad : {"a\nb", "a\rb", "a\tb", "a\\b", "end\\"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS(compile::depfile_escape(bad), support::Error);
        CHECK_THROWS_WITH(compile::depfile_escape(bad),
                          Catch::Contains("'" + bad + "'") && Catch::Contains("depfile"));
    }
}

TEST_CASE("depfile_rule is one rule, one escaped name per line", "[compile][depfile]") {
    CHECK(compile::depfile_rule("out/x y.run", {"g.yaml", "k/$a.cpp"}) ==
          "out/x\\ y.run: \\\n  g.yaml \\\n  k/$$a.cpp\n");
    CHECK(compile::depfile_rule("x.run", {}) == "x.run:\n");
}

TEST_CASE("self_executable is this process's executable", "[compile][depfile]") {
    auto self = compile::self_executable();
    CHECK(std::filesystem::path(self).is_absolute());
    // This test's binary (compared by name and kind, not with a stat of /proc/self/exe, which
    // qemu-user, running the aarch64 build here, answers with the emulator's own).
    CHECK(std::filesystem::path(self).filename() == "skforge_unit_tests");
    CHECK(std::filesystem::is_regular_file(self));
}
