// SPDX-License-Identifier: Apache-2.0
// A package's own index as skc writes it: the fields CANN's runtime reads per entry, one entry
// per distinct call, OpTypes in a fixed order, the same bytes for the same entries.
#include "skforge/kernel/package_index.hpp"
#include "skforge/support/error.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace skforge::kernel;
using nlohmann::json;

namespace {

StaticEntry entry(std::string key, std::string bin = "p/dav-2201/Add/add.o") {
    return {48, "add_kernel", {16, 32}, CoreType::vector_core, std::move(bin), std::move(key)};
}

} // namespace

TEST_CASE("a package index entry carries what opbase's collector reads", "[kernel][index]") {
    PackageIndex index;
    index.add("Add", entry("Add/d=0,p=0/1,2,(4)"));
    const std::string text = index.text();
    REQUIRE(text.ends_with("}\n"));
    const json j = json::parse(text);
    REQUIRE(j.size() == 1);
    const json& op = j["Add"];
    CHECK(op["dynamicRankSupport"] == true);
    CHECK(op["simplifiedKeyMode"] == 0);
    REQUIRE(op["staticList"].size() == 1);
    const json& e = op["staticList"][0];
    CHECK(e["binDesc"]["blockDim"] == 48);
    CHECK(e["binDesc"]["kernelName"] == "add_kernel");
    CHECK(e["binDesc"]["workspace"] == json::array({16, 32}));
    CHECK(e["coreType"] == 2); // VectorCore as opbase's enum
    CHECK(e["binPath"] == "p/dav-2201/Add/add.o");
    CHECK(e["simplifiedKey"] == "Add/d=0,p=0/1,2,(4)");
    // Two-space indentation, as every index skc and skinstall write.
    CHECK(text.find("\n  \"Add\": {\n") != std::string::npos);
}

TEST_CASE("a package index keeps each distinct entry once, in the order added", "[kernel][index]") {
    PackageIndex index;
    index.add("Mul", entry("Mul/k2", "p/x/Mul/m.o"));
    index.add("Add", entry("Add/k1"));
    index.add("Mul", entry("Mul/k1", "p/x/Mul/m.o"));
    index.add("Mul", entry("Mul/k2", "p/x/Mul/m.o")); // the same call again
    auto other = entry("Mul/k2", "p/x/Mul/m.o");
    other.block_dim = 8; // the same key from another kernel is another entry
    index.add("Mul", other);
    CHECK(index.size() == 4);
    const json j = json::parse(index.text());
    // OpTypes sorted, whatever the order they came in: the same package gives the same bytes.
    CHECK(j.begin().key() == "Add");
    const json& mul = j["Mul"]["staticList"];
    REQUIRE(mul.size() == 3);
    CHECK(mul[0]["simplifiedKey"] == "Mul/k2");
    CHECK(mul[1]["simplifiedKey"] == "Mul/k1");
    CHECK(mul[2]["binDesc"]["blockDim"] == 8);

    PackageIndex again;
    again.add("Add", entry("Add/k1"));
    again.add("Mul", entry("Mul/k2", "p/x/Mul/m.o"));
    again.add("Mul", entry("Mul/k1", "p/x/Mul/m.o"));
    again.add("Mul", other);
    CHECK(again.text() == index.text());
}

TEST_CASE("an empty package index is an empty object", "[kernel][index]") {
    CHECK(PackageIndex().text() == "{}\n");
    CHECK(PackageIndex().size() == 0);
}

TEST_CASE("an index binPath is the package's name and the file, with no '.o' before its end",
          "[kernel][index]") {
    CHECK(index_bin_path("demo", "dav-2201/Add/add.o") == "demo/dav-2201/Add/add.o");
    CHECK(index_bin_path("demo", "host/SuperKernel/sk0.so") == "demo/host/SuperKernel/sk0.so");
    // The runtime cuts binPath at the first ".o" to find the JSON: demo.old/... would be cut there.
    CHECK_THROWS_WITH(index_bin_path("demo.old", "dav-2201/Add/add.o"),
                      Catch::Contains("binPath 'demo.old/dav-2201/Add/add.o' has '.o' before its "
                                      "end") &&
                          Catch::Contains("--name"));
    CHECK_THROWS_AS(index_bin_path("p", "dav-2201/x.ops/add.o"), skforge::support::Error);
}
