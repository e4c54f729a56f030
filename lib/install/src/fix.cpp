// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/fix.hpp"

#include "skforge/install/index.hpp"
#include "skforge/install/query.hpp"
#include "skforge/install/safe_fs.hpp"
#include "skforge/package/manifest.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/sha256.hpp"

#include <algorithm>
#include <fcntl.h>
#include <unistd.h>

namespace skforge::install {

using support::Error;

std::optional<std::string> recorded_run(const InstallTree& tree, const std::string& name) {
    try {
        if (auto dir = open_dir_beneath(tree.ai_core(), name)) {
            auto rec = read_install_record(*dir);
            if (!rec.from.empty() && ::access(rec.from.c_str(), R_OK) == 0)
                return rec.from;
        }
    } catch (const Error&) {
    }
    return std::nullopt;
}

namespace {

std::string index_path(const std::string& soc) {
    return std::string(k_config_dir) + "/" + soc + "/" + k_index_file;
}

std::string record_path() {
    return std::string(k_config_dir) + "/" + k_record_file;
}

// Each problem of `state` as an item on the tree; `detail` says what is (or would be) done.
std::vector<FixItem> derived_items(const DerivedState& state, const std::string& detail) {
    std::vector<FixItem> out;
    for (const auto& p : state.socs)
        out.push_back({"", index_path(p.name), "stale index", p.why + "; " + detail, ""});
    for (const auto& p : state.top)
        out.push_back({"", p.name, "stale file", p.why + "; " + detail, ""});
    if (state.record)
        out.push_back({"", record_path(), "stale record", *state.record + "; " + detail, ""});
    return out;
}

std::vector<std::string> derived_paths(const DerivedState& state) {
    std::vector<std::string> out;
    for (const auto& p : state.socs)
        out.push_back(index_path(p.name));
    for (const auto& p : state.top)
        out.push_back(p.name);
    if (state.record)
        out.push_back(record_path());
    return out;
}

// The record is a cache written without a sync by every other command; after verify --fix it is
// made durable like the indexes (its content was just written by a rename).
void sync_record(const InstallTree& tree) {
    auto config = open_dir_beneath(tree.ai_core(), k_config_dir);
    if (!config)
        return;
    support::UniqueFd fd = open_beneath(*config, k_record_file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd.get() >= 0 && ::fsync(fd.get()) != 0)
        throw support::io_error("cannot sync", config->path + "/" + k_record_file, errno);
    sync_dir(*config);
}

// A leftover recover removes (a temporary, a stage, the journal): its last path component.
bool recovers_it(const std::string& path) {
    auto slash = path.rfind('/');
    std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    return is_temporary_name(base) || base.starts_with(k_stage_prefix) || base == k_journal;
}

std::string repair_command(const std::string& name) {
    return "skinstall repair " + name + " --from X.run (X.run: the package " + name +
           " of the installed version)";
}

// What one package needs, found by verify's own check.
struct PackageFinding {
    std::string name;
    DirState state = DirState::absent;
    std::string why;                   ///< for a state other than installed
    std::vector<Problem> problems;     ///< for installed
    std::optional<std::string> digest; ///< its manifest.json's SHA-256
    std::string version;
};

PackageFinding examine(const InstallTree& tree, const std::string& name, bool listed,
                       support::Progress* progress) {
    auto pd = classify_package_dir(tree, name, listed);
    PackageFinding f{name, pd.state, pd.why, {}, std::nullopt, ""};
    if (pd.state != DirState::installed)
        return f;
    auto r = check_installed(tree, name, progress, Hash::always);
    f.problems = std::move(r.problems);
    f.version = r.manifest.version;
    if (auto dir = open_dir_beneath(tree.ai_core(), name))
        f.digest = installed_manifest_digest(*dir);
    return f;
}

// Every problem of `f` left, each with why and what fixes it.
void leave(FixReport& out, const PackageFinding& f, const std::string& why,
           const std::string& fix) {
    if (f.state != DirState::installed) {
        out.left.push_back({f.name, "", "damaged", f.why + "; " + why, fix});
        return;
    }
    for (const auto& p : f.problems)
        if (p.kind != ProblemKind::extra)
            out.left.push_back({f.name, p.path, std::string(problem_name(p.kind)),
                                (p.detail.empty() ? "" : p.detail + "; ") + why, fix});
}

// The .run `f` can be restored from, verified by repair's rules, or why there is none.
std::optional<VerifiedPackage> restore_source(const InstallTree& tree, const PackageFinding& f,
                                              const Policy& policy, std::string& why) {
    std::optional<std::string> from;
    try {
        if (auto dir = open_dir_beneath(tree.ai_core(), f.name))
            from = read_install_record(*dir).from;
    } catch (const Error&) {
    }
    if (!from || from->empty()) {
        why = "its install record names no .run to restore it from";
        return std::nullopt;
    }
    if (::access(from->c_str(), R_OK) != 0) {
        why = "the .run it was installed from, '" + *from + "', is gone (or unreadable)";
        return std::nullopt;
    }
    try {
        auto pkg = verify_package(*from, policy);
        if (pkg.manifest.name != f.name) {
            why = "'" + *from + "', the .run it was installed from, now holds package '" +
                  pkg.manifest.name + "'";
            return std::nullopt;
        }
        // An intact manifest says exactly what the files must be: only a .run with that very
        // manifest restores them (a rebuilt .run of the same version would install other files).
        if (f.digest && support::sha256_hex(package::manifest_to_json(pkg.manifest)) != *f.digest) {
            why = "'" + *from + "', the .run it was installed from, now holds " + f.name + " " +
                  pkg.manifest.version + " with another manifest than the installed " + f.version +
                  "'s";
            return std::nullopt;
        }
        return pkg;
    } catch (const Error& e) {
        why = std::string("the .run it was installed from does not pass repair's checks: ") +
              e.what();
        return std::nullopt;
    }
}

void fix_package(const InstallTree& tree, const PackageFinding& f, const FixRequest& rq,
                 FixReport& out, support::Log& log) {
    if (f.state == DirState::vendor || f.state == DirState::absent)
        return;
    if (f.state == DirState::left_behind || f.state == DirState::foreign) {
        out.left.push_back({f.name, "", "damaged", f.why, ""});
        return;
    }
    std::vector<std::string> extras;
    std::size_t changed = 0;
    for (const auto& p : f.problems)
        (p.kind == ProblemKind::extra ? (void)extras.push_back(p.path) : (void)++changed);
    for (const auto& x : extras)
        out.left.push_back(
            {f.name, x, std::string(problem_name(ProblemKind::extra)),
             "verify --fix never removes a file the package did not install",
             "move '" + tree.shown() + "/" + f.name + "/" + x + "' out of the package directory"});
    if (f.state == DirState::installed && changed == 0)
        return;
    if (!extras.empty()) {
        leave(out, f,
              "not restored: restoring replaces the package directory whole, which would remove " +
                  std::to_string(extras.size()) + " file(s) the package did not install",
              "move those files away, then 'skinstall verify --fix " + f.name + "'");
        return;
    }
    std::string why;
    auto pkg = restore_source(tree, f, rq.policy, why);
    if (!pkg) {
        leave(out, f, "cannot restore it: " + why, repair_command(f.name));
        return;
    }
    try {
        if (rq.act == Act::dry_run) {
            plan_installs(tree, {*pkg}, InstallRequest(InstallMode::reinstall), log);
            check_payload(*pkg, rq.policy);
        } else
            repair_package(tree, f.name, *pkg, rq.policy, log, Place::kept);
    } catch (const Error& e) {
        leave(out, f, std::string("cannot restore it: ") + e.what(),
              "skinstall repair " + f.name + " --from " + pkg->origin);
        return;
    }
    std::string did =
        (rq.act == Act::dry_run ? "would be restored from " : "restored from ") + pkg->origin;
    if (f.state != DirState::installed)
        out.fixed.push_back({f.name, "", "damaged", f.why + "; " + did, ""});
    // Only what was done: verify's detail of a problem may advise the operator ("remove it and
    // retry"), which no longer applies once the file is restored.
    for (const auto& p : f.problems)
        out.fixed.push_back({f.name, p.path, std::string(problem_name(p.kind)), did, ""});
    out.repaired.push_back(
        {f.name, pkg->manifest.version, pkg->origin, f.state == DirState::installed ? changed : 1});
}

} // namespace

namespace {

// (a) The derived files, by content. Judged before recover when no transaction is pending, so
// what recover's own rebuild fixes is reported as well; a pending transaction changes them
// legitimately, so they are judged after it. A dry run only judges.
void fix_derived(const InstallTree& tree, FixReport& out, support::Log& log) {
    bool pending = transaction_pending(tree);
    std::optional<DerivedState> before;
    if (!pending || out.dry_run)
        before = check_derived(tree);
    if (out.dry_run) {
        auto items = derived_items(*before, "would be rebuilt");
        out.fixed.insert(out.fixed.end(), items.begin(), items.end());
        out.rebuilt = derived_paths(*before);
        return;
    }
    std::string did = recover(tree, log);
    if (did != "nothing to recover")
        out.recovered = did;
    if (!before)
        before = check_derived(tree);
    auto now = check_derived(tree);
    if (before->ok() && now.ok())
        return; // nothing stale before or after recover: no rebuild, nothing to judge again
    for (const auto& w : rebuild_derived(tree, tree.install_order(), Sync::yes))
        log.warn(w);
    sync_record(tree);
    auto items = derived_items(*before, "rebuilt from the installed packages");
    for (auto& i : derived_items(now, "rebuilt from the installed packages"))
        if (std::none_of(items.begin(), items.end(),
                         [&](const FixItem& x) { return x.path == i.path; }))
            items.push_back(std::move(i));
    auto after = derived_paths(check_derived(tree));
    for (auto& i : items) {
        if (std::find(after.begin(), after.end(), i.path) != after.end()) {
            i.fix = "skinstall recover";
            out.left.push_back(std::move(i));
        } else {
            out.rebuilt.push_back(i.path);
            out.fixed.push_back(std::move(i));
        }
    }
}

// What is left in skforge's own directories (planted files): never removed, only reported; a
// dry run counts what recover would remove as fixed.
void report_tree(const InstallTree& tree, FixReport& out) {
    for (const auto& p : check_tree(tree)) {
        if (p.kind == ProblemKind::digest)
            continue; // a stale global index: fix_derived
        if (out.dry_run && recovers_it(p.path))
            out.fixed.push_back(
                {"", p.path, "unexpected", p.detail + "; recover would remove it", ""});
        else
            out.left.push_back(
                {"", p.path, "unexpected", p.detail, "move it out of skforge's directories"});
    }
}

} // namespace

FixReport fix_tree(const InstallTree& tree, const FixRequest& rq, support::Log& log) {
    FixReport out;
    out.dry_run = rq.act == Act::dry_run;
    for (const auto& n : rq.names)
        require_package_name(n);
    fix_derived(tree, out, log);
    // (b) Packages: verify's check, then repair from the recorded .run. Every name is checked
    // before anything is restored.
    auto order = tree.install_order();
    auto names = rq.names.empty() ? order : rq.names;
    std::vector<PackageFinding> found;
    for (const auto& n : names) {
        bool listed = std::find(order.begin(), order.end(), n) != order.end();
        auto f = examine(tree, n, listed, rq.progress);
        if (f.state == DirState::absent)
            throw Error(n + " is not installed in '" + tree.shown() + "'");
        found.push_back(std::move(f));
    }
    out.packages = found.size();
    for (const auto& f : found)
        fix_package(tree, f, rq, out, log);
    if (rq.names.empty())
        report_tree(tree, out);
    if (!out.dry_run && !out.repaired.empty())
        sync_record(tree);
    return out;
}

} // namespace skforge::install
