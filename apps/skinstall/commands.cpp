// SPDX-License-Identifier: Apache-2.0
// skinstall's commands: glue between the options and the library (lib/install does the work,
// lib/install/report renders the results).
#include "commands.hpp"

#include "../common/cli_main.hpp"
#include "skforge/install/cleanup_log.hpp"
#include "skforge/install/fix.hpp"
#include "skforge/install/history.hpp"
#include "skforge/install/holders.hpp"
#include "skforge/install/index.hpp"
#include "skforge/install/layout.hpp"
#include "skforge/install/query.hpp"
#include "skforge/install/report.hpp"
#include "skforge/install/transaction.hpp"
#include "skforge/kernel/toolkit.hpp"
#include "skforge/package/json_text.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/log.hpp"
#include "skforge/support/printable.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unistd.h>

namespace inst = skforge::install;
namespace pkg = skforge::package;
namespace report = skforge::install::report;
using nlohmann::json;
using skforge::support::Error;
using skforge::support::ErrorKind;

namespace skforge::skinstall {

namespace {

// Messages from the library: information on stdout, or on stderr when stdout carries --json;
// warnings always on stderr; both printable.
skforge::cli::ConsoleLog console(const Options& o) {
    return skforge::cli::ConsoleLog(o.quiet, o.json ? stderr : stdout);
}

using skforge::cli::print_safe;

inst::Policy make_policy(const Options& o) {
    inst::Policy p;
    for (const auto& k : o.trusted_keys)
        p.trusted.push_back(pkg::Key::load_public(k));
    p.require_signature = o.require_signature;
    if (p.require_signature && p.trusted.empty())
        throw Error("--require-signature needs at least one --trusted-key", ErrorKind::usage);
    return p;
}

// Packages and installed trees this large show a bar while they are read (small ones stay quiet).
constexpr std::uint64_t k_progress_min_bytes = 4u << 20;

// The bar on standard error while a long step runs: only on a terminal and without -q, so pipes
// and logs stay clean.
skforge::support::Progress* progress_for(const Options& o, skforge::support::Progress& bar) {
    return !o.quiet && ::isatty(STDERR_FILENO) ? &bar : nullptr;
}

inst::LockWait lock_wait(const Options& o, skforge::support::Log& log) {
    return {o.lock_timeout, &log};
}

void print_json(const json& j) {
    std::cout << pkg::json_text(j, 2) << "\n";
}

void print_lines(const std::vector<std::string>& lines) {
    for (const auto& l : lines)
        print_safe("%s\n", l.c_str());
}

// A query's result: the JSON value with --json, else its text lines.
void show(const Options& o, const json& result, report::Lines (*text)(const json&)) {
    if (o.json)
        print_json(result);
    else
        print_lines(text(result));
}

// Appends to the history after a change. The change is made by then: a history that cannot be
// written (a full disk, a file planted in log/) is a warning, never the command's failure.
void record(const inst::InstallTree& tree, const Options& o, const std::vector<json>& lines,
            skforge::support::Log& log) {
    try {
        inst::append_history(tree, lines, o.log_file);
    } catch (const Error& e) {
        log.warn(std::string("the change is made but its history line is not: ") + e.what());
    }
}

// Opens the tree for a mutating command, takes the lock, finishes any interrupted work (and
// records that in the history).
struct Mutating {
    inst::InstallTree tree;
    inst::TreeLock lock;
    Mutating(const Options& o, skforge::support::Log& log, inst::Create create = inst::Create::yes)
        : tree(open(o, create)),
          lock(writable(tree), inst::LockMode::exclusive, lock_wait(o, log)) {
        auto did = inst::recover(tree, log);
        if (did != "nothing to recover")
            record(tree, o, {inst::history_line(o.command_line, "", "", "", "recover", "ok", did)},
                   log);
    }
    static inst::InstallTree open(const Options& o, inst::Create create) {
        std::string given = inst::choose_install_path(o.install_path);
        auto tree =
            inst::InstallTree::open(given, create, inst::Modes::for_process(o.install_for_all));
        if (!tree)
            throw Error("nothing is installed under '" + given + "'");
        return std::move(*tree);
    }
    // A user who may not write the tree (the run user's tree, root's tree) is told whose it is
    // before anything is locked or changed.
    static const inst::InstallTree& writable(const inst::InstallTree& tree) {
        tree.require_writable();
        return tree;
    }
};

// The tree for a query, or nullopt when nothing was ever installed there.
std::optional<inst::InstallTree> open_for_query(const Options& o) {
    return inst::InstallTree::open(inst::choose_install_path(o.install_path), inst::Create::no);
}

// Prints per-package results (--json) and appends them to the history.
void finish_installs(const Options& o, const Mutating& m,
                     const std::vector<inst::InstallResult>& rs, skforge::support::Log& log,
                     const std::map<std::string, std::string>& details = {}) {
    std::vector<json> lines;
    std::set<std::string> changed;
    json out = json::array();
    for (const auto& r : rs) {
        out.push_back(report::install_result(r));
        if (!r.changed())
            continue;
        changed.insert(r.name);
        auto detail = details.find(r.name);
        lines.push_back(inst::history_line(o.command_line, r.name, r.old_version, r.version,
                                           std::string(inst::outcome_name(r.outcome)), "ok",
                                           detail == details.end() ? "" : detail->second));
    }
    record(m.tree, o, lines, log);
    json shadows = report::shadows(m.tree, changed);
    for (const auto& line : report::shadow_lines(shadows))
        log.info(line);
    report::attach_shadows(out, shadows);
    if (o.json)
        print_json(out);
}

// The tree a --dry-run reads under the shared lock, or nullopt when there is none yet. It does
// not recover: an interrupted transaction is reported, since the real command finishes it first.
std::optional<inst::InstallTree> open_for_dry_run(const Options& o, skforge::support::Log& log,
                                                  std::optional<inst::TreeLock>& lock) {
    auto tree = open_for_query(o);
    if (tree) {
        lock.emplace(*tree, inst::LockMode::shared, lock_wait(o, log));
        if (inst::transaction_pending(*tree))
            log.warn("an interrupted transaction is pending in " + tree->shown() +
                     "; the real command finishes or rolls it back first, which may change "
                     "this answer");
    }
    return tree;
}

// Prints what a dry run would do: one line per package, or --json like the real command's
// result with "dry_run": true.
void print_dry_run(const Options& o, json out) {
    auto lines = report::dry_run_lines(out);
    if (o.json)
        print_json(out);
    else if (!o.quiet)
        print_lines(lines);
}

int dry_run_installs(const Options& o, const std::vector<inst::VerifiedPackage>& pkgs,
                     const inst::InstallRequest& request, const inst::Policy& policy,
                     skforge::support::Log& log) {
    std::optional<inst::TreeLock> lock;
    auto tree = open_for_dry_run(o, log, lock);
    json out = json::array();
    std::vector<inst::InstallResult> rs;
    if (tree)
        rs = inst::plan_installs(*tree, pkgs, request, log);
    else
        for (const auto& p : pkgs)
            rs.push_back(
                {p.manifest.name, p.manifest.version, "", inst::InstallOutcome::installed});
    // What the real command reads while staging: the payload of every package it would stage.
    for (std::size_t i = 0; i < pkgs.size(); ++i)
        if (rs[i].outcome != inst::InstallOutcome::already_installed)
            inst::check_payload(pkgs[i], policy);
    for (const auto& r : rs)
        out.push_back(report::install_result(r));
    print_dry_run(o, out);
    return 0;
}

// For a package this command installed, the absolute path of its uninstall script (what a CI
// job's 'cleanup-from-log' looks for); one that was there before this command is named without
// that path, so a job's cleanup never removes what it did not install.
void report_uninstall_paths(const inst::InstallTree& tree,
                            const std::vector<inst::InstallResult>& results,
                            skforge::support::Log& log) {
    for (const auto& r : results) {
        if (r.outcome == inst::InstallOutcome::installed)
            log.info("uninstall with: " + tree.shown() + "/" + r.name + "/uninstall.sh");
        else
            log.info(r.name +
                     " was installed before this command; 'skinstall cleanup-from-log' "
                     "leaves it, 'skinstall uninstall " +
                     r.name + "' removes it");
    }
}

bool installed_dir(const inst::InstallTree& tree, const std::string& name) {
    auto st = inst::stat_at(tree.ai_core(), name);
    return st && S_ISDIR(st->st_mode);
}

// Who holds the packages an install is about to commit (installer.md, "Lifecycle"): with
// --holder, that process (a second install of the same version only adds it); without, the
// install is an operator's and persistent. Decided after the same refusals install_packages
// makes, written before it commits: a kill in between leaves a line for a package that is not
// there (dropped at the next write) or the old version with the new lifecycle, never a held
// package without its line.
void record_holds(const Options& o, const inst::InstallTree& tree,
                  const std::vector<inst::VerifiedPackage>& pkgs,
                  const inst::InstallRequest& request) {
    std::optional<inst::Holder> holder;
    if (!o.holder.empty())
        holder = inst::parse_holder_option(o.holder, true);
    skforge::support::NullLog quiet;
    inst::plan_installs(tree, pkgs, request, quiet);
    auto records = inst::read_holds(tree);
    for (const auto& p : pkgs) {
        const auto& name = p.manifest.name;
        inst::write_hold(tree, records, name,
                         inst::hold_after_install(inst::hold_of(records, name),
                                                  installed_dir(tree, name), holder));
    }
}

} // namespace

namespace {

// Each package's CANN stamp against the host (cann-stamp.md), before anything is written: a
// package for another SoC is refused; one for another CANN line too, unless
// --ignore-cann-version, which the history records for it (returned by name).
std::map<std::string, std::string> check_stamps(const Options& o,
                                                const std::vector<inst::VerifiedPackage>& pkgs,
                                                skforge::support::Log& log) {
    // The toolkit's version.info is read only when a package has a stamp to check it against.
    const bool stamped = std::any_of(pkgs.begin(), pkgs.end(), [](const inst::VerifiedPackage& p) {
        return p.manifest.cann.has_value();
    });
    auto host = host_cann(o, stamped);
    std::map<std::string, std::string> overridden;
    for (const auto& p : pkgs) {
        for (const auto& r : inst::stamp_refusals(p.manifest, host)) {
            if (r.kind == inst::StampRefusal::Kind::release && o.ignore_cann_version) {
                log.warn(p.origin + ": installing anyway (--ignore-cann-version): " + r.message);
                overridden[p.manifest.name] = "--ignore-cann-version: " + r.message;
                continue;
            }
            throw Error(p.origin + ": " + r.message +
                        (r.kind == inst::StampRefusal::Kind::release
                             ? "; install a build for this CANN line, or give "
                               "--ignore-cann-version to install it anyway (recorded in the "
                               "history)"
                             : "; install a build for this SoC"));
        }
        if (p.manifest.cann && host.version.empty())
            log.info(p.origin + ": built for CANN " + p.manifest.cann->version +
                     "; not checked (no --cann-version, and no version.info under "
                     "$ASCEND_HOME_PATH)");
        else if (p.manifest.cann && !pkg::cann_line(host.version))
            log.info(p.origin + ": built for CANN " + p.manifest.cann->version +
                     "; not checked (the toolkit's version '" + host.version + "', read from " +
                     host.version_from + ", names no CANN line)");
    }
    return overridden;
}

} // namespace

inst::HostCann host_cann(const Options& o, bool read_toolkit) {
    inst::HostCann host;
    if (!o.cann_version.empty()) {
        if (!pkg::cann_line(o.cann_version))
            throw Error("--cann-version '" + o.cann_version +
                            "': expected a CANN release such as 9.1.0, 9.0.1 or 9.2.RC1, or a "
                            "line such as 9.1",
                        ErrorKind::usage);
        host.version = o.cann_version;
        host.version_from = "--cann-version";
    } else if (const char* home = std::getenv("ASCEND_HOME_PATH"); read_toolkit && home && *home) {
        std::string from;
        if (auto v = skforge::kernel::toolkit_version(home, &from)) {
            host.version = *v;
            host.version_from = from;
        }
    }
    host.soc_dir = soc_dir_option(o.soc);
    host.soc_from = "--soc";
    return host;
}

int cmd_install(const Options& o, inst::InstallMode mode) {
    if (o.args.empty())
        throw Error("name at least one .run package", ErrorKind::usage);
    auto log = console(o);
    auto policy = make_policy(o);
    skforge::support::TerminalProgress bar(k_progress_min_bytes);
    // Every package is verified before anything is written.
    std::vector<inst::VerifiedPackage> pkgs;
    for (const auto& a : o.args)
        pkgs.push_back(inst::verify_package(a, policy, progress_for(o, bar)));
    auto overridden = check_stamps(o, pkgs, log);
    std::string given = inst::choose_install_path(o.install_path);
    for (const auto& p : pkgs)
        if (p.signature == pkg::SignatureState::not_checked)
            log.warn(p.origin + " is signed but its signature was not checked (no --trusted-key)");
    inst::InstallRequest request(o.reinstall ? inst::InstallMode::reinstall : mode,
                                 o.allow_downgrade ? inst::Downgrade::allow
                                                   : inst::Downgrade::refuse);
    request.progress = progress_for(o, bar);
    if (o.dry_run)
        return dry_run_installs(o, pkgs, request, policy, log);
    Mutating m(o, log);
    if (auto why = inst::runtime_path_problem(given, m.tree.resolved_root()))
        log.warn(*why);
    record_holds(o, m.tree, pkgs, request);
    auto results = inst::install_packages(m.tree, pkgs, request, policy, log);
    report_uninstall_paths(m.tree, results, log);
    finish_installs(o, m, results, log, overridden);
    return 0;
}

namespace {

// The .run `repair NAME` restores from: --from, else the file it was installed from (its install
// record), else NAME.run in the current directory.
std::string repair_source(const Options& o, const inst::InstallTree& tree,
                          const std::string& name) {
    if (!o.from.empty())
        return o.from;
    return inst::recorded_run(tree, name).value_or(name + ".run");
}

} // namespace

// Repairs one package. repair_package says "repairing NAME from X.run" once its checks pass; a
// --from package is verified before the tree is opened.
int cmd_repair(const Options& o) {
    if (o.args.size() != 1)
        throw Error("name one package to repair", ErrorKind::usage);
    const std::string& name = o.args.front();
    auto log = console(o);
    auto policy = make_policy(o);
    std::optional<inst::VerifiedPackage> pkg;
    if (!o.from.empty())
        pkg = inst::verify_package(o.from, policy);
    Mutating m(o, log, inst::Create::no);
    if (!pkg)
        pkg = inst::verify_package(repair_source(o, m.tree, name), policy);
    auto r = inst::repair_package(m.tree, name, *pkg, policy, log);
    finish_installs(o, m, {r}, log);
    return 0;
}

namespace {

// The packages `uninstall` removes, in order: those named, or with --all every installed one,
// newest first.
// --all keeps the packages CANN's own installer laid out, and says so.
std::vector<std::string> uninstall_names(const Options& o, const inst::InstallTree& tree,
                                         skforge::support::Log& log) {
    if (!o.all)
        return o.args;
    std::vector<std::string> names;
    for (const auto& n : tree.install_order()) {
        if (inst::classify_package_dir(tree, n, true).state == inst::DirState::vendor)
            log.info("keeping " + n + ": CANN's own package, not installed by skforge");
        else
            names.push_back(n);
    }
    std::reverse(names.begin(), names.end());
    return names;
}

} // namespace

namespace {

// An operator's uninstall of a package live processes hold is refused, naming them, unless
// --force: removing it takes the kernels from under them. Holds of the process asking (and its
// ancestors: the shell that executed the .run) are its own to give up.
void refuse_held(const Options& o, const inst::HoldRecords& records,
                 const std::vector<std::string>& names) {
    if (o.force)
        return;
    // The shell that installed it and now asks to remove it does not stand in its own way.
    auto asking = inst::this_process_and_ancestors();
    for (const auto& n : names) {
        auto live = inst::live_holders(inst::hold_of(records, n));
        std::erase_if(live, [&](const inst::Holder& h) {
            return std::find(asking.begin(), asking.end(), h) != asking.end();
        });
        if (!live.empty())
            throw Error("refusing to uninstall " + n + ": running processes hold it (" +
                        inst::holders_list(live) +
                        "); it is removed when the last of them releases it, or use --force to "
                        "remove it from under them");
    }
}

// A holder's uninstall (--holder): releases its hold on `name` and says whether the package is
// to be removed now (not persistent, no live holder left). A kept package's record is written
// now; a removed one's line goes once it is removed (a kill in between leaves the package as it
// was, which recover or the next exit settles: its caller is exiting).
bool release_hold(const inst::InstallTree& tree, inst::HoldRecords& records,
                  const std::string& name, const std::optional<inst::Holder>& holder,
                  skforge::support::Log& log) {
    auto record = inst::hold_of(records, name);
    if (record && holder)
        std::erase(record->holders, *holder);
    bool remove = inst::collectable(record);
    if (record && record->persistent && record->holders.empty())
        record.reset();
    if (!remove) {
        inst::write_hold(tree, records, name, record);
        auto live = inst::live_holders(record);
        log.info("keeping " + name + ": " +
                 (live.empty() ? std::string("an operator's install (persistent); 'skinstall "
                                             "uninstall " +
                                             name + "' removes it")
                               : "still held by " + inst::holders_list(live)));
    }
    return remove;
}

// uninstall --dry-run: the same refusals and decisions, nothing written; a package a holder's
// uninstall would keep is reported as kept.
int dry_run_uninstall(const Options& o, const std::optional<inst::Holder>& holder,
                      skforge::support::Log& log) {
    std::optional<inst::TreeLock> lock;
    auto tree = open_for_dry_run(o, log, lock);
    if (!tree)
        throw Error("nothing is installed under '" + inst::choose_install_path(o.install_path) +
                    "'");
    auto names = uninstall_names(o, *tree, log);
    auto records = inst::read_holds(*tree);
    if (o.holder.empty())
        refuse_held(o, records, names);
    json out = json::array();
    for (const auto& n : names) {
        auto record = inst::hold_of(records, n);
        if (record && holder)
            std::erase(record->holders, *holder);
        if (!o.holder.empty() && !inst::collectable(record)) {
            out.push_back(report::uninstall_result({n, "", "kept"}));
            out.back()["changed"] = false;
            continue;
        }
        out.push_back(report::uninstall_result(inst::uninstall_package(
            *tree, n, o.force ? inst::Force::yes : inst::Force::no, log, inst::Act::dry_run)));
    }
    print_dry_run(o, out);
    return 0;
}

} // namespace

int cmd_uninstall(const Options& o) {
    if (o.args.empty() == !o.all)
        throw Error("name the packages to uninstall, or --all", ErrorKind::usage);
    bool for_holder = !o.holder.empty();
    std::optional<inst::Holder> holder;
    if (for_holder)
        holder = inst::parse_holder_option(o.holder, false);
    auto log = console(o);
    if (o.dry_run)
        return dry_run_uninstall(o, holder, log);
    Mutating m(o, log, inst::Create::no);
    auto names = uninstall_names(o, m.tree, log);
    auto records = inst::read_holds(m.tree);
    if (!for_holder)
        refuse_held(o, records, names);
    json out = json::array();
    std::vector<json> lines;
    auto record_done = [&] { record(m.tree, o, lines, log); };
    try {
        for (const auto& n : names) {
            if (for_holder && !release_hold(m.tree, records, n, holder, log)) {
                out.push_back(report::uninstall_result({n, "", "kept"}));
                out.back()["changed"] = false;
                continue;
            }
            auto r = inst::uninstall_package(m.tree, n,
                                             o.force ? inst::Force::yes : inst::Force::no, log);
            inst::write_hold(m.tree, records, n, std::nullopt);
            out.push_back(report::uninstall_result(r));
            lines.push_back(
                inst::history_line(o.command_line, r.name, r.version, "", r.action, "ok"));
        }
    } catch (...) {
        record_done(); // the packages before the refused one are gone: say so in the history
        throw;
    }
    record_done();
    if (o.json)
        print_json(out);
    return 0;
}

// gc: removes every package installed for processes that are all gone (a killed rank's), never
// an operator's; a package that cannot be removed (changed files) is reported and kept.
int cmd_gc(const Options& o) {
    auto log = console(o);
    std::optional<inst::TreeLock> shared;
    std::optional<Mutating> m;
    std::optional<inst::InstallTree> tree;
    if (o.dry_run)
        tree = open_for_dry_run(o, log, shared);
    else if (open_for_query(o))
        m.emplace(o, log, inst::Create::no);
    const inst::InstallTree* t = m ? &m->tree : tree ? &*tree : nullptr;
    json out = json::array();
    std::vector<json> lines;
    bool failed = false;
    if (t) {
        auto records = inst::read_holds(*t);
        auto order = t->install_order();
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
            auto record = inst::hold_of(records, *it);
            if (!inst::collectable(record))
                continue;
            try {
                auto r = inst::uninstall_package(*t, *it, inst::Force::no, log,
                                                 o.dry_run ? inst::Act::dry_run : inst::Act::yes);
                if (!o.dry_run) {
                    inst::write_hold(*t, records, *it, std::nullopt);
                    lines.push_back(
                        inst::history_line(o.command_line, r.name, r.version, "", r.action, "ok"));
                }
                json j = report::uninstall_result(r);
                j["holders"] = json::array();
                for (const auto& h : record->holders)
                    j["holders"].push_back({{"pid", h.pid}, {"start_time", h.start}});
                out.push_back(j);
            } catch (const Error& e) {
                log.warn(std::string("keeping ") + *it + ": " + e.what());
                failed = true;
            }
        }
        if (m)
            record(*t, o, lines, log);
    }
    if (o.dry_run)
        print_dry_run(o, out);
    else if (o.json)
        print_json(out);
    else if (!o.quiet) {
        for (const auto& r : out)
            print_safe("removed %s %s: every process that held it is gone\n",
                       r.at("name").get<std::string>().c_str(),
                       r.at("version").get<std::string>().c_str());
        if (out.empty())
            print_safe("nothing to collect: every package is persistent or held by a running "
                       "process\n");
    }
    return failed ? 1 : 0;
}

