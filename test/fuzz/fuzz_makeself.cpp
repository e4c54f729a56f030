// SPDX-License-Identifier: Apache-2.0
// Fuzz target: CANN's makeself packages as skinstall and `skc import` read them (header, checksums,
// the tar stream through libarchive, the package directory, the pack). An input starting with
// "#!" is a whole makeself .run; anything else is a payload (tar, plain or compressed) that the
// target puts behind a makeself 2.4.5 header recording its right SHA-256, so mutations reach
// libarchive and every per-entry check instead of stopping at the checksum.
#include "fuzz_dir.hpp"

#include "skforge/package/makeself.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/sha256.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace {

std::string wrap_payload(const std::uint8_t* data, std::size_t size) {
    skforge::support::Sha256 sha;
    sha.update(std::span<const std::uint8_t>(data, size));
    std::string head = "#!/bin/sh\n"
                       "# This script was generated using Makeself 2.4.5\n"
                       "CRCsum=\"0000000000\"\n"
                       "MD5=\"00000000000000000000000000000000\"\n"
                       "SHA=\"" +
                       skforge::support::digest_hex(sha.finish()) +
                       "\"\n"
                       "label=\"STATIC KERNEL RUN PACKAGE\"\n"
                       "script=\"./install.sh\"\n"
                       "filesizes=\"" +
                       std::to_string(size) +
                       "\"\n"
                       "skip=\"9\"\n"
                       "exit 0\n";
    return head + std::string(reinterpret_cast<const char*>(data), size);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace skforge;
    const std::string& dir = fuzz::scratch_dir();
    std::string input = dir + "/in.run";
    fuzz::put(input, size >= 2 && data[0] == '#' && data[1] == '!'
                         ? std::string(reinterpret_cast<const char*>(data), size)
                         : wrap_payload(data, size));
    try {
        (void)package::is_makeself(input);
        (void)package::read_makeself_header(input);
        package::ImportOptions o;
        o.input = input;
        o.output = dir + "/out.run";
        o.max_unpacked_bytes = 1 << 20;
        package::import_makeself(o);
    } catch (const support::Error&) {
    }
    std::error_code ec;
    std::filesystem::remove(dir + "/out.run", ec);
    return 0;
}
