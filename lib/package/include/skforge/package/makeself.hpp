// SPDX-License-Identifier: Apache-2.0
#pragma once

// CANN's own static-kernel packages are makeself archives (`static_kernel_<datetime>_<pid>.run`,
// "Uncompressing STATIC KERNEL RUN PACKAGE"). They are read here as data: the header's variables
// as text, the payload's checksums, the tar stream with libarchive. Nothing in them is executed.
// Format notes and what is unverified: share/doc/run-format.md, "CANN's makeself packages".
#include "skforge/package/writer.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace skforge::package {

/// What a makeself (2.4 or later) header says of its one archive.
struct MakeselfHeader {
    std::string version;      ///< "2.4.5", from "generated using Makeself <version>"
    std::string label;        ///< label="..."
    std::string script;       ///< script="..." (never run)
    std::uint64_t offset = 0; ///< the payload's first byte: the bytes of the first skip lines
    std::uint64_t size = 0;   ///< filesizes="..."
    std::string sha256;       ///< SHA="..." (empty when not recorded)
    std::string md5;          ///< MD5="..." (empty when not recorded)
    std::optional<std::uint32_t> crc; ///< CRCsum="..." (POSIX cksum), when recorded
};

/// True when `path` is a regular file that starts like a makeself archive.
bool is_makeself(const std::string& path);

/// Parses the header of makeself archive `path`; throws an Error naming the file and the reason
/// when it is not one skforge reads (older than 2.4, several archives, encrypted, a size that
/// does not match the file).
MakeselfHeader read_makeself_header(const std::string& path);

/// What `skc import` and skinstall make of a makeself package.
struct ImportOptions {
    std::string input;   ///< the makeself .run
    std::string output;  ///< the skforge .run to write
    std::string version; ///< empty: the <datetime> of a static_kernel_<datetime>_<pid> name
    std::optional<std::string> sign_key;
    Compression compression = Compression::gzip;
    std::int64_t mtime = 0;
    std::uint64_t max_unpacked_bytes = 64ull << 30; ///< the entries' apparent sizes, summed
    std::optional<CannStamp> cann; ///< the CANN release the vendor's kernels were built with
};

/// Checks the archive's checksums (every one it records; one at least), extracts it with
/// libarchive into a private directory (regular files and directories only, each path checked),
/// finds the package directory of CANN's layout (`<name>/config/<soc>/binary_info_config.json`)
/// and packs it, without the vendor's scripts, as a skforge package. Throws an Error naming the
/// input and the reason.
PackResult import_makeself(const ImportOptions& options);

} // namespace skforge::package