int cmd_list(const Options& o) {
    auto log = console(o);
    auto tree = open_for_query(o);
    json out = json::array();
    if (tree) {
        inst::TreeLock lock(*tree, inst::LockMode::shared, lock_wait(o, log));
        std::vector<std::string> skipped;
        out = o.conflicts ? report::conflicts(*tree, skipped) : report::packages(*tree);
        for (const auto& s : skipped)
            log.warn(s);
    }
    show(o, out, o.conflicts ? report::conflicts_text : report::packages_text);
    return 0;
}

namespace {

// verify --fix: under the exclusive lock (shared for --dry-run); fix_tree runs recover itself.
int cmd_fix(const Options& o) {
    auto log = console(o);
    inst::FixRequest rq;
    rq.names = o.args;
    rq.policy = make_policy(o);
    rq.act = o.dry_run ? inst::Act::dry_run : inst::Act::yes;
    skforge::support::TerminalProgress bar(k_progress_min_bytes);
    rq.progress = progress_for(o, bar);
    inst::FixReport r;
    if (o.dry_run) {
        std::optional<inst::TreeLock> lock;
        auto tree = open_for_dry_run(o, log, lock);
        if (!tree)
            throw Error("nothing is installed under '" + inst::choose_install_path(o.install_path) +
                        "'");
        r = inst::fix_tree(*tree, rq, log);
    } else {
        auto tree = Mutating::open(o, inst::Create::no);
        inst::TreeLock lock(Mutating::writable(tree), inst::LockMode::exclusive, lock_wait(o, log));
        r = inst::fix_tree(tree, rq, log);
        record(tree, o, report::fix_history(r, o.command_line), log);
    }
    if (o.json)
        print_json(report::fix_result(r));
    else {
        print_lines(report::fix_lines(r));
        if (!o.quiet)
            print_safe("%s\n", report::fix_summary(r).c_str());
    }
    return r.left.empty() ? 0 : 1;
}

} // namespace

