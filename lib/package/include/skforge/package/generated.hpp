// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/package/manifest.hpp"

#include <string>
#include <sys/types.h>
#include <vector>

namespace skforge::package {

/// A file every package carries that skforge renders instead of packing.
struct GeneratedFile {
    std::string path;
    std::string text;
    mode_t mode;
};

/// The paths of the generated files; a source tree may not hold them.
inline constexpr const char* k_generated_paths[] = {"install.sh", "uninstall.sh", "version.info"};

/// install.sh, uninstall.sh and version.info exactly as skforge renders them for `manifest`: from
/// its name and labels and its entry list (paths, types, modes and the packed files' digests; the
/// scripts' own digests are never embedded, so they can list themselves). `manifest.entries` must
/// already list the three files.
std::vector<GeneratedFile> render_generated_files(const Manifest& manifest);

/// Every way the generated files `manifest` records (size, SHA-256, mode) differ from
/// render_generated_files(manifest), one message each; empty when they are byte-identical. Since
/// the payload is checked against the manifest, this is what catches edited install scripts.
std::vector<std::string> check_generated_files(const Manifest& manifest);

} // namespace skforge::package
