// SPDX-License-Identifier: Apache-2.0
// What skc pack, import, inspect and keygen show, as JSON values and text lines, from real
// packages.
#include "craft.hpp"
#include "skforge/package/report.hpp"
#include "skforge/package/signature.hpp"
#include "skforge/package/writer.hpp"
#include "skforge/support/error.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <catch2/catch.hpp>

using namespace skforge;
using namespace skforge::package;
using nlohmann::json;

namespace {

// A package "demo" 2.1 of one kernel, signed with `key` when given.
struct Packed {
    test::ScopedTempDir dir;
    std::string run = dir / "demo.run";
    PackResult result;

    explicit Packed(std::optional<std::string> key = std::nullopt) {
        test::write_text(dir / "src/soc/Add/add.o", "kernel");
        PackOptions o{dir / "src", run, "2.1", "dav-2201", "Ascend910B1", Compression::zstd};
        o.sign_key = key;
        result = pack(o);
    }
};

bool has_line(const report::Lines& lines, const std::string& line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
}

} // namespace

TEST_CASE("pack's result names the .run, the labels, the sizes and the signer",
          "[package][report]") {
    PackResult r;
    r.header.name = "demo";
    r.header.version = "2.1";
    r.header.npu_arch = "dav-2201";
    r.header.soc_version = "Ascend910B1";
    r.header.compression = Compression::zstd;
    r.header.file_count = 7;
    r.header.unpacked_size = 1000;
    r.header.payload_size = 300;
    r.header.payload_sha256 = std::string(64, 'a');
    auto j = report::pack_result("out/demo.run", r);
    CHECK(j == json{{"run", "out/demo.run"},
                    {"name", "demo"},
                    {"version", "2.1"},
                    {"npu_arch", "dav-2201"},
                    {"soc_version", "Ascend910B1"},
                    {"compression", "zstd"},
                    {"file_count", 7},
                    {"unpacked_size", 1000},
                    {"payload_size", 300},
                    {"payload_sha256", std::string(64, 'a')},
                    {"signer_key_id", nullptr}});
    CHECK(report::pack_text(j) ==
          report::Lines{"packed demo 2.1 into out/demo.run: 7 entries, 1000 bytes unpacked, 300 "
                        "bytes zstd payload",
                        "payload sha256 " + std::string(64, 'a')});
    r.key_id = std::string(64, 'b');
    auto signed_text = report::pack_text(report::pack_result("demo.run", r));
    REQUIRE(signed_text.size() == 3);
    CHECK(signed_text[2] == "signed by key " + std::string(64, 'b'));
}

TEST_CASE("import's result says where it came from and whether it is signed", "[package][report]") {
    PackResult r;
    r.header.name = "static_kernel";
    r.header.version = "20250101";
    r.header.file_count = 3;
    r.header.payload_sha256 = "ff";
    auto j = report::import_result("vendor.run", "ours.run", r);
    CHECK(j == json{{"run", "ours.run"},
                    {"from", "vendor.run"},
                    {"name", "static_kernel"},
                    {"version", "20250101"},
                    {"file_count", 3},
                    {"payload_sha256", "ff"},
                    {"signer_key_id", nullptr}});
    CHECK(
        report::import_text(j) ==
        report::Lines{"imported static_kernel 20250101 from vendor.run into ours.run: 3 entries"});
    r.key_id = "k1";
    CHECK(report::import_text(report::import_result("v.run", "o.run", r)) ==
          report::Lines{"imported static_kernel 20250101 from v.run into o.run: 3 entries, "
                        "signed by key k1"});
}