int cmd_verify(const Options& o) {
    if (o.fix)
        return cmd_fix(o);
    if (o.dry_run || !o.trusted_keys.empty() || o.require_signature || o.install_for_all ||
        !o.log_file.empty())
        throw Error("--dry-run, --trusted-key, --require-signature, --install-for-all and "
                    "--log-file go with verify --fix only",
                    ErrorKind::usage);
    auto log = console(o);
    auto tree = open_for_query(o);
    if (!tree) {
        if (!o.args.empty())
            throw Error(o.args.front() + " is not installed");
        std::cout << (o.json ? "[]\n" : "no static-kernel packages installed\n");
        return 0;
    }
    inst::TreeLock lock(*tree, inst::LockMode::shared, lock_wait(o, log));
    auto order = tree->install_order();
    auto names = o.args.empty() ? order : o.args;
    json out = json::array();
    std::size_t problems = 0, files = 0;
    skforge::support::TerminalProgress bar(k_progress_min_bytes);
    auto take = [&](report::Verified v) {
        if (!o.json)
            print_lines(v.lines);
        if (!v.result.is_null())
            out.push_back(std::move(v.result));
        problems += v.problems;
        files += v.files;
    };
    for (const auto& n : names) {
        bool listed = std::find(order.begin(), order.end(), n) != order.end();
        take(report::verify_package(*tree, n, listed, progress_for(o, bar)));
    }
    if (o.args.empty())
        take(report::verify_tree(*tree));
    if (o.json)
        print_json(out);
    else if (!o.quiet)
        print_safe("%s\n", report::verify_summary(names.size(), files, problems).c_str());
    return problems == 0 ? 0 : 1;
}

