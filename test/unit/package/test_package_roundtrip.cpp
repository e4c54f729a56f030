// SPDX-License-Identifier: Apache-2.0
#include "craft.hpp"
#include "skforge/package/manifest.hpp"
#include "skforge/package/reader.hpp"
#include "skforge/package/writer.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/progress.hpp"
#include "skforge/support/sha256.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <zlib.h>

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

TEST_CASE("files packed from outside the tree give the same package; other bytes are refused",
          "[package][roundtrip]") {
    test::ScopedTempDir dir;
    make_tree(dir);
    namespace fs = std::filesystem;
    fs::create_directories(dir / "a");
    fs::create_directories(dir / "b");
    fs::create_directories(dir / "empty");
    PackOptions o{dir / "src", dir / "a/demo.run", "1", "", ""};
    pack(o);
    // The same files, streamed from elsewhere (a content-addressed store), their directories
    // implied: the same bytes.
    auto packed = [&](const std::string& path, const std::string& from) {
        auto d = support::sha256_file(from, UINT64_MAX);
        return PackedFile{path, EntryType::file, 0644, d.size, d.sha256, from};
    };
    auto json = packed("soc/Add/add.json", dir / "src/soc/Add/add.json");
    auto obj = packed("soc/Add/add.o", dir / "src/soc/Add/add.o");
    o.source_dir = dir / "empty";
    o.output = dir / "b/demo.run";
    o.files = {obj, json};
    pack(o);
    CHECK(test::read_text(dir / "a/demo.run") == test::read_text(dir / "b/demo.run"));
    // Both from one file, one after the other: the same bytes again.
    test::write_text(dir / "both", test::read_text(dir / "src/soc/Add/add.json") +
                                       test::read_text(dir / "src/soc/Add/add.o"));
    o.files = {json, obj};
    o.files[0].source = o.files[1].source = dir / "both";
    o.files[1].offset = json.size;
    fs::create_directories(dir / "b2");
    o.output = dir / "b2/demo.run";
    pack(o);
    CHECK(test::read_text(dir / "a/demo.run") == test::read_text(dir / "b2/demo.run"));
    // A source too short for its range: refused before anything is read.
    o.files[1].offset = json.size + 1;
    o.output = dir / "c.run";
    CHECK_THROWS_WITH(pack(o), Catch::Contains("(for 'soc/Add/add.o') has"));
    // A source whose bytes are not the SHA-256 it is packed as: refused, naming it; nothing
    // written.
    o.output = dir / "c.run";
    o.files = {json, packed("soc/Add/add.o", dir / "src/soc/Add/add.json")};
    o.files[1].sha256 = obj.sha256;
    CHECK_THROWS_WITH(pack(o),
                      Catch::Contains("'" + dir / "src/soc/Add/add.json" +
                                      "' (for 'soc/Add/add.o') is damaged: its SHA-256 is"));
    // One path from the tree and from outside, or twice with other bytes: refused.
    o.source_dir = dir / "src";
    o.files = {json};
    CHECK_THROWS_WITH(pack(o), Catch::Contains("'soc/Add/add.json' is given twice with "
                                               "different content (also in the directory)"));
    o.source_dir = dir / "empty";
    o.files = {json, packed("soc/Add/add.json", dir / "src/soc/Add/add.o")};
    CHECK_THROWS_WITH(pack(o), Catch::Contains("'soc/Add/add.json' is given twice"));
    CHECK_FALSE(fs::exists(dir / "c.run"));
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

TEST_CASE("a package named with '.o' is refused when its manifest is read, before anything else",
          "[package][roundtrip]") {
    // What skc pack now refuses, written by an older one: skinstall reads the manifest first.
    test::ScopedTempDir dir;
    std::string k = "kernel";
    auto m = test::make_manifest("my.ops", {test::file_entry("a", k)});
    auto run = test::craft_run(dir.path(), m, manifest_to_json(m), {{"a", AE_IFREG, 0644, k}});
    CHECK_THROWS_WITH(RunPackage(run).read_manifest(),
                      Catch::Contains(run + ": package name 'my.ops' has '.o' in it: every "
                                            "binPath of the package (my.ops/<soc dir>/"));
    m = test::make_manifest("my.v2", {test::file_entry("a", k)});
    run = test::craft_run(dir.path(), m, manifest_to_json(m), {{"a", AE_IFREG, 0644, k}});
    CHECK(RunPackage(run).read_manifest().name == "my.v2");
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

namespace {

// Appends to a file in the middle of its copy into the payload (after the packer has read its
// first MiB; the files before it are smaller): a writer racing the pack.
struct AppendWhilePacking : support::Progress {
    std::string victim;
    bool done = false;
    void begin(const std::string&, std::uint64_t) override {}
    void update(std::uint64_t bytes) override {
        if (done || bytes <= (1u << 20))
            return;
        test::write_text(victim, test::read_text(victim) + "more");
        done = true;
    }
    void end() override {}
};

// The tar bytes of the payload's first piece, read straight from the file: a stored zstd frame
// (magic, descriptor, 8-byte size, raw blocks) or gzip member (10-byte header, stored blocks).
std::string first_piece_tar(const std::string& run_path) {
    RunPackage run(run_path);
    std::string file = test::read_text(run_path);
    std::size_t at = run.header().payload_offset;
    auto le = [&](std::size_t pos, int n) {
        std::uint64_t v = 0;
        for (int i = n - 1; i >= 0; --i)
            v = v << 8 | static_cast<std::uint8_t>(file.at(pos + static_cast<std::size_t>(i)));
        return v;
    };
    std::string tar;
    if (run.header().compression == Compression::zstd) {
        REQUIRE(le(at, 4) == 0xFD2FB528u);
        REQUIRE(static_cast<std::uint8_t>(file.at(at + 4)) == 0xE0);
        std::size_t pos = at + 13;
        for (bool last = false; !last;) {
            auto h = le(pos, 3);
            REQUIRE(((h >> 1) & 3) == 0); // raw
            last = h & 1;
            tar += file.substr(pos + 3, h >> 3);
            pos += 3 + (h >> 3);
        }
        CHECK(tar.size() == le(at + 5, 8));
    } else {
        REQUIRE(file.substr(at, 4) == std::string("\x1f\x8b\x08\x00", 4));
        std::size_t pos = at + 10;
        for (bool last = false; !last;) {
            last = file.at(pos) & 1;
            REQUIRE((file.at(pos) & 6) == 0); // stored
            auto len = le(pos + 1, 2);
            tar += file.substr(pos + 5, len);
            pos += 5 + len;
        }
    }
    return tar;
}

} // namespace

TEST_CASE("a file written to while it is packed is refused, and nothing is left behind",
          "[package][roundtrip]") {
    test::ScopedTempDir dir;
    make_tree(dir);
    test::write_text(dir / "src/soc/Add/big.o", std::string(3u << 20, 'b'));
    AppendWhilePacking racer;
    racer.victim = dir / "src/soc/Add/big.o";
    PackOptions o{dir / "src", dir / "out/demo.run", "1", "", ""};
    o.progress = &racer;
    std::filesystem::create_directories(dir / "out");
    CHECK_THROWS_WITH(pack(o), Catch::Contains("big.o' changed while it was being packed"));
    CHECK(racer.done);
    CHECK(std::filesystem::is_empty(dir / "out"));
}

TEST_CASE("the payload's first piece is the manifest and the scripts, stored, with every file's "
          "digest",
          "[package][roundtrip]") {
    for (auto codec : {Compression::gzip, Compression::zstd}) {
        INFO(compression_name(codec));
        test::ScopedTempDir dir;
        make_tree(dir);
        PackOptions o{dir / "src", dir / "demo.run", "1", "", ""};
        o.compression = codec;
        pack(o);
        std::string tar = first_piece_tar(dir / "demo.run");
        // ustar headers: the name at offset 0, the size in octal at 124.
        std::vector<std::string> names;
        std::string manifest_text;
        for (std::size_t pos = 0; pos < tar.size();) {
            std::string name = tar.substr(pos, 100).c_str();
            auto size = std::stoull(tar.substr(pos + 124, 12), nullptr, 8);
            if (name == "manifest.json")
                manifest_text = tar.substr(pos + 512, size);
            names.push_back(name);
            pos += 512 + (size + 511) / 512 * 512;
        }
        CHECK(names == std::vector<std::string>{"manifest.json", "install.sh", "uninstall.sh",
                                                "version.info"});
        auto m = parse_manifest(manifest_text, "first piece");
        CHECK(m.find("soc/Add/add.o")->sha256 == support::sha256_hex(std::string(100000, '\x7f')));
        // The whole package still reads and checks as one stream.
        Collect sink;
        RunPackage(dir / "demo.run").read_payload(sink);
        CHECK(sink.files["soc/Add/add.json"] == "{\"kernelName\":\"add\"}\n");
    }
}

namespace {

std::string payload_of(const std::string& run_path) {
    RunPackage run(run_path);
    return test::read_text(run_path).substr(run.header().payload_offset, run.header().payload_size);
}

// `run_path` with `payload` in place of its own; the header's size and digest follow it, so only
// the decoder can object.
void replace_payload(const std::string& run_path, const std::string& payload) {
    StubHeader h = RunPackage(run_path).header();
    h.payload_size = payload.size();
    h.payload_sha256 = support::sha256_hex(payload);
    test::write_text(run_path, render_stub(h) + payload);
}

// The tar stream of a gzip payload, decoded member after member with zlib.
std::string gunzip(const std::string& in) {
    std::string out;
    std::size_t pos = 0;
    while (pos < in.size()) {
        z_stream zs{};
        REQUIRE(inflateInit2(&zs, 16 + MAX_WBITS) == Z_OK);
        zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + pos));
        zs.avail_in = static_cast<uInt>(in.size() - pos);
        std::vector<char> buf(1 << 16);
        int rc;
        do {
            zs.next_out = reinterpret_cast<Bytef*>(buf.data());
            zs.avail_out = static_cast<uInt>(buf.size());
            rc = inflate(&zs, Z_NO_FLUSH);
            REQUIRE((rc == Z_OK || rc == Z_STREAM_END));
            out.append(buf.data(), buf.size() - zs.avail_out);
        } while (rc != Z_STREAM_END);
        pos += zs.total_in;
        inflateEnd(&zs);
    }
    return out;
}

// One gzip member as zlib writes it (gzip(1) and most tools use zlib).
std::string zlib_member(const std::string& data) {
    z_stream zs{};
    REQUIRE(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    std::string out(deflateBound(&zs, static_cast<uLong>(data.size())), '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    zs.avail_in = static_cast<uInt>(data.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return out;
}

std::string libdeflate_member(const std::string& data) {
    auto m = gzip_member({reinterpret_cast<const std::uint8_t*>(data.data()), data.size()}, 6);
    return {m.begin(), m.end()};
}

} // namespace

TEST_CASE("gzip payloads other tools write read the same: one member, several, trailing bytes",
          "[package][roundtrip]") {
    test::ScopedTempDir dir;
    make_tree(dir);
    pack({dir / "src", dir / "demo.run", "1", "", ""});
    Collect want;
    RunPackage(dir / "demo.run").read_payload(want);
    std::string tar = gunzip(payload_of(dir / "demo.run"));
    std::vector<std::string> payloads = {
        zlib_member(tar),
        libdeflate_member(tar.substr(0, 1000)) + libdeflate_member(tar.substr(1000, 513)) +
            zlib_member(tar.substr(1513)),
        zlib_member(tar) + "trailing bytes, not a member\n",
        zlib_member(tar) + std::string(10240, '\0'),
    };
    for (std::size_t i = 0; i < payloads.size(); ++i) {
        INFO("payload " << i);
        replace_payload(dir / "demo.run", payloads[i]);
        RunPackage run(dir / "demo.run");
        run.verify_digests();
        Collect got;
        CHECK(run.read_payload(got).entries.size() == run.header().file_count);
        CHECK(got.files == want.files);
    }
}

TEST_CASE("a corrupt or truncated member is refused, naming the file, though the digest matches",
          "[package][roundtrip]") {
    for (auto codec : {Compression::gzip, Compression::zstd}) {
        INFO(compression_name(codec));
        test::ScopedTempDir dir;
        make_tree(dir);
        PackOptions o{dir / "src", dir / "demo.run", "1", "", ""};
        o.compression = codec;
        pack(o);
        std::string payload = payload_of(dir / "demo.run");
        std::string path = dir / "demo.run";
        std::string name = codec == Compression::gzip ? "gzip member" : "zstd frame";
        replace_payload(path, payload.substr(0, payload.size() - 5));
        CHECK_NOTHROW(RunPackage(path).verify_digests());
        CHECK_THAT(refusal(path), Catch::StartsWith(path + ": the payload ends inside the " + name +
                                                    " at payload byte ") &&
                                      Catch::EndsWith("(truncated)"));
        if (codec == Compression::gzip) { // the last member's CRC-32, which libarchive ignored
            std::string bad = payload;
            bad[bad.size() - 6] = static_cast<char>(bad[bad.size() - 6] ^ 0x40);
            replace_payload(path, bad);
            CHECK_THAT(refusal(path),
                       Catch::StartsWith(path + ": the gzip member at payload byte ") &&
                           Catch::EndsWith("is corrupt (incorrect data check)"));
        }
        // The manifest alone is still read from the intact first piece.
        CHECK(RunPackage(path).read_manifest().name == "demo");
    }
}
