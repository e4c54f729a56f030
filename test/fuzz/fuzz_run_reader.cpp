// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the .run reader. An input starting with "#!" is a whole .run file (the header
// parser, layout and digest checks); anything else is an uncompressed tar payload that the target
// wraps in a valid stub with the right digest, so mutations reach libarchive, the manifest parser
// and every per-entry check instead of stopping at the payload digest.
#include "skforge/package/compress.hpp"
#include "skforge/package/reader.hpp"
#include "skforge/package/stub.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/sha256.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

struct NullSink final : skforge::package::EntrySink {
    void begin(const skforge::package::ManifestEntry&) override {}
    void data(std::span<const std::uint8_t>) override {}
    void end(const skforge::package::ManifestEntry&) override {}
};

std::string wrap_payload(const std::uint8_t* data, std::size_t size) {
    using namespace skforge;
    std::vector<std::uint8_t> gz = package::gzip_member({data, size}, 1);
    package::StubHeader h;
    h.name = "fuzz";
    h.version = "1";
    h.toolchain = "fuzz";
    h.payload_size = gz.size();
    support::Sha256 sha;
    sha.update(gz);
    h.payload_sha256 = support::digest_hex(sha.finish());
    return package::render_stub(h) + std::string(gz.begin(), gz.end());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace skforge;
    static const std::string path = "/tmp/skforge-fuzz-" + std::to_string(::getpid()) + ".run";
    std::string bytes = size >= 2 && data[0] == '#' && data[1] == '!'
                            ? std::string(reinterpret_cast<const char*>(data), size)
                            : wrap_payload(data, size);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    try {
        package::RunPackage run(path);
        package::ReadLimits limits;
        limits.max_unpacked_bytes = 1 << 20;
        limits.max_entries = 1000;
        auto m = run.read_manifest(limits);
        try {
            run.check_scripts(m);
        } catch (const support::Error&) {
        }
        NullSink sink;
        run.read_payload(sink, limits);
    } catch (const support::Error&) {
    }
    std::remove(path.c_str());
    return 0;
}
