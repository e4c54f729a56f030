// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/report.hpp"

#include "skforge/install/history.hpp"
#include "skforge/install/holders.hpp"
#include "skforge/package/path_rules.hpp"
#include "skforge/package/report.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/format.hpp"
#include "skforge/support/json.hpp"
#include "skforge/support/printable.hpp"

#include <map>

namespace skforge::install::report {

using nlohmann::json;

namespace {

using support::field_num;
using support::field_str;
using support::format;

// "a, b, c" from the packages before the last (the winner) of `providers`.
std::string hidden_list(const json& providers, const char* field) {
    std::string out;
    for (std::size_t i = 0; i + 1 < providers.size(); ++i)
        out += (out.empty() ? "" : ", ") + (field ? providers[i].at(field).get<std::string>()
                                                  : providers[i].get<std::string>());
    return out;
}

std::vector<KeyUse> all_key_uses(const InstallTree& tree, std::vector<std::string>& skipped) {
    return key_uses(installed_indexes(tree, tree.install_order(), skipped));
}

json damaged(const std::string& name, const std::string& why) {
    return {{"name", name}, {"status", "damaged"}, {"problem", why}, {"fix", repair_hint(name)}};
}

std::string format_time(std::int64_t t) {
    return t == 0 ? "unknown" : utc_time(t);
}

} // namespace

json install_result(const InstallResult& r) {
    return {{"name", r.name},
            {"version", r.version},
            {"old_version", r.old_version},
            {"action", outcome_name(r.outcome)},
            {"changed", r.changed()}};
}

json uninstall_result(const UninstallResult& r) {
    return {{"name", r.name},
            {"version", r.version},
            {"old_version", r.version},
            {"action", r.action},
            {"changed", true}};
}

json shadows(const InstallTree& tree, const std::set<std::string>& winners) {
    json out = json::array();
    // From the per-key record when it describes the tree: no package is read.
    for (const auto& u : shadows_by(tree, winners)) {
        json hidden = json::array();
        for (std::size_t i = 0; i + 1 < u.providers.size(); ++i)
            hidden.push_back(u.providers[i].first);
        out.push_back({{"soc", u.soc},
                       {"op", u.op},
                       {"key", u.key},
                       {"winner", u.winner()},
                       {"hidden", hidden}});
    }
    return out;
}

Lines shadow_lines(const json& shadows) {
    Lines out;
    for (const auto& s : shadows) {
        json providers = s.at("hidden");
        providers.push_back(s.at("winner"));
        out.push_back(field_str(s, "winner") + "'s kernel for " + field_str(s, "key") + " (" +
                      field_str(s, "op") + " on " + field_str(s, "soc") + ") hides the one from " +
                      hidden_list(providers, nullptr));
    }
    return out;
}

void attach_shadows(json& results, const json& shadows) {
    for (auto& r : results)
        r["shadows"] = json::array();
    for (const auto& s : shadows)
        for (auto& r : results)
            if (r["name"] == s["winner"])
                r["shadows"].push_back(s);
}

Lines dry_run_lines(json& results) {
    static const std::map<std::string, std::string> k_verb = {
        {"installed", "install"},     {"upgraded", "upgrade"},      {"downgraded", "downgrade"},
        {"reinstalled", "reinstall"}, {"uninstalled", "uninstall"}, {"removed", "remove"}};
    Lines out;
    for (auto& r : results) {
        r["dry_run"] = true;
        auto verb = k_verb.find(field_str(r, "action"));
        out.push_back("would " + (verb == k_verb.end() ? "leave" : verb->second) + " " +
                      field_str(r, "name") + " " + field_str(r, "version") +
                      (verb == k_verb.end() ? " as it is (already installed)" : ""));
    }
    return out;
}

namespace {

// "persistent" and "holders" of a package, as list and info show them.
json holds(const HoldRecords& records, const std::string& name) {
    auto record = hold_of(records, name);
    json holders = json::array();
    if (record)
        for (const auto& h : record->holders)
            holders.push_back(
                {{"pid", h.pid}, {"start_time", h.start}, {"alive", holder_alive(h)}});
    return {{"persistent", !record || record->persistent}, {"holders", holders}};
}

std::string holds_text(const json& p) {
    std::string out = p.value("persistent", true) ? "persistent" : "held";
    std::string sep = p.value("persistent", true) ? "; held by " : " by ";
    for (const auto& h : p.at("holders")) {
        out += sep + "pid " + std::to_string(h.at("pid").get<long>()) + " (started " +
               std::to_string(h.at("start_time").get<std::uint64_t>()) +
               (h.at("alive").get<bool>() ? ", alive)" : ", gone)");
        sep = ", ";
    }
    return out;
}

} // namespace

json packages(const InstallTree& tree) {
    json out = json::array();
    auto records = read_holds(tree);
    for (const auto& name : tree.install_order()) {
        auto pd = classify_package_dir(tree, name, true);
        std::string path = tree.shown() + "/" + name;
        if (pd.state == DirState::vendor) {
            out.push_back(
                {{"name", name}, {"status", "vendor"}, {"problem", pd.why}, {"path", path}});
            out.back().update(holds(records, name));
            continue;
        }
        if (pd.state != DirState::installed) {
            out.push_back(
                damaged(name, pd.state == DirState::absent ? "its directory is missing" : pd.why));
            continue;
        }
        const auto& m = *pd.manifest;
        out.push_back({{"name", name},
                       {"status", "installed"},
                       {"version", m.version},
                       {"npu_arch", m.npu_arch},
                       {"soc_version", m.soc_version},
                       {"cann_version", m.cann ? json(m.cann->version) : json(nullptr)},
                       {"files", m.entries.size()},
                       {"bytes", m.unpacked_size()},
                       {"path", path}});
        out.back().update(holds(records, name));
    }
    return out;
}

Lines packages_text(const json& packages) {
    if (packages.empty())
        return {"no static-kernel packages installed"};
    Lines out;
    for (const auto& p : packages) {
        std::string name = field_str(p, "name");
        if (p["status"] == "vendor") {
            out.push_back(
                format("%-32s CANN's own package (not installed by skforge; kept as it is)",
                       name.c_str()));
        } else if (p["status"] == "damaged") {
            out.push_back(
                format("%-32s DAMAGED: %s", name.c_str(), field_str(p, "problem").c_str()));
            out.push_back(format("%-32s   %s", "", field_str(p, "fix").c_str()));
        } else {
            out.push_back(format("%-32s %-16s %-10s %-16s %6zu files %12llu bytes", name.c_str(),
                                 field_str(p, "version").c_str(), field_str(p, "npu_arch").c_str(),
                                 field_str(p, "soc_version").c_str(), p["files"].get<std::size_t>(),
                                 static_cast<unsigned long long>(p["bytes"].get<std::uint64_t>())));
            // An operator's install says nothing more; a held package says who holds it.
            if (!p.value("persistent", true) || !p.at("holders").empty())
                out.push_back(format("%-32s   %s", "", holds_text(p).c_str()));
        }
    }
    return out;
}

json conflicts(const InstallTree& tree, std::vector<std::string>& skipped) {
    json out = json::array();
    for (const auto& u : shadowed_keys(all_key_uses(tree, skipped))) {
        json hidden = json::array();
        for (std::size_t i = 0; i + 1 < u.providers.size(); ++i)
            hidden.push_back(
                {{"package", u.providers[i].first}, {"binPath", u.providers[i].second}});
        out.push_back({{"soc", u.soc},
                       {"op", u.op},
                       {"key", u.key},
                       {"winner", u.winner()},
                       {"binPath", u.providers.back().second},
                       {"hidden", hidden}});
    }
    return out;
}

Lines conflicts_text(const json& conflicts) {
    if (conflicts.empty())
        return {"no kernel of one package hides another's"};
    Lines out;
    for (const auto& c : conflicts) {
        json providers = c.at("hidden");
        providers.push_back({{"package", c.at("winner")}});
        out.push_back(field_str(c, "soc") + " " + field_str(c, "op") + " " + field_str(c, "key") +
                      ": " + field_str(c, "winner") + " wins, hiding " +
                      hidden_list(providers, "package"));
    }
    return out;
}

Verified verify_package(const InstallTree& tree, const std::string& n, bool listed,
                        support::Progress* progress) {
    auto pd = classify_package_dir(tree, n, listed);
    if (pd.state == DirState::absent)
        throw support::Error(n + " is not installed in '" + tree.shown() + "'");
    Verified v;
    if (pd.state == DirState::vendor) {
        // Nothing of skforge's to check it against; its index entries are in the global index,
        // which the tree check covers.
        v.lines.push_back(n + ": not checked: " + pd.why);
        v.result = {{"name", n},
                    {"version", ""},
                    {"files", 0},
                    {"ok", true},
                    {"vendor", true},
                    {"detail", pd.why},
                    {"problems", json::array()}};
        return v;
    }
    if (pd.state != DirState::installed) {
        std::string detail = pd.why + "; " + repair_hint(n);
        v.lines.push_back(n + ": damaged: " + detail);
        v.problems = 1;
        v.result = {{"name", n},
                    {"version", ""},
                    {"files", 0},
                    {"ok", false},
                    {"problems",
                     json::array({{{"path", ""}, {"problem", "damaged"}, {"detail", detail}}})}};
        return v;
    }
    auto r = check_installed(tree, n, progress);
    json pj = json::array();
    for (const auto& p : r.problems) {
        std::string kind(problem_name(p.kind));
        pj.push_back({{"path", p.path}, {"problem", kind}, {"detail", p.detail}});
        v.lines.push_back(n + ": " + p.path + ": " + kind + (p.detail.empty() ? "" : ": ") +
                          p.detail);
    }
    v.problems = r.problems.size();
    v.files = r.manifest.entries.size();
    v.result = {{"name", n},
                {"version", r.manifest.version},
                {"files", r.manifest.entries.size()},
                {"ok", r.problems.empty()},
                {"problems", pj}};
    return v;
}

Verified verify_tree(const InstallTree& tree) {
    Verified v;
    auto extra = check_tree(tree);
    json tj = json::array();
    for (const auto& p : extra) {
        tj.push_back({{"path", p.path}, {"problem", "unexpected"}, {"detail", p.detail}});
        v.lines.push_back("tree: " + p.path + ": unexpected: " + p.detail);
    }
    v.problems = extra.size();
    if (!extra.empty())
        v.result = {{"name", ""}, {"tree", true}, {"ok", false}, {"problems", tj}};
    return v;
}

std::string verify_summary(std::size_t packages, std::size_t files, std::size_t problems) {
    return format("verified %zu package(s), %zu entries: %zu problem(s)", packages, files,
                  problems);
}

json files(const InstallTree& tree, const std::string& name, const package::Manifest& m) {
    std::string root = tree.shown() + "/" + name;
    json list = json::array();
    for (const auto& e : m.entries)
        list.push_back({{"path", root + "/" + e.path},
                        {"type", package::entry_type_name(e.type)},
                        {"mode", package::format_mode(e.mode)},
                        {"size", e.size},
                        {"sha256", e.sha256}});
    return {{"name", name}, {"version", m.version}, {"path", root}, {"files", list}};
}

Lines files_text(const json& files) {
    Lines out = {field_str(files, "path")};
    for (const auto& f : files.at("files"))
        out.push_back(field_str(f, "path"));
    out.push_back(field_str(files, "path") + "/" + std::string(package::k_manifest_path));
    return out;
}

json info(const InstallTree& tree, const std::string& name, const package::Manifest& m) {
    auto dir = open_dir_beneath(tree.ai_core(), name);
    auto rec = dir ? read_install_record(*dir) : InstallRecord{};
    std::vector<std::string> skipped;
    json kernels = json::array();
    for (const auto& u : all_key_uses(tree, skipped))
        for (const auto& [p, bin] : u.providers)
            if (p == name)
                kernels.push_back({{"soc", u.soc},
                                   {"op", u.op},
                                   {"key", u.key},
                                   {"binPath", bin},
                                   {"winner", u.winner()}});
    json out = {{"name", name},
                {"version", m.version},
                {"npu_arch", m.npu_arch},
                {"soc_version", m.soc_version},
                {"cann", m.cann ? package::stamp_json(*m.cann) : json(nullptr)},
                {"toolchain", m.toolchain},
                {"signature", rec.signature},
                {"signer_key_id", rec.signer_key_id},
                {"installed_at", format_time(rec.installed_at)},
                {"installed_by", rec.installed_by},
                {"installed_from", rec.from},
                {"bytes", m.unpacked_size()},
                {"files", m.entries.size()},
                {"path", tree.shown() + "/" + name},
                {"kernels", kernels}};
    out.update(holds(read_holds(tree), name));
    return out;
}

Lines info_text(const json& i) {
    auto or_unknown = [&](const char* k) {
        return field_str(i, k).empty() ? std::string("unknown") : field_str(i, k);
    };
    const json& kernels = i.at("kernels");
    Lines out = {
        "Name:           " + field_str(i, "name"),
        "Version:        " + field_str(i, "version"),
        "NPU arch:       " + field_str(i, "npu_arch"),
        "SoC:            " + field_str(i, "soc_version"),
        "CANN:           " + package::report::cann_text(i.at("cann")),
        "Toolchain:      " + field_str(i, "toolchain"),
        "Signature:      " + or_unknown("signature"),
        "Signer key id:  " +
            (field_str(i, "signer_key_id").empty() ? "none" : field_str(i, "signer_key_id")),
        "Installed at:   " + field_str(i, "installed_at"),
        "Installed by:   " + or_unknown("installed_by"),
        "Installed from: " + or_unknown("installed_from"),
        "Size:           " + std::to_string(i.at("bytes").get<std::uint64_t>()) + " bytes",
        "Files:          " + std::to_string(i.at("files").get<std::size_t>()),
        "Path:           " + field_str(i, "path"),
        "Lifecycle:      " + holds_text(i),
        "Kernels:        " + std::to_string(kernels.size()),
    };
    for (const auto& k : kernels) {
        std::string who =
            k["winner"] == i["name"] ? "loaded" : "hidden by " + field_str(k, "winner");
        out.push_back("  " + field_str(k, "soc") + " " + field_str(k, "op") + " " +
                      field_str(k, "key") + ": " + field_str(k, "binPath") + " (" + who + ")");
    }
    return out;
}

json key_use(const KeyUse& u) {
    json providers = json::array();
    for (const auto& [p, bin] : u.providers)
        providers.push_back({{"package", p}, {"binPath", bin}});
    return {{"soc", u.soc},
            {"op", u.op},
            {"key", u.key},
            {"winner", u.winner()},
            {"providers", providers}};
}

Lines key_uses_text(const json& kernels) {
    Lines out;
    for (const auto& k : kernels) {
        const json& ps = k.at("providers");
        std::string hidden = hidden_list(ps, "package");
        out.push_back("  " + field_str(k, "soc") + " " + field_str(k, "op") + " " +
                      field_str(k, "key") + ": " + field_str(k, "winner") + " wins (" +
                      field_str(ps.back(), "binPath") + ")" +
                      (hidden.empty() ? "" : "; hides " + hidden));
    }
    return out;
}

std::string history_text(const json& l) {
    auto s = [&](const char* k) {
        return l.contains(k) && l[k].is_string() ? support::printable(l[k].get<std::string>())
                                                 : std::string();
    };
    std::string versions = s("old_version").empty() ? s("new_version")
                           : s("new_version").empty()
                               ? s("old_version")
                               : s("old_version") + " -> " + s("new_version");
    return s("time") + " " + s("user") + " " + s("action") + " " +
           (s("package").empty() ? "-" : s("package")) + " " + (versions.empty() ? "-" : versions) +
           " " + s("result") + (s("detail").empty() ? "" : ": " + s("detail")) + "  [" +
           s("command") + "]";
}

namespace {

json fix_items(const std::vector<FixItem>& items, bool left) {
    json out = json::array();
    for (const auto& i : items) {
        json j = {
            {"package", i.package}, {"path", i.path}, {"problem", i.problem}, {"detail", i.detail}};
        if (left)
            j["fix"] = i.fix;
        out.push_back(std::move(j));
    }
    return out;
}

// "<package>: <path>" or "tree: <path>", as verify names what it reports.
std::string fix_where(const FixItem& i) {
    std::string who = i.package.empty() ? "tree" : i.package;
    return i.path.empty() ? who : who + ": " + i.path;
}

} // namespace

json fix_result(const FixReport& r) {
    json repaired = json::array();
    for (const auto& p : r.repaired)
        repaired.push_back(
            {{"name", p.name}, {"version", p.version}, {"from", p.from}, {"entries", p.files}});
    return {{"dry_run", r.dry_run},
            {"recovered", r.recovered},
            {"rebuilt", r.rebuilt},
            {"repaired", repaired},
            {"fixed", fix_items(r.fixed, false)},
            {"left", fix_items(r.left, true)},
            {"ok", r.left.empty()}};
}

Lines fix_lines(const FixReport& r) {
    Lines out;
    if (!r.recovered.empty())
        out.push_back("recover: " + r.recovered);
    const char* fixed = r.dry_run ? "would fix" : "fixed";
    for (const auto& i : r.fixed)
        out.push_back(fix_where(i) + ": " + i.problem + ": " + fixed + ": " + i.detail);
    for (const auto& i : r.left)
        out.push_back(fix_where(i) + ": " + i.problem + ": left: " + i.detail +
                      (i.fix.empty() ? "" : "; fix: " + i.fix));
    return out;
}

std::string fix_summary(const FixReport& r) {
    return format("%s %zu package(s): %zu problem(s) %s, %zu left",
                  r.dry_run ? "checked" : "verified and fixed", r.packages, r.fixed.size(),
                  r.dry_run ? "would be fixed" : "fixed", r.left.size());
}

std::vector<json> fix_history(const FixReport& r, const std::string& command) {
    std::vector<json> out;
    if (r.dry_run)
        return out;
    if (!r.recovered.empty())
        out.push_back(history_line(command, "", "", "", "recover", "ok", r.recovered));
    if (!r.rebuilt.empty()) {
        std::string detail = "rebuilt";
        for (const auto& p : r.rebuilt)
            detail += " " + p;
        out.push_back(history_line(command, "", "", "", "fixed", "ok", detail));
    }
    for (const auto& p : r.repaired)
        out.push_back(history_line(command, p.name, p.version, p.version, "repaired", "ok",
                                   "restored " + std::to_string(p.files) + " differing entr" +
                                       (p.files == 1 ? "y" : "ies") + " from " + p.from));
    return out;
}

} // namespace skforge::install::report