namespace {

// The installed manifest of `name` for a query; throws naming the damage or the absence.
pkg::Manifest query_manifest(const inst::InstallTree& tree, const std::string& name) {
    auto pd = inst::classify_package_dir(tree, name, true);
    if (pd.state == inst::DirState::absent)
        throw Error(name + " is not installed in '" + tree.shown() + "'");
    if (pd.state == inst::DirState::vendor)
        throw Error(name + " has no skforge manifest to query: " + pd.why);
    if (pd.state != inst::DirState::installed)
        throw Error(name + " is damaged: " + pd.why + "\n  " + inst::repair_hint(name));
    return std::move(*pd.manifest);
}

// A query on one installed package under the shared lock.
template <class F> int with_package(const Options& o, F f) {
    if (o.args.size() != 1)
        throw Error("name one installed package", ErrorKind::usage);
    auto log = console(o);
    auto tree = open_for_query(o);
    if (!tree)
        throw Error(o.args.front() + " is not installed (nothing is installed under '" +
                    inst::choose_install_path(o.install_path) + "')");
    inst::TreeLock lock(*tree, inst::LockMode::shared, lock_wait(o, log));
    return f(*tree, o.args.front(), query_manifest(*tree, o.args.front()));
}

} // namespace

int cmd_files(const Options& o) {
    return with_package(
        o, [&](const inst::InstallTree& tree, const std::string& name, const pkg::Manifest& m) {
            show(o, report::files(tree, name, m), report::files_text);
            return 0;
        });
}

