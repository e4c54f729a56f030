// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/package/cann_stamp.hpp"
#include "skforge/package/stub.hpp"
#include "skforge/support/progress.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace skforge::package {

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
