// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/package/cann_stamp.hpp"
#include "skforge/package/path_rules.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::package {

/// The manifest format this build writes and the newest it reads.
inline constexpr int k_manifest_format = 1;
/// The manifest's path: the first entry of every payload.
inline constexpr std::string_view k_manifest_path = "manifest.json";

/// One file or directory of a package.
struct ManifestEntry {
    std::string path; ///< relative, validated by check_entry_path
    EntryType type = EntryType::file;
    mode_t mode = 0644; ///< 0644 or 0755
    std::uint64_t size = 0;
    std::string sha256; ///< lower-case hex; empty for directories
};

/// What a package is and every file it holds (except the manifest itself).
struct Manifest {
    int format = k_manifest_format;
    std::string name;
    std::string version;
    std::string npu_arch;
    std::string soc_version;
    std::string toolchain;
    std::string inputs_digest;          ///< SHA-256 of the build inputs
    std::optional<CannStamp> cann;      ///< the CANN release built with (absent: not recorded)
    std::vector<ManifestEntry> entries; ///< sorted by path, parents before children

    /// Sum of the sizes of all files.
    std::uint64_t unpacked_size() const;
    /// The entry at `path`, or nullptr.
    const ManifestEntry* find(std::string_view path) const;
};

/// Every rule a manifest must satisfy, as one message per violation (empty when valid):
/// name, labels, paths, types, modes, digests, unique sorted paths, parents listed as directories.
std::vector<std::string> validate_manifest(const Manifest& manifest);

/// Canonical JSON text of `manifest` (sorted keys, two-space indent, trailing newline).
std::string manifest_to_json(const Manifest& manifest);

/// One entry as the manifest's JSON lists it: {path, type, mode; size and sha256 of a file}.
nlohmann::json manifest_entry_json(const ManifestEntry& entry);

/// Parses and validates manifest JSON (no key written twice in one object or with a backslash
/// escape: check_json_keys); throws an Error listing every problem, with `origin` (the file it
/// came from) at the head of the message.
Manifest parse_manifest(std::string_view json_text, std::string_view origin);

/// Text name of an entry type ("file", "directory").
std::string_view entry_type_name(EntryType type);

} // namespace skforge::package
