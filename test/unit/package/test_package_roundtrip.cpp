#include "craft.hpp"
#include "skforge/package/reader.hpp"
#include "skforge/package/writer.hpp"
#include "skforge/support/error.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>

using namespace skforge;
using namespace skforge::package;
using test::RawEntry;

namespace {

struct Collect : EntrySink {
    std::map<std::string, std::string> files;
    std::string current;
    void begin(const ManifestEntry& e) override {
        current = e.path;
        files[current];
    }
    void data(std::span<const std::uint8_t> b) override {
        files[current].append(b.begin(), b.end());
    }
    void end(const ManifestEntry&) override {}
};

void make_tree(const test::ScopedTempDir& dir) {
    test::write_text(dir / "src/soc/Add/add.json", "{\"kernelName\":\"add\"}\n");
    test::write_text(dir / "src/soc/Add/add.o", std::string(100000, '\x7f'));
}

std::string refusal(const std::string& run) {
    try {
        Collect sink;
        RunPackage(run).read_payload(sink);
    } catch (const support::Error& e) {
        CHECK(e.kind() == support::ErrorKind::integrity);
        return e.what();
    }
    return "accepted";
}

} // namespace

TEST_CASE("pack then read gives back every file", "[package][roundtrip]") {
    test::ScopedTempDir dir;
    make_tree(dir);
    PackOptions o{dir / "src", dir / "demo.run", "2.1", "dav-2201", "Ascend910B1"};
    auto r = pack(o);
    RunPackage run(dir / "demo.run");
    CHECK(run.header().name == "demo");
    CHECK(run.stub_is_canonical());
    run.verify_digests();
    Collect sink;
    auto m = run.read_payload(sink);
    CHECK(sink.files["soc/Add/add.o"] == std::string(100000, '\x7f'));
    CHECK(sink.files.count("install.sh") == 1);
    CHECK(m.entries.size() == r.header.file_count);
}

TEST_CASE("pack is reproducible and writes nothing on failure", "[package][roundtrip]") {
    test::ScopedTempDir dir;
    make_tree(dir);
    PackOptions o{dir / "src", dir / "a/demo.run", "1", "", ""};
    std::filesystem::create_directories(dir / "a");
    std::filesystem::create_directories(dir / "b");
    pack(o);
    o.output = dir / "b/demo.run";
    pack(o);
    CHECK(test::read_text(dir / "a/demo.run") == test::read_text(dir / "b/demo.run"));
    std::filesystem::create_symlink("/etc/passwd", dir / "src/evil");
    o.output = dir / "c.run";
    CHECK_THROWS_WITH(pack(o), Catch::Contains("evil' is a symbolic link"));
    CHECK(std::distance(std::filesystem::directory_iterator(dir.path()),
                        std::filesystem::directory_iterator()) ==
          3); // src, a, b: no c.run, no temp
}

TEST_CASE("a flipped payload byte is caught by digest and by read", "[package][roundtrip]") {
    test::ScopedTempDir dir;
    make_tree(dir);
    pack({dir / "src", dir / "demo.run", "1", "", ""});
    auto bytes = test::read_text(dir / "demo.run");
    bytes[bytes.size() - 20] = static_cast<char>(bytes[bytes.size() - 20] ^ 1);
    test::write_text(dir / "demo.run", bytes);
    RunPackage run(dir / "demo.run");
    CHECK_THROWS_WITH(run.verify_digests(), Catch::Contains("payload SHA-256 mismatch"));
    CHECK_THAT(refusal(dir / "demo.run"), !Catch::Equals("accepted"));
}

TEST_CASE("crafted payload entries are refused with their path", "[package][roundtrip]") {
    test::ScopedTempDir dir;
    std::string k = "kernel";
    auto m = test::make_manifest("bad", {test::file_entry("a", k)});
    auto text = manifest_to_json(m);
    auto run = [&](std::vector<RawEntry> entries) {
        return refusal(test::craft_run(dir.path(), m, text, entries));
    };
    CHECK_THAT(run({{"a", AE_IFREG, 0644, k}}), Catch::Equals("accepted"));
    CHECK_THAT(run({{"../a", AE_IFREG, 0644, k}}),
               Catch::Contains("'../a' path has a '..' component"));
    CHECK_THAT(run({{"/etc/a", AE_IFREG, 0644, k}}), Catch::Contains("is absolute"));
    CHECK_THAT(run({{"a", AE_IFLNK, 0777, "", "/etc/passwd"}}),
               Catch::Contains("symbolic link entry"));
    CHECK_THAT(run({{"a", AE_IFREG, 0644, "", "manifest.json", true}}),
               Catch::Contains("hard link entry"));
    CHECK_THAT(run({{"a", AE_IFIFO, 0644}}), Catch::Contains("FIFO entry"));
    CHECK_THAT(run({{"a", AE_IFREG, 04755, k}}), Catch::Contains("has mode 04755"));
    CHECK_THAT(run({{"a", AE_IFREG, 0666, k}}), Catch::Contains("has mode 0666"));
    CHECK_THAT(run({{"a", AE_IFREG, 0644, "kernex"}}),
               Catch::Contains("does not match its manifest SHA-256"));
    CHECK_THAT(run({{"a", AE_IFREG, 0644, "kern"}}), Catch::Contains("size other than"));
    CHECK_THAT(run({{"a", AE_IFREG, 0644, k}, {"a", AE_IFREG, 0644, k}}),
               Catch::Contains("appears twice"));
    CHECK_THAT(run({{"a", AE_IFREG, 0644, k}, {"b", AE_IFREG, 0644, k}}),
               Catch::Contains("'b' is not in the manifest"));
    CHECK_THAT(run({}), Catch::Contains("lists 'a' but the payload lacks it"));
    CHECK_THAT(run({{"a", AE_IFDIR, 0755}}),
               Catch::Contains("is a directory but the manifest lists a file"));
}

TEST_CASE("a manifest that disagrees with the header is refused", "[package][roundtrip]") {
    test::ScopedTempDir dir;
    std::string k = "kernel";
    auto m = test::make_manifest("pkg", {test::file_entry("a", k)});
    auto other = m;
    other.name = "other";
    CHECK_THAT(refusal(test::craft_run(dir.path(), m, manifest_to_json(other),
                                       {{"a", AE_IFREG, 0644, k}})),
               Catch::Contains("manifest's name differs"));
    CHECK_THAT(refusal(test::craft_run(dir.path(), m, "{not json", {})),
               Catch::Contains("invalid manifest"));
}

TEST_CASE("limits stop decompression bombs before extraction", "[package][roundtrip]") {
    test::ScopedTempDir dir;
    std::string k = "kernel";
    auto m = test::make_manifest("pkg", {test::file_entry("a", k)});
    auto path = test::craft_run(dir.path(), m, manifest_to_json(m), {{"a", AE_IFREG, 0644, k}});
    ReadLimits tight;
    tight.max_unpacked_bytes = 3;
    Collect sink;
    CHECK_THROWS_WITH(RunPackage(path).read_payload(sink, tight),
                      Catch::Contains("more than the limit"));
    CHECK(sink.files.empty());
}