TEST_CASE("inspect shows the header and, with list, every file with its mode and digest",
          "[package][report]") {
    Packed p;
    RunPackage run(p.run);
    auto doc = report::inspect(run, {true, false, {}});
    CHECK(doc["path"] == p.run);
    CHECK(doc["name"] == "demo");
    CHECK(doc["version"] == "2.1");
    CHECK(doc["compression"] == "zstd");
    CHECK(doc["file_count"] == p.result.header.file_count);
    CHECK(doc["file_size"] == run.actual_size());
    CHECK(doc["stub_canonical"] == true);
    CHECK(doc["signer_key_id"].is_null());
    CHECK(doc["ok"] == true);
    CHECK(doc["inputs_digest"].get<std::string>().size() == 64);
    CHECK_FALSE(doc.contains("verification"));
    auto kernel = std::find_if(doc["files"].begin(), doc["files"].end(),
                               [](const json& f) { return f["path"] == "soc/Add/add.o"; });
    REQUIRE(kernel != doc["files"].end());
    CHECK((*kernel)["type"] == "file");
    CHECK((*kernel)["mode"] == "0644");
    CHECK((*kernel)["size"] == 6);

    auto text = report::inspect_text(doc);
    CHECK(text[0] == "Package:         " + p.run);
    CHECK(has_line(text, "Name:            demo"));
    CHECK(has_line(text, "Files:           " + std::to_string(p.result.header.file_count)));
    CHECK(has_line(text, "Payload:         " + std::to_string(p.result.header.payload_size) +
                             " bytes at offset " + std::to_string(p.result.header.payload_offset)));
    CHECK(has_line(text, "Signer key id:   (unsigned)"));
    CHECK(has_line(text, "Stub:            canonical"));
    CHECK(has_line(text, "f 0644            6 " + (*kernel)["sha256"].get<std::string>() +
                             " soc/Add/add.o"));
    CHECK(has_line(text, "d 0755            - " + std::string(64, '-') + " soc"));
    CHECK_FALSE(has_line(report::inspect_text(report::inspect(run, {})),
                         "d 0755            - " + std::string(64, '-') + " soc"));
}

TEST_CASE("inspect --verify: every check ok, a trusted signer verified", "[package][report]") {
    test::ScopedTempDir keys;
    auto key = Key::generate(keys / "k");
    Packed p(keys / "k.pem");
    RunPackage run(p.run);
    auto doc = report::inspect(run, {false, true, {Key::load_public(keys / "k.pub.pem")}});
    CHECK(doc["ok"] == true);
    CHECK(doc["signer_key_id"] == key.key_id());
    CHECK(doc["verification"] == json{{"stub", "ok"},
                                      {"payload_digest", "ok"},
                                      {"entries", "ok"},
                                      {"scripts", "ok"},
                                      {"signature", "verified"}});
    auto text = report::inspect_text(doc);
    CHECK(has_line(text, "Signer key id:   " + key.key_id()));
    CHECK(has_line(text, "Verify signature: verified"));
    CHECK(has_line(text, "Verify stub:     ok"));
}

TEST_CASE("inspect --verify: another signer fails the policy; a flipped byte fails the digest",
          "[package][report]") {
    test::ScopedTempDir keys;
    Key::generate(keys / "k");
    Key::generate(keys / "other");
    Packed p(keys / "k.pem");
    auto doc = report::inspect(RunPackage(p.run),
                               {false, true, {Key::load_public(keys / "other.pub.pem")}});
    CHECK(doc["ok"] == false);
    CHECK(doc["verification"]["signature"] == "signed by an untrusted key");
    CHECK(doc["verification"]["signature_policy"].is_string());

    auto bytes = test::read_text(p.run);
    auto at = p.result.header.payload_offset + p.result.header.payload_size - 20;
    bytes[at] = static_cast<char>(bytes[at] ^ 1);
    test::write_text(p.run, bytes);
    doc = report::inspect(RunPackage(p.run), {false, true, {}});
    CHECK(doc["ok"] == false);
    CHECK_THAT(doc["verification"]["payload_digest"].get<std::string>(),
               Catch::Contains("payload SHA-256 mismatch"));
    CHECK(doc["verification"]["signature"] == "not checked (payload digest failed)");
    CHECK(has_line(report::inspect_text(doc),
                   "Verify signature: not checked (payload digest failed)"));
}

TEST_CASE("inspect: a manifest that cannot be read throws, unless verifying: then it is the error",
          "[package][report]") {
    test::ScopedTempDir dir;
    auto m = test::make_manifest("pkg", {test::file_entry("a", "kernel")});
    RunPackage run(test::craft_run(dir.path(), m, "{not json", {}));
    CHECK_THROWS_WITH(report::inspect(run, {}), Catch::Contains("invalid manifest"));
    auto doc = report::inspect(run, {false, true, {}});
    CHECK(doc["ok"] == false);
    CHECK_THAT(doc["error"].get<std::string>(), Catch::Contains("invalid manifest"));
    CHECK_FALSE(doc.contains("inputs_digest"));
}

TEST_CASE("keygen names both files and the key id", "[package][report]") {
    test::ScopedTempDir dir;
    auto key = Key::generate(dir / "k");
    CHECK(report::keygen_text(dir / "k", key) ==
          report::Lines{"wrote " + (dir / "k") + ".pem (private, keep it secret) and " +
                            (dir / "k") + ".pub.pem",
                        "key id " + key.key_id()});
}
