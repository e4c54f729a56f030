// SPDX-License-Identifier: Apache-2.0
#pragma once

// What skc's package commands show: each result as the JSON value `--json` prints and as the
// text lines printed without it (raw: the caller decides where and how safely they are printed).
// The app keeps only options, the command table and exit codes.
#include "skforge/package/reader.hpp"
#include "skforge/package/signature.hpp"
#include "skforge/package/writer.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace skforge::package::report {

using Lines = std::vector<std::string>;

/// `skc pack`'s result for the .run written at `run`: {run, name, version, npu_arch,
/// soc_version, compression, file_count, unpacked_size, payload_size, payload_sha256,
/// signer_key_id (null: unsigned)}.
nlohmann::json pack_result(const std::string& run, const PackResult& r);

/// "packed NAME VERSION into RUN: ...", "payload sha256 ..." and, when signed, "signed by key ID".
Lines pack_text(const nlohmann::json& result);

/// `skc import`'s result: {run, from, name, version, file_count, payload_sha256, signer_key_id}.
nlohmann::json import_result(const std::string& from, const std::string& run, const PackResult& r);

/// "imported NAME VERSION from FROM into RUN: N entries[, signed by key ID]".
Lines import_text(const nlohmann::json& result);

/// What `skc inspect` reads and checks.
struct InspectOptions {
    bool list = false;        ///< every manifest entry under "files"
    bool verify = false;      ///< every check under "verification"
    std::vector<Key> trusted; ///< keys a signature must be by (inspect-json.md's policy)
};

/// `skc inspect`'s document (share/doc/inspect-json.md): the header, the signer, the manifest's
/// inputs digest, the files, the checks and "ok" (false when a check failed). A manifest that
/// cannot be read throws, unless verifying: then it is the document's "error".
nlohmann::json inspect(const RunPackage& run, const InspectOptions& options);

/// A manifest's "cann" stamp (or null) as one line of text: release, line, where it came from,
/// the core counts.
std::string cann_text(const nlohmann::json& stamp);

/// The document as "Label:          value" lines, then one line per file:
/// "f|d MODE SIZE SHA256 PATH".
Lines inspect_text(const nlohmann::json& doc);

/// What `skc keygen -o NAME` says of the key pair it wrote.
Lines keygen_text(const std::string& name, const Key& key);

} // namespace skforge::package::report