int cmd_info(const Options& o) {
    return with_package(
        o, [&](const inst::InstallTree& tree, const std::string& name, const pkg::Manifest& m) {
            show(o, report::info(tree, name, m), report::info_text);
            return 0;
        });
}

int cmd_owner(const Options& o) {
    if (o.args.size() != (o.key.empty() ? 1u : 0u))
        throw Error("name one PATH, or --key KEY", ErrorKind::usage);
    auto log = console(o);
    std::string given = inst::choose_install_path(o.install_path);
    auto tree = open_for_query(o);
    if (!tree)
        throw Error("nothing is installed under '" + given + "'");
    inst::TreeLock lock(*tree, inst::LockMode::shared, lock_wait(o, log));
    std::vector<std::string> skipped;
    auto uses = inst::key_uses(inst::installed_indexes(*tree, tree->install_order(), skipped));
    json kernels = json::array();
    std::optional<std::string> owner;
    std::string rel;
    if (o.key.empty()) {
        rel = inst::tree_relative(*tree, given, o.args.front());
        owner = inst::owner_of(*tree, rel);
        for (const auto& u : uses)
            for (const auto& pb : u.providers)
                if (pb.second == rel)
                    kernels.push_back(report::key_use(u));
    } else {
        for (const auto& u : uses)
            if (u.key == o.key)
                kernels.push_back(report::key_use(u));
    }
    bool found = o.key.empty() ? owner.has_value() : !kernels.empty();
    if (o.json) {
        json j = {{"kernels", kernels}};
        if (o.key.empty()) {
            j["path"] = tree->shown() + "/" + rel;
            j["package"] = owner ? json(*owner) : json(nullptr);
        } else {
            j["key"] = o.key;
        }
        print_json(j);
    } else {
        if (o.key.empty())
            print_safe("%s: %s\n",
                       !owner           ? "no installed package owns"
                       : owner->empty() ? "the install tree itself (skinstall derives it)"
                                        : owner->c_str(),
                       (tree->shown() + "/" + rel).c_str());
        else if (kernels.empty())
            print_safe("no installed package provides a kernel for key %s\n", o.key.c_str());
        print_lines(report::key_uses_text(kernels));
    }
    return found ? 0 : 1;
}

