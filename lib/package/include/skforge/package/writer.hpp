// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/package/cann_stamp.hpp"
#include "skforge/package/path_rules.hpp"
#include "skforge/package/stub.hpp"
#include "skforge/support/progress.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace skforge::package {

/// An entry packed from outside the source directory: a directory (`source` empty), or a file
/// whose `size` bytes are read from `source` at `offset` (opened without following a symbolic
/// link) and must have `sha256`, else pack refuses, naming `source`.
struct PackedFile {
    std::string path; ///< in the package
    EntryType type = EntryType::file;
    mode_t mode = 0644; ///< 0644 or 0755
    std::uint64_t size = 0;
    std::string sha256;
    std::string source;
    std::uint64_t offset = 0; ///< where its bytes start in `source` (several may share one)
};

/// What `pack` needs; the package name is `name`, else the output file's stem.
struct PackOptions {
    std::string source_dir;
    std::string output; ///< must end in ".run"
    std::string version;
    std::string npu_arch;
    std::string soc_version;
    Compression compression = Compression::gzip;
    int level = 0;                       ///< 0: the compressor's default (gzip 6, zstd 3)
    std::optional<std::string> sign_key; ///< Ed25519 private key (PEM)
    std::int64_t mtime = 0;              ///< every entry's mtime (SOURCE_DATE_EPOCH)
    std::string inputs_digest;           ///< empty: digest of the packed tree and labels
    support::Progress* progress = nullptr;
    std::string name; ///< the package name; empty: the output's stem (last, so positional
                      ///< initialisers of the fields above keep working)
    std::optional<CannStamp> cann; ///< the CANN release the kernels were built with
    /// Entries added to the source directory's (a path both hold is refused); a file's
    /// missing parent directories are added (0755). The stored kernels of a partial hit are
    /// streamed from the op store this way, without a copy into a tree.
    std::vector<PackedFile> files;
};

/// What `pack` wrote.
struct PackResult {
    StubHeader header;
    std::optional<std::string> key_id; ///< set when signed
};

/// The toolchain string written into packages ("skforge <version>").
std::string toolchain_string();

/// The package name a .run path gives (its stem), or throws when it does not end in ".run" or the
/// stem is not a valid name.
std::string package_name_from_path(const std::string& run_path);

/// Packs `options.source_dir` into a .run file, written whole or not at all. Refuses, with every
/// path and reason, any entry the installer would refuse.
PackResult pack(const PackOptions& options);

} // namespace skforge::package
