// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace skforge::package {

/// The .run format this build writes and the newest it reads.
inline constexpr int k_run_format = 2;

/// How the payload is compressed.
enum class Compression { gzip, zstd };

/// "gzip" or "zstd".
std::string_view compression_name(Compression c);

/// What the stub's header declares about the package.
struct StubHeader {
    int format = k_run_format;
    std::string name;
    std::string version;
    std::string npu_arch;
    std::string soc_version;
    std::string toolchain;
    Compression compression = Compression::gzip;
    std::uint64_t file_count = 0;
    std::uint64_t unpacked_size = 0;
    std::uint64_t payload_offset = 0; ///< also the stub's size in bytes
    std::uint64_t payload_size = 0;
    std::string payload_sha256;     ///< lower-case hex
    std::uint64_t trailer_size = 0; ///< 0 when unsigned
    /// SHA-256 of the payload's install.sh and uninstall.sh: the stub refuses to run a script
    /// that differs, and readers check these against the scripts skforge renders.
    std::string install_sh_sha256;
    std::string uninstall_sh_sha256;

    /// The size a complete package file must have.
    std::uint64_t file_size() const { return payload_offset + payload_size + trailer_size; }
};

/// The stub text for `header`; its payload_offset field is set to the stub's own size.
std::string render_stub(StubHeader header);

/// The size of the stub for `header`. Numbers are padded to a fixed width, so it depends only on
/// the labels (name, version, arch, SoC, toolchain, compression), which are known before packing.
std::uint64_t stub_size(const StubHeader& header);

/// Parses the header lines at the start of `head` (the first bytes of a .run file) as text,
/// never running anything; throws an Error naming `origin` when they are malformed.
StubHeader parse_stub(std::string_view head, std::string_view origin);

/// Largest number of leading bytes parse_stub needs.
inline constexpr std::size_t k_max_header_bytes = 8192;

} // namespace skforge::package
