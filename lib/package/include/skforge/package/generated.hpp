// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/package/manifest.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
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

/// A package's index files as packed, by path (`config/<soc dir>/binary_info_config.json`).
using IndexTexts = std::map<std::string, std::string>;

/// Starts a section of install.sh's index records: the byte, the SoC directory, a tab, the
/// SHA-256 of the index file the section was read from.
inline constexpr char k_records_section = '\034';

/// install.sh's index records (share/doc/installer.md, "Index records"): for each index file of
/// `manifest` that skinstall accepts (parse_package_index) and whose SoC directory the scripts
/// read, a section line, then one line per staticList entry, "<OpType>\t<key>\t<text>" as
/// scan_index_text reads them (OpTypes in byte order, entries in file order); lines joined by
/// "\n". The scripts merge these lines instead of reading the file with awk when the file's
/// digest is the section's. `texts` must hold those files' contents.
std::string index_records(const Manifest& manifest, const IndexTexts& texts);

/// Why install.sh's `records` are not index_records(manifest, texts) of the index files the
/// package holds, or nullopt when they are.
std::optional<std::string> index_records_problem(const Manifest& manifest, const IndexTexts& texts,
                                                 const std::string& records);

/// The index records block of an install.sh's text, or nullopt when it has none.
std::optional<std::string> records_in_install_sh(std::string_view install_sh);

/// install.sh, uninstall.sh and version.info exactly as skforge renders them for `manifest` and
/// its index `records` (index_records): from its name and labels, its entry list (paths, types,
/// modes and the packed files' digests; the scripts' own digests are never embedded, so they can
/// list themselves), the digest of the manifest with those two blanked, and the records.
/// `manifest.entries` must already list the three files.
std::vector<GeneratedFile> render_generated_files(const Manifest& manifest,
                                                  const std::string& records);

/// Every way the generated files `manifest` records (size, SHA-256, mode) differ from
/// render_generated_files(manifest, records), one message each; empty when they are
/// byte-identical. Since the payload is checked against the manifest, this is what catches edited
/// install scripts (the records themselves are checked against the index files they come from
/// where those are read: skinstall's stage, skc inspect --verify).
std::vector<std::string> check_generated_files(const Manifest& manifest,
                                               const std::string& records);

} // namespace skforge::package