namespace {} // namespace

// The history, oldest first; a line that is not a history line is shown as unreadable (text) or
// {"unreadable": ...} (--json) with a warning, never the command's failure.
int cmd_history(const Options& o) {
    auto log = console(o);
    auto tree = open_for_query(o);
    std::vector<inst::HistoryEntry> entries;
    if (tree) {
        inst::TreeLock lock(*tree, inst::LockMode::shared, lock_wait(o, log));
        entries = inst::read_history(*tree);
    }
    std::size_t unreadable = 0;
    json lines = json::array();
    for (const auto& e : entries) {
        unreadable += e.readable() ? 0u : 1u;
        if (o.json)
            lines.push_back(e.as_json());
        else if (e.readable())
            print_safe("%s\n", report::history_text(e.line).c_str());
        else
            print_safe("(unreadable) %s\n", skforge::support::printable(e.text).c_str());
    }
    if (o.json)
        print_json(lines);
    else if (entries.empty())
        std::cout << "no history\n";
    if (unreadable > 0)
        log.warn(std::to_string(unreadable) + " line(s) of the history in '" + tree->shown() +
                 "/log' are not history lines (damaged or written by something else); shown as "
                 "unreadable");
    return 0;
}

int cmd_recover(const Options& o) {
    auto log = console(o);
    auto tree =
        inst::InstallTree::open(inst::choose_install_path(o.install_path), inst::Create::yes);
    tree->require_writable();
    inst::TreeLock lock(*tree, inst::LockMode::exclusive, lock_wait(o, log));
    auto did = inst::recover(*tree, log);
    if (did == "nothing to recover")
        log.info(did);
    else
        record(*tree, o, {inst::history_line(o.command_line, "", "", "", "recover", "ok", did)},
               log);
    return 0;
}

int cmd_cleanup(const Options& o) {
    if (o.args.size() != 1 || o.outputs.empty())
        throw Error("usage: skinstall cleanup-from-log LOG --outputs DIR", ErrorKind::usage);
    auto log = console(o);
    inst::CleanupRequest rq;
    rq.log_text = skforge::support::read_file(o.args.front());
    rq.outputs_dir = o.outputs;
    rq.install_path = inst::choose_install_path(o.install_path);
    rq.force = o.force ? inst::Force::yes : inst::Force::no;
    rq.wait = lock_wait(o, log);
    rq.uninstalled = [&](const inst::InstallTree& tree, const inst::UninstallResult& r) {
        record(tree, o, {inst::history_line(o.command_line, r.name, r.version, "", r.action, "ok")},
               log);
    };
    inst::cleanup_from_log(rq, log);
    return 0;
}

} // namespace skforge::skinstall
