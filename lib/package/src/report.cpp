// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/report.hpp"

#include "skforge/package/generated.hpp"
#include "skforge/package/index_rules.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/format.hpp"
#include "skforge/support/json.hpp"

#include <span>

namespace skforge::package::report {

using nlohmann::json;
using support::Error;
using support::field_num;
using support::field_str;

namespace {

// What a package's header says of it, as pack's result and inspect's document both show it.
json header_json(const StubHeader& h) {
    return {{"name", h.name},
            {"version", h.version},
            {"npu_arch", h.npu_arch},
            {"soc_version", h.soc_version},
            {"compression", compression_name(h.compression)},
            {"file_count", h.file_count},
            {"unpacked_size", h.unpacked_size},
            {"payload_size", h.payload_size},
            {"payload_sha256", h.payload_sha256}};
}

json key_id_or_null(const PackResult& r) {
    return r.key_id ? json(*r.key_id) : json();
}

// The checks of `skc inspect --verify`, each "ok" or why it failed, into doc["verification"];
// doc["ok"] becomes false when one fails.
void verify_into(const RunPackage& run, const std::vector<Key>& trusted, json& doc) {
    auto& v = doc["verification"];
    auto attempt = [&](const char* key, auto&& fn) {
        try {
            fn();
            v[key] = "ok";
        } catch (const Error& e) {
            v[key] = e.what();
            doc["ok"] = false;
        }
    };
    // A stub that differs from the one skforge renders for this header would run other code
    // than the package claims; nothing else may explain a difference.
    attempt("stub", [&] {
        if (!run.stub_is_canonical())
            throw Error("modified: it differs from the stub skforge writes for this header");
    });
    support::Digest prefix{};
    bool digests = false;
    attempt("payload_digest", [&] {
        prefix = run.verify_digests();
        digests = true;
    });
    // The index files are kept as they go by: install.sh's index records must be theirs.
    IndexCapture sink;
    bool entries = false;
    attempt("entries", [&] {
        run.read_payload(sink);
        entries = true;
    });
    attempt("scripts", [&] {
        auto manifest = run.read_manifest();
        auto records = run.check_scripts(manifest);
        if (!entries)
            return; // the index files were not all read: the entries' failure says why
        if (auto why = index_records_problem(manifest, sink.texts(), records))
            throw Error(*why);
    });
    if (!digests) {
        v["signature"] = "not checked (payload digest failed)";
        return;
    }
    auto state = run.check_signature(prefix, trusted);
    v["signature"] = std::string(signature_state_name(state));
    if (auto why = signature_refusal(state, !trusted.empty(), false)) {
        v["signature_policy"] = *why;
        doc["ok"] = false;
    }
}

json files(const Manifest& m) {
    json out = json::array();
    for (const auto& e : m.entries)
        out.push_back(manifest_entry_json(e));
    return out;
}

// "f 0644         1234 <sha256> path" (a directory: "d", "-" for the size and the digest).
std::string file_line(const json& f) {
    return support::format("%s %s %12s %s %s", field_str(f, "type") == "file" ? "f" : "d",
                           field_str(f, "mode").c_str(),
                           f.contains("size") ? std::to_string(field_num(f, "size")).c_str() : "-",
                           f.contains("sha256") ? field_str(f, "sha256").c_str()
                                                : std::string(64, '-').c_str(),
                           field_str(f, "path").c_str());
}

} // namespace

json pack_result(const std::string& run, const PackResult& r) {
    json out = header_json(r.header);
    out["run"] = run;
    out["signer_key_id"] = key_id_or_null(r);
    return out;
}

Lines pack_text(const json& r) {
    Lines out = {
        support::format("packed %s %s into %s: %llu entries, %llu bytes unpacked, %llu bytes %s "
                        "payload",
                        field_str(r, "name").c_str(), field_str(r, "version").c_str(),
                        field_str(r, "run").c_str(),
                        static_cast<unsigned long long>(field_num(r, "file_count")),
                        static_cast<unsigned long long>(field_num(r, "unpacked_size")),
                        static_cast<unsigned long long>(field_num(r, "payload_size")),
                        field_str(r, "compression").c_str()),
        "payload sha256 " + field_str(r, "payload_sha256")};
    if (!r.at("signer_key_id").is_null())
        out.push_back("signed by key " + field_str(r, "signer_key_id"));
    return out;
}

json import_result(const std::string& from, const std::string& run, const PackResult& r) {
    return {{"run", run},
            {"from", from},
            {"name", r.header.name},
            {"version", r.header.version},
            {"file_count", r.header.file_count},
            {"payload_sha256", r.header.payload_sha256},
            {"signer_key_id", key_id_or_null(r)}};
}

Lines import_text(const json& r) {
    return {"imported " + field_str(r, "name") + " " + field_str(r, "version") + " from " +
            field_str(r, "from") + " into " + field_str(r, "run") + ": " +
            std::to_string(field_num(r, "file_count")) + " entries" +
            (r.at("signer_key_id").is_null() ? ""
                                             : ", signed by key " + field_str(r, "signer_key_id"))};
}

json inspect(const RunPackage& run, const InspectOptions& o) {
    const auto& h = run.header();
    json doc = header_json(h);
    doc.update({{"path", run.path()},
                {"format", h.format},
                {"toolchain", h.toolchain},
                {"file_size", run.actual_size()},
                {"payload_offset", h.payload_offset},
                {"stub_canonical", run.stub_is_canonical()},
                {"signer_key_id", nullptr},
                {"ok", true}});
    try {
        if (auto t = run.trailer())
            doc["signer_key_id"] = t->key_id;
        auto m = run.read_manifest();
        doc["inputs_digest"] = m.inputs_digest;
        // The CANN release the kernels were built with (the release, or only its line when
        // that is all skc was told); null for a package that records none.
        doc["cann_version"] = m.cann ? json(m.cann->version) : json(nullptr);
        doc["cann"] = m.cann ? stamp_json(*m.cann) : json(nullptr);
        if (o.list)
            doc["files"] = files(m);
    } catch (const Error& e) {
        if (!o.verify)
            throw;
        doc["error"] = e.what();
        doc["ok"] = false;
    }
    if (o.verify)
        verify_into(run, o.trusted, doc);
    return doc;
}

std::string cann_text(const json& stamp) {
    if (stamp.is_null())
        return "not recorded (the package names no CANN release; installed without a check)";
    std::string t = field_str(stamp, "version") + " (line " + field_str(stamp, "line") + ", from " +
                    (stamp["from"] == "toolkit" ? "the toolkit that compiled" : "--cann-version") +
                    ")";
    if (stamp.contains("cube_core_cnt") && stamp.contains("vector_core_cnt"))
        t += ", " + support::dump_json(stamp["cube_core_cnt"]) + " cube and " +
             support::dump_json(stamp["vector_core_cnt"]) + " vector cores";
    return t;
}

Lines inspect_text(const json& d) {
    Lines out;
    auto line = [&](const std::string& label, const json& value) {
        out.push_back(support::format("%-16s %s", label.c_str(),
                                      value.is_string() ? value.get<std::string>().c_str()
                                                        : support::dump_json(value).c_str()));
    };
    line("Package:", d.at("path"));
    line("Name:", d.at("name"));
    line("Version:", d.at("version"));
    line("NPU arch:", d.at("npu_arch"));
    line("SoC version:", d.at("soc_version"));
    line("Toolchain:", d.at("toolchain"));
    line("Compression:", d.at("compression"));
    line("Files:", d.at("file_count"));
    line("Unpacked size:", d.at("unpacked_size"));
    line("File size:", d.at("file_size"));
    line("Payload:", std::to_string(field_num(d, "payload_size")) + " bytes at offset " +
                         std::to_string(field_num(d, "payload_offset")));
    line("Payload SHA-256:", d.at("payload_sha256"));
    if (d.contains("inputs_digest"))
        line("Inputs digest:", d.at("inputs_digest"));
    if (d.contains("cann"))
        line("CANN:", cann_text(d.at("cann")));
    line("Signer key id:",
         d.at("signer_key_id").is_null() ? json("(unsigned)") : d.at("signer_key_id"));
    line("Stub:",
         d.at("stub_canonical").get<bool>() ? "canonical" : "MODIFIED (differs from skforge's)");
    if (d.contains("verification"))
        for (const auto& [k, val] : d.at("verification").items())
            line("Verify " + k + ":", val);
    if (d.contains("files"))
        for (const auto& f : d.at("files"))
            out.push_back(file_line(f));
    return out;
}

Lines keygen_text(const std::string& name, const Key& key) {
    return {"wrote " + name + ".pem (private, keep it secret) and " + name + ".pub.pem",
            "key id " + key.key_id()};
}

} // namespace skforge::package::report
