// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CANN stamp: the CANN release a package's kernels were built with, as its manifest and
// version.info record it (share/doc/cann-stamp.md), and the one rule every check applies to it:
// two releases are compatible when their lines (major.minor) are equal.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::package {

/// Where a stamp's release came from.
enum class StampSource {
    toolkit, ///< the CANN toolkit under $ASCEND_HOME_PATH that compiled (its version.info)
    option,  ///< --cann-version given to skc
};

/// What a package was built with. The SoC is the manifest's soc_version.
struct CannStamp {
    std::string version; ///< "9.1.0", "9.0.1", "9.2.RC1", or only a line ("9.1")
    StampSource source = StampSource::toolkit;
    std::optional<unsigned> cube_cores;   ///< the SoC's AIC count the kernels were built for
    std::optional<unsigned> vector_cores; ///< ... and AIV count

    /// The release line, major.minor ("9.1"); the version is validated, so never empty.
    std::string line() const;
};

/// The line (major.minor) of a CANN version text: "9.1.0" → "9.1", "9.2.RC1" → "9.2",
/// "8.5.0-beta.1" → "8.5", "9.1" → "9.1". nullopt for anything else (no digits, one part, a
/// part that is not a number, text longer than 64 bytes or with other characters than
/// letters, digits and '.-+').
std::optional<std::string> cann_line(std::string_view version);

/// Text name of a source ("toolkit", "option") and its inverse.
std::string_view stamp_source_name(StampSource source);
std::optional<StampSource> parse_stamp_source(std::string_view name);

/// The manifest's "cann" object: {version, line, from[, cube_core_cnt, vector_core_cnt]}.
nlohmann::json stamp_json(const CannStamp& stamp);
/// Parses it, appending one message per problem to `errors` (the field named).
CannStamp parse_stamp(const nlohmann::json& doc, std::vector<std::string>& errors);

/// The lines version.info gets for a stamp ("cann_version=…\ncann_line=…\n").
std::string stamp_version_info(const CannStamp& stamp);

/// Why a package stamped `stamp` must not be used with a toolkit of version `host` (nullopt:
/// same line, or `host` names no line). Says both releases and both lines.
std::optional<std::string> cann_mismatch(const CannStamp& stamp, std::string_view host);

} // namespace skforge::package
