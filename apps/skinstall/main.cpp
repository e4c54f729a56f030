// SPDX-License-Identifier: Apache-2.0
// skinstall: installs and removes static-kernel packages under
// <install-path>/opp/static_kernel/ai_core/. Each subcommand declares the options it takes; they
// become a plain struct; the library does the work; errors are caught once in run_main (exit 0
// ok, 1 failure, 2 usage).
#include "../common/cli_main.hpp"
#include "skforge/install/cleanup_log.hpp"
#include "skforge/install/history.hpp"
#include "skforge/install/index.hpp"
#include "skforge/install/layout.hpp"
#include "skforge/install/query.hpp"
#include "skforge/install/transaction.hpp"
#include "skforge/package/json_text.hpp"
#include "skforge/package/path_rules.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/printable.hpp"

#include <boost/program_options.hpp>
#include <climits>
#include <clocale>
#include <cstdio>
#include <ctime>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unistd.h>

namespace po = boost::program_options;
namespace inst = skforge::install;
namespace pkg = skforge::package;
using nlohmann::json;
using skforge::support::Error;
using skforge::support::ErrorKind;

namespace {

struct Options {
    std::string install_path;
    std::vector<std::string> trusted_keys;
    bool require_signature = false;
    bool quiet = false;
    bool json = false;
    bool force = false;
    bool all = false;
    bool reinstall = false;
    bool allow_downgrade = false;
    bool conflicts = false;
    bool dry_run = false;
    bool install_for_all = false;
    std::string outputs;
    std::string from;
    std::string key;
    std::string log_file;
    std::optional<double> lock_timeout;
    std::vector<std::string> args;
    std::string command_line; ///< for the history
};

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

json result_json(const inst::InstallResult& r) {
    return {{"name", r.name},
            {"version", r.version},
            {"old_version", r.old_version},
            {"action", inst::outcome_name(r.outcome)},
            {"changed", r.changed()}};
}

// Says which keys the packages just installed now hide in other packages (later install wins).
json report_shadows(const inst::InstallTree& tree, const std::set<std::string>& names,
                    skforge::support::Log& log) {
    json out = json::array();
    for (const auto& u : inst::shadows_by(tree, names)) {
        std::string hidden;
        json hj = json::array();
        for (std::size_t i = 0; i + 1 < u.providers.size(); ++i) {
            hidden += (hidden.empty() ? "" : ", ") + u.providers[i].first;
            hj.push_back(u.providers[i].first);
        }
        log.info(u.winner() + "'s kernel for " + u.key + " (" + u.op + " on " + u.soc +
                 ") hides the one from " + hidden);
        out.push_back(
            {{"soc", u.soc}, {"op", u.op}, {"key", u.key}, {"winner", u.winner()}, {"hidden", hj}});
    }
    return out;
}

// Prints per-package results (--json) and appends them to the history.
void finish_installs(const Options& o, const Mutating& m,
                     const std::vector<inst::InstallResult>& rs, skforge::support::Log& log) {
    std::vector<json> lines;
    std::set<std::string> changed;
    json out = json::array();
    for (const auto& r : rs) {
        out.push_back(result_json(r));
        if (!r.changed())
            continue;
        changed.insert(r.name);
        lines.push_back(inst::history_line(o.command_line, r.name, r.old_version, r.version,
                                           std::string(inst::outcome_name(r.outcome)), "ok"));
    }
    record(m.tree, o, lines, log);
    json shadows = report_shadows(m.tree, changed, log);
    for (auto& r : out)
        r["shadows"] = json::array();
    for (const auto& s : shadows)
        for (auto& r : out)
            if (r["name"] == s["winner"])
                r["shadows"].push_back(s);
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
    static const std::map<std::string, std::string> k_verb = {
        {"installed", "install"},     {"upgraded", "upgrade"},      {"downgraded", "downgrade"},
        {"reinstalled", "reinstall"}, {"uninstalled", "uninstall"}, {"removed", "remove"}};
    for (auto& r : out) {
        r["dry_run"] = true;
        auto verb = k_verb.find(r["action"].get<std::string>());
        if (!o.json && !o.quiet)
            print_safe("would %s %s %s%s\n", verb == k_verb.end() ? "leave" : verb->second.c_str(),
                       r["name"].get<std::string>().c_str(),
                       r["version"].get<std::string>().c_str(),
                       verb == k_verb.end() ? " as it is (already installed)" : "");
    }
    if (o.json)
        print_json(out);
}

int dry_run_installs(const Options& o, const std::vector<inst::VerifiedPackage>& pkgs,
                     const inst::InstallRequest& request, skforge::support::Log& log) {
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
    for (const auto& r : rs)
        out.push_back(result_json(r));
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
    std::string given = inst::choose_install_path(o.install_path);
    for (const auto& p : pkgs)
        if (p.signature == pkg::SignatureState::not_checked)
            log.warn(p.run->path() +
                     " is signed but its signature was not checked (no --trusted-key)");
    inst::InstallRequest request(o.reinstall ? inst::InstallMode::reinstall : mode,
                                 o.allow_downgrade ? inst::Downgrade::allow
                                                   : inst::Downgrade::refuse);
    request.progress = progress_for(o, bar);
    if (o.dry_run)
        return dry_run_installs(o, pkgs, request, log);
    Mutating m(o, log);
    if (auto why = inst::runtime_path_problem(given, m.tree.resolved_root()))
        log.warn(*why);
    auto results = inst::install_packages(m.tree, pkgs, request, policy, log);
    report_uninstall_paths(m.tree, results, log);
    finish_installs(o, m, results, log);
    return 0;
}

// The .run `repair NAME` restores from: --from, else the file it was installed from (its install
// record), else NAME.run in the current directory.
std::string repair_source(const Options& o, const inst::InstallTree& tree,
                          const std::string& name) {
    if (!o.from.empty())
        return o.from;
    try {
        if (auto dir = inst::open_dir_beneath(tree.ai_core(), name)) {
            auto rec = inst::read_install_record(*dir);
            if (!rec.from.empty() && ::access(rec.from.c_str(), R_OK) == 0)
                return rec.from;
        }
    } catch (const Error&) {
    }
    return name + ".run";
}

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

json uninstall_json(const inst::UninstallResult& r) {
    return {{"name", r.name},
            {"version", r.version},
            {"old_version", r.version},
            {"action", r.action},
            {"changed", true}};
}

int dry_run_uninstall(const Options& o, skforge::support::Log& log) {
    std::optional<inst::TreeLock> lock;
    auto tree = open_for_dry_run(o, log, lock);
    if (!tree)
        throw Error("nothing is installed under '" + inst::choose_install_path(o.install_path) +
                    "'");
    auto names = uninstall_names(o, *tree, log);
    json out = json::array();
    for (const auto& n : names)
        out.push_back(uninstall_json(inst::uninstall_package(
            *tree, n, o.force ? inst::Force::yes : inst::Force::no, log, inst::Act::dry_run)));
    print_dry_run(o, out);
    return 0;
}

int cmd_uninstall(const Options& o) {
    if (o.args.empty() == !o.all)
        throw Error("name the packages to uninstall, or --all", ErrorKind::usage);
    auto log = console(o);
    if (o.dry_run)
        return dry_run_uninstall(o, log);
    Mutating m(o, log, inst::Create::no);
    auto names = uninstall_names(o, m.tree, log);
    json out = json::array();
    std::vector<json> lines;
    auto record_done = [&] { record(m.tree, o, lines, log); };
    try {
        for (const auto& n : names) {
            auto r = inst::uninstall_package(m.tree, n,
                                             o.force ? inst::Force::yes : inst::Force::no, log);
            out.push_back(uninstall_json(r));
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

json damaged_json(const std::string& name, const std::string& why) {
    return {
        {"name", name}, {"status", "damaged"}, {"problem", why}, {"fix", inst::repair_hint(name)}};
}

// Every key where one package's kernel hides another's, for `list --conflicts`.
json conflicts_json(const inst::InstallTree& tree, skforge::support::Log& log) {
    std::vector<std::string> skipped;
    auto uses = inst::key_uses(inst::installed_indexes(tree, tree.install_order(), skipped));
    for (const auto& s : skipped)
        log.warn(s);
    json out = json::array();
    for (const auto& u : inst::shadowed_keys(uses)) {
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

// The installed packages in install order; a damaged one says what is wrong and the fix.
json packages_json(const inst::InstallTree& tree) {
    json out = json::array();
    for (const auto& name : tree.install_order()) {
        auto pd = inst::classify_package_dir(tree, name, true);
        if (pd.state == inst::DirState::vendor) {
            out.push_back({{"name", name},
                           {"status", "vendor"},
                           {"problem", pd.why},
                           {"path", tree.shown() + "/" + name}});
            continue;
        }
        if (pd.state != inst::DirState::installed) {
            out.push_back(damaged_json(
                name, pd.state == inst::DirState::absent ? "its directory is missing" : pd.why));
            continue;
        }
        const auto& m = *pd.manifest;
        out.push_back({{"name", name},
                       {"status", "installed"},
                       {"version", m.version},
                       {"npu_arch", m.npu_arch},
                       {"soc_version", m.soc_version},
                       {"files", m.entries.size()},
                       {"bytes", m.unpacked_size()},
                       {"path", tree.shown() + "/" + name}});
    }
    return out;
}

void print_conflicts(const json& conflicts) {
    if (conflicts.empty())
        std::cout << "no kernel of one package hides another's\n";
    for (const auto& c : conflicts) {
        std::string hidden;
        for (const auto& h : c["hidden"])
            hidden += (hidden.empty() ? "" : ", ") + h["package"].get<std::string>();
        print_safe("%s %s %s: %s wins, hiding %s\n", c["soc"].get<std::string>().c_str(),
                   c["op"].get<std::string>().c_str(), c["key"].get<std::string>().c_str(),
                   c["winner"].get<std::string>().c_str(), hidden.c_str());
    }
}

void print_packages(const json& packages) {
    if (packages.empty())
        std::cout << "no static-kernel packages installed\n";
    for (const auto& p : packages) {
        if (p["status"] == "vendor") {
            print_safe("%-32s CANN's own package (not installed by skforge; kept as it is)\n",
                       p["name"].get<std::string>().c_str());
            continue;
        }
        if (p["status"] == "damaged") {
            print_safe("%-32s DAMAGED: %s\n%-32s   %s\n", p["name"].get<std::string>().c_str(),
                       p["problem"].get<std::string>().c_str(), "",
                       p["fix"].get<std::string>().c_str());
            continue;
        }
        print_safe("%-32s %-16s %-10s %-16s %6zu files %12llu bytes\n",
                   p["name"].get<std::string>().c_str(), p["version"].get<std::string>().c_str(),
                   p["npu_arch"].get<std::string>().c_str(),
                   p["soc_version"].get<std::string>().c_str(), p["files"].get<std::size_t>(),
                   static_cast<unsigned long long>(p["bytes"].get<std::uint64_t>()));
    }
}

int cmd_list(const Options& o) {
    auto log = console(o);
    auto tree = open_for_query(o);
    json out = json::array();
    if (tree) {
        inst::TreeLock lock(*tree, inst::LockMode::shared, lock_wait(o, log));
        out = o.conflicts ? conflicts_json(*tree, log) : packages_json(*tree);
    }
    if (o.json)
        print_json(out);
    else if (o.conflicts)
        print_conflicts(out);
    else
        print_packages(out);
    return 0;
}

// One package's verify result; a damaged package is one problem, never an abort.
json verify_one(const inst::InstallTree& tree, const std::string& n, bool listed, bool text,
                skforge::support::Progress* progress, std::size_t& problems, std::size_t& files) {
    auto pd = inst::classify_package_dir(tree, n, listed);
    if (pd.state == inst::DirState::absent)
        throw Error(n + " is not installed in '" + tree.shown() + "'");
    if (pd.state == inst::DirState::vendor) {
        // Nothing of skforge's to check it against; its index entries are in the global index,
        // which the tree check covers.
        if (text)
            print_safe("%s: not checked: %s\n", n.c_str(), pd.why.c_str());
        return {{"name", n},
                {"version", ""},
                {"files", 0},
                {"ok", true},
                {"vendor", true},
                {"detail", pd.why},
                {"problems", json::array()}};
    }
    if (pd.state != inst::DirState::installed) {
        std::string detail = pd.why + "; " + inst::repair_hint(n);
        if (text)
            print_safe("%s: damaged: %s\n", n.c_str(), detail.c_str());
        ++problems;
        return {{"name", n},
                {"version", ""},
                {"files", 0},
                {"ok", false},
                {"problems",
                 json::array({{{"path", ""}, {"problem", "damaged"}, {"detail", detail}}})}};
    }
    auto r = inst::check_installed(tree, n, progress);
    json pj = json::array();
    for (const auto& p : r.problems) {
        pj.push_back(
            {{"path", p.path}, {"problem", inst::problem_name(p.kind)}, {"detail", p.detail}});
        if (text)
            print_safe("%s: %s: %s%s%s\n", n.c_str(), p.path.c_str(),
                       std::string(inst::problem_name(p.kind)).c_str(),
                       p.detail.empty() ? "" : ": ", p.detail.c_str());
    }
    problems += r.problems.size();
    files += r.manifest.entries.size();
    return {{"name", n},
            {"version", r.manifest.version},
            {"files", r.manifest.entries.size()},
            {"ok", r.problems.empty()},
            {"problems", pj}};
}

int cmd_verify(const Options& o) {
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
    for (const auto& n : names) {
        bool listed = std::find(order.begin(), order.end(), n) != order.end();
        out.push_back(verify_one(*tree, n, listed, !o.json, progress_for(o, bar), problems, files));
    }
    if (o.args.empty()) {
        // Files in skforge's own directories that no package and no tree file explains.
        auto extra = inst::check_tree(*tree);
        json tj = json::array();
        for (const auto& p : extra) {
            tj.push_back({{"path", p.path}, {"problem", "unexpected"}, {"detail", p.detail}});
            if (!o.json)
                print_safe("tree: %s: unexpected: %s\n", p.path.c_str(), p.detail.c_str());
        }
        problems += extra.size();
        if (!extra.empty())
            out.push_back({{"name", ""}, {"tree", true}, {"ok", false}, {"problems", tj}});
    }
    if (o.json)
        print_json(out);
    else if (!o.quiet)
        print_safe("verified %zu package(s), %zu entries: %zu problem(s)\n", names.size(), files,
                   problems);
    return problems == 0 ? 0 : 1;
}

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

int cmd_files(const Options& o) {
    return with_package(o, [&](const inst::InstallTree& tree, const std::string& name,
                               const pkg::Manifest& m) {
        std::string root = tree.shown() + "/" + name;
        json files = json::array();
        for (const auto& e : m.entries)
            files.push_back({{"path", root + "/" + e.path},
                             {"type", pkg::entry_type_name(e.type)},
                             {"mode", pkg::format_mode(e.mode)},
                             {"size", e.size},
                             {"sha256", e.sha256}});
        if (o.json) {
            print_json({{"name", name}, {"version", m.version}, {"path", root}, {"files", files}});
            return 0;
        }
        print_safe("%s\n", root.c_str());
        for (const auto& f : files)
            print_safe("%s\n", f["path"].get<std::string>().c_str());
        print_safe("%s/%s\n", root.c_str(), std::string(pkg::k_manifest_path).c_str());
        return 0;
    });
}

std::string format_time(std::int64_t t) {
    return t == 0 ? "unknown" : inst::utc_time(t);
}

// Every kernel `name` provides, with whether the runtime loads it or another package's.
json package_kernels(const inst::InstallTree& tree, const std::string& name) {
    std::vector<std::string> skipped;
    auto uses = inst::key_uses(inst::installed_indexes(tree, tree.install_order(), skipped));
    json out = json::array();
    for (const auto& u : uses)
        for (const auto& [p, bin] : u.providers)
            if (p == name)
                out.push_back({{"soc", u.soc},
                               {"op", u.op},
                               {"key", u.key},
                               {"binPath", bin},
                               {"winner", u.winner()}});
    return out;
}

int cmd_info(const Options& o) {
    return with_package(o, [&](const inst::InstallTree& tree, const std::string& name,
                               const pkg::Manifest& m) {
        auto dir = inst::open_dir_beneath(tree.ai_core(), name);
        auto rec = inst::read_install_record(*dir);
        auto order = tree.install_order();
        json kernels = package_kernels(tree, name);
        json info = {{"name", name},
                     {"version", m.version},
                     {"npu_arch", m.npu_arch},
                     {"soc_version", m.soc_version},
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
        if (o.json) {
            print_json(info);
            return 0;
        }
        auto unknown = [](const std::string& s) { return s.empty() ? std::string("unknown") : s; };
        print_safe(
            "Name:           %s\nVersion:        %s\nNPU arch:       %s\nSoC:            %s\n"
            "Toolchain:      %s\nSignature:      %s\nSigner key id:  %s\n"
            "Installed at:   %s\nInstalled by:   %s\nInstalled from: %s\n"
            "Size:           %llu bytes\nFiles:          %zu\nPath:           %s\n"
            "Kernels:        %zu\n",
            name.c_str(), m.version.c_str(), m.npu_arch.c_str(), m.soc_version.c_str(),
            m.toolchain.c_str(), unknown(rec.signature).c_str(),
            rec.signer_key_id.empty() ? "none" : rec.signer_key_id.c_str(),
            format_time(rec.installed_at).c_str(), unknown(rec.installed_by).c_str(),
            unknown(rec.from).c_str(), static_cast<unsigned long long>(m.unpacked_size()),
            m.entries.size(), info["path"].get<std::string>().c_str(), kernels.size());
        for (const auto& k : kernels) {
            std::string who =
                k["winner"] == name ? "loaded" : "hidden by " + k["winner"].get<std::string>();
            print_safe("  %s %s %s: %s (%s)\n", k["soc"].get<std::string>().c_str(),
                       k["op"].get<std::string>().c_str(), k["key"].get<std::string>().c_str(),
                       k["binPath"].get<std::string>().c_str(), who.c_str());
        }
        return 0;
    });
}

// PATH as given (absolute under the tree, or relative to ai_core/ as an index's binPath), as a
// path relative to ai_core/; throws a usage error for a path outside the tree.
std::string tree_relative(const inst::InstallTree& tree, const std::string& given_root,
                          std::string path) {
    for (const auto& prefix :
         {tree.shown() + "/", tree.resolved_root() + "/opp/static_kernel/ai_core/"})
        if (path.starts_with(prefix)) {
            path = path.substr(prefix.size());
            break;
        }
    while (path.ends_with("/"))
        path.pop_back();
    if (path.starts_with("/") || pkg::check_entry_path(path))
        throw Error("'" + path + "' is not a path under '" + given_root +
                        "/opp/static_kernel/ai_core' (give it in full, or relative to ai_core/ "
                        "as an index's binPath is)",
                    ErrorKind::usage);
    return path;
}

json key_use_json(const inst::KeyUse& u) {
    json providers = json::array();
    for (const auto& [p, bin] : u.providers)
        providers.push_back({{"package", p}, {"binPath", bin}});
    return {{"soc", u.soc},
            {"op", u.op},
            {"key", u.key},
            {"winner", u.winner()},
            {"providers", providers}};
}

// "  <soc> <op> <key>: <winner> wins (<binPath>); hides <a>, <b>" per key.
void print_key_uses(const json& kernels) {
    for (const auto& k : kernels) {
        std::string hidden;
        const auto& ps = k["providers"];
        for (std::size_t i = 0; i + 1 < ps.size(); ++i)
            hidden += (hidden.empty() ? "" : ", ") + ps[i]["package"].get<std::string>();
        print_safe("  %s %s %s: %s wins (%s)%s\n", k["soc"].get<std::string>().c_str(),
                   k["op"].get<std::string>().c_str(), k["key"].get<std::string>().c_str(),
                   k["winner"].get<std::string>().c_str(),
                   ps.back()["binPath"].get<std::string>().c_str(),
                   hidden.empty() ? "" : ("; hides " + hidden).c_str());
    }
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
        rel = tree_relative(*tree, given, o.args.front());
        owner = inst::owner_of(*tree, rel);
        for (const auto& u : uses)
            for (const auto& pb : u.providers)
                if (pb.second == rel)
                    kernels.push_back(key_use_json(u));
    } else {
        for (const auto& u : uses)
            if (u.key == o.key)
                kernels.push_back(key_use_json(u));
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
        print_key_uses(kernels);
    }
    return found ? 0 : 1;
}

// One history line as text: TIME USER ACTION PACKAGE OLD -> NEW RESULT[: detail]  [command].
// Each field is one printable line: a field with a newline cannot forge another history line.
std::string history_text(const json& l) {
    auto s = [&](const char* k) {
        return l.contains(k) && l[k].is_string()
                   ? skforge::support::printable(l[k].get<std::string>())
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
            print_safe("%s\n", history_text(e.line).c_str());
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

// The package names the .run files in `dir` hold (their headers; the stem when unreadable).
std::vector<std::string> run_names(const std::string& dir, skforge::support::Log& log) {
    std::vector<std::string> names;
    inst::Dir d{skforge::support::open_read(dir), dir};
    for (const auto& name : inst::list_dir(d)) {
        auto st = inst::stat_at(d, name);
        if (!st || !S_ISREG(st->st_mode) || name.size() <= 4 || !name.ends_with(".run"))
            continue;
        try {
            names.push_back(pkg::RunPackage(dir + "/" + name).header().name);
        } catch (const Error& e) {
            log.warn(std::string("cannot read the package name of ") + e.what() +
                     "; using the file's stem");
            names.push_back(name.substr(0, name.size() - 4));
        }
    }
    return names;
}

void refuse_candidate(skforge::support::Log& log, const std::string& c, const std::string& why) {
    log.warn("refusing unrelated or redirected uninstall script: " + c + " (" + why + ")");
}

void already_removed(skforge::support::Log& log, const std::string& c, const std::string& stem) {
    log.info(stem + " is already removed (" + c + " is gone); nothing to do");
}

// One candidate whose text passed: the disk checks through handles (no symlink below the root,
// a regular uninstall.sh at its expected resolved path), then the uninstall. A package already
// gone is said so, not warned about: a retried cleanup is quiet.
void cleanup_candidate(const Options& o, const inst::InstallTree& tree, const std::string& c,
                       const std::string& stem, skforge::support::Log& log) {
    auto pkg_dir = inst::open_dir_beneath(tree.ai_core(), stem);
    if (!pkg_dir)
        return already_removed(log, c, stem);
    auto st = inst::stat_at(*pkg_dir, "uninstall.sh");
    if (!st && inst::classify_package_dir(tree, stem, false).state == inst::DirState::left_behind) {
        already_removed(log, c, stem);
        return log.warn("'" + pkg_dir->path + "' holds what its uninstall kept; 'skinstall " +
                        "uninstall --force " + stem + "' removes it");
    }
    char buf[PATH_MAX];
    std::string expect =
        tree.resolved_root() + "/opp/static_kernel/ai_core/" + stem + "/uninstall.sh";
    if (!st || !S_ISREG(st->st_mode) || ::realpath(c.c_str(), buf) == nullptr || expect != buf)
        return refuse_candidate(log, c, "not a regular file at its expected resolved path");
    tree.require_writable();
    inst::TreeLock lock(tree, inst::LockMode::exclusive, lock_wait(o, log));
    inst::recover(tree, log);
    auto r = inst::uninstall_package(tree, stem, o.force ? inst::Force::yes : inst::Force::no, log);
    record(tree, o, {inst::history_line(o.command_line, r.name, r.version, "", r.action, "ok")},
           log);
}

int cmd_cleanup(const Options& o) {
    if (o.args.size() != 1 || o.outputs.empty())
        throw Error("usage: skinstall cleanup-from-log LOG --outputs DIR", ErrorKind::usage);
    auto log = console(o);
    std::string text = skforge::support::read_file(o.args.front());
    auto stems = run_names(o.outputs, log);
    std::string given = inst::choose_install_path(o.install_path);
    auto tree = inst::InstallTree::open(given, inst::Create::no);
    char buf[PATH_MAX];
    std::string resolved = tree                             ? tree->resolved_root()
                           : ::realpath(given.c_str(), buf) ? std::string(buf)
                                                            : given;
    // The paths skinstall and install.sh print are absolute (a relative --install-path joined
    // to the job's working directory, or resolved); both forms are accepted.
    std::string absolute = inst::absolute_install_path(given, resolved);
    for (const auto& c : inst::uninstall_candidates(text)) {
        std::string stem;
        std::string why = inst::check_candidate_text(c, absolute, resolved, stems, stem);
        if (!why.empty()) {
            refuse_candidate(log, c, why);
            continue;
        }
        if (!tree) {
            already_removed(log, c, stem); // the whole tree is gone
            continue;
        }
        try {
            cleanup_candidate(o, *tree, c, stem, log);
        } catch (const Error& e) {
            if (std::string(e.what()).starts_with("refusing '"))
                refuse_candidate(log, c, e.what());
            else
                log.warn("uninstall of " + stem + " failed: " + e.what());
        }
    }
    return 0;
}

// ---- options: each subcommand takes only the options that mean something to it ----

using Adder = std::function<void(po::options_description&, Options&)>;

const std::map<std::string, Adder>& option_table() {
    static const std::map<std::string, Adder> table = {
        {"trusted-key",
         [](auto& d, auto& o) {
             d.add_options()("trusted-key", po::value(&o.trusted_keys)->composing(),
                             "PUB.pem: a trusted signing key (repeatable); a signed package must "
                             "be signed by one");
         }},
        {"require-signature",
         [](auto& d, auto& o) {
             d.add_options()("require-signature", po::bool_switch(&o.require_signature),
                             "refuse packages not signed by a --trusted-key");
         }},
        {"quiet",
         [](auto& d, auto& o) {
             d.add_options()("quiet,q", po::bool_switch(&o.quiet),
                             "print only warnings and errors");
         }},
        {"json",
         [](auto& d, auto& o) {
             d.add_options()("json", po::bool_switch(&o.json),
                             "print the result as JSON on stdout (messages go to stderr)");
         }},
        {"force",
         [](auto& d, auto& o) {
             d.add_options()("force", po::bool_switch(&o.force),
                             "remove changed files too; remove a damaged package or what an "
                             "uninstall left behind whole");
         }},
        {"all",
         [](auto& d, auto& o) {
             d.add_options()("all", po::bool_switch(&o.all),
                             "every installed package, newest first");
         }},
        {"reinstall",
         [](auto& d, auto& o) {
             d.add_options()("reinstall", po::bool_switch(&o.reinstall),
                             "replace the installed files with the package's, same version only "
                             "(repairs a damaged package)");
         }},
        {"allow-downgrade",
         [](auto& d, auto& o) {
             d.add_options()("allow-downgrade", po::bool_switch(&o.allow_downgrade),
                             "let upgrade replace a newer installed version");
         }},
        {"from",
         [](auto& d, auto& o) {
             d.add_options()("from", po::value(&o.from),
                             "X.run to restore from (default: the .run it was installed from, "
                             "else NAME.run here)");
         }},
        {"key",
         [](auto& d, auto& o) {
             d.add_options()("key", po::value(&o.key),
                             "a kernel key (simplifiedKey): which package's kernel wins for it");
         }},
        {"conflicts",
         [](auto& d, auto& o) {
             d.add_options()("conflicts", po::bool_switch(&o.conflicts),
                             "list the keys where one package's kernel hides another's");
         }},
        {"install-for-all",
         [](auto& d, auto& o) {
             d.add_options()("install-for-all", po::bool_switch(&o.install_for_all),
                             "as a user other than root, let every user read the package "
                             "(directories 0775, files 0644/0755 instead of 0770, 0640/0750); "
                             "root installs are always for all");
         }},
        {"outputs",
         [](auto& d, auto& o) {
             d.add_options()("outputs", po::value(&o.outputs),
                             "DIR: the compile outputs whose .run packages may be uninstalled");
         }},
        {"lock-timeout",
         [](auto& d, auto& o) {
             d.add_options()("lock-timeout", po::value<double>()->notifier([&o](double v) {
                 if (v < 0)
                     throw Error("--lock-timeout must be 0 or more seconds", ErrorKind::usage);
                 o.lock_timeout = v;
             }),
                             "SECONDS: give up (exit 1) when another skinstall holds the lock "
                             "longer (default: wait)");
         }},
        {"dry-run",
         [](auto& d, auto& o) {
             d.add_options()("dry-run,n", po::bool_switch(&o.dry_run),
                             "check everything and say what would be done; change nothing "
                             "(like dpkg --dry-run)");
         }},
        {"log-file",
         [](auto& d, auto& o) {
             d.add_options()("log-file", po::value(&o.log_file),
                             "FILE: also append each history line there (e.g. a site's "
                             "system install log)");
         }},
    };
    return table;
}

// What a command's positional arguments are: package names are checked by the manifest's rule
// before the command does anything.
enum class Args { other, package_names };

struct Spec {
    const char* name;
    const char* args; ///< positional arguments, for the usage line
    const char* help;
    std::vector<const char*> options;
    std::function<int(const Options&)> run;
    Args kind = Args::other;
};

const std::vector<const char*> k_install_opts = {
    "trusted-key", "require-signature", "reinstall", "json",           "quiet",
    "dry-run",     "lock-timeout",      "log-file",  "install-for-all"};

std::vector<const char*> with(std::vector<const char*> base, std::vector<const char*> more) {
    base.insert(base.end(), more.begin(), more.end());
    return base;
}

const std::vector<Spec>& specs() {
    static const std::vector<Spec> table = {
        {"install", "X.run...", "install packages (refuses a different installed version)",
         k_install_opts,
         [](const Options& o) { return cmd_install(o, inst::InstallMode::install); }},
        {"upgrade", "X.run...",
         "install packages or replace older installed versions (says what it replaced)",
         with(k_install_opts, {"allow-downgrade"}),
         [](const Options& o) { return cmd_install(o, inst::InstallMode::upgrade); }},
        {"repair",
         "NAME",
         "restore an installed (or damaged) package's files from its .run",
         {"from", "trusted-key", "require-signature", "json", "quiet", "lock-timeout", "log-file",
          "install-for-all"},
         cmd_repair,
         Args::package_names},
        {"uninstall",
         "NAME... | --all",
         "remove packages",
         {"all", "force", "json", "quiet", "dry-run", "lock-timeout", "log-file"},
         cmd_uninstall,
         Args::package_names},
        {"list",
         "",
         "installed packages in install order (damaged ones marked)",
         {"json", "conflicts", "lock-timeout"},
         cmd_list},
        {"verify",
         "[NAME...]",
         "check installed files against their manifests, like rpm -V",
         {"json", "quiet", "lock-timeout"},
         cmd_verify,
         Args::package_names},
        {"files",
         "NAME",
         "the files of an installed package, like dpkg -L",
         {"json", "lock-timeout"},
         cmd_files,
         Args::package_names},
        {"owner",
         "PATH | --key KEY",
         "the package a file belongs to and whose kernel wins for a key, like dpkg -S",
         {"key", "json", "lock-timeout"},
         cmd_owner},
        {"info",
         "NAME",
         "version, SoC, signer, installation time and user, size, kernels",
         {"json", "lock-timeout"},
         cmd_info,
         Args::package_names},
        {"history",
         "",
         "what skinstall changed in this tree, oldest first",
         {"json", "lock-timeout"},
         cmd_history},
        {"recover",
         "",
         "finish or roll back an interrupted transaction",
         {"quiet", "lock-timeout", "log-file"},
         cmd_recover},
        {"cleanup-from-log",
         "LOG --outputs DIR",
         "uninstall what a compile job's log installed",
         {"outputs", "force", "quiet", "lock-timeout", "log-file"},
         cmd_cleanup},
    };
    return table;
}

constexpr const char* k_exit_codes =
    "Exit status: 0 success (verify: no problem; owner: an owner was found), 1 failure or\n"
    "refusal (nothing changed unless the message says otherwise; verify: problems found; owner:\n"
    "no owner; a --lock-timeout that expired), 2 usage error.";

void print_help(const Spec& s, const po::options_description& desc) {
    std::printf("Usage: skinstall %s %s [options]\n%s.\n\n", s.name, s.args, s.help);
    std::cout << desc << "\n" << k_exit_codes << "\nSee installer.md in /usr/share/doc/skforge/.\n";
}

std::string shell_quote(const std::string& a) {
    if (!a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789-_./=:+,@%") == std::string::npos)
        return a;
    std::string q = "'";
    for (char c : a)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// Every name and path-like value on the command line, checked before any work: a refusal (exit 2)
// leaves the tree and its history untouched.
void check_arguments(const Spec& s, const Options& o, const po::variables_map& vm) {
    if (s.kind == Args::package_names)
        for (const auto& a : o.args)
            inst::require_package_name(a);
    if (vm.count("log-file"))
        if (auto why = inst::log_file_problem(o.log_file))
            throw Error("--log-file '" + o.log_file + "' " + *why, ErrorKind::usage);
    if (vm.count("from"))
        skforge::cli::require_input_file("--from", o.from);
}

int run_spec(const Spec& s, const std::vector<std::string>& args) {
    Options o;
    po::options_description desc("Options");
    desc.add_options()("install-path", po::value(&o.install_path),
                       "PATH: the toolkit root (default $ASCEND_HOME_PATH)")(
        "help,h", po::bool_switch(), "this help");
    for (const char* name : s.options)
        option_table().at(name)(desc, o);
    po::options_description all = desc;
    all.add_options()("args", po::value(&o.args));
    po::positional_options_description pos;
    pos.add("args", -1);
    po::variables_map vm;
    po::store(skforge::cli::parse_options(args, all, pos), vm);
    if (vm.count("help") && vm["help"].as<bool>()) {
        print_help(s, desc);
        return 0;
    }
    po::notify(vm);
    check_arguments(s, o, vm);
    o.command_line = std::string("skinstall ") + s.name;
    for (const auto& a : args)
        o.command_line += " " + shell_quote(a);
    return s.run(o);
}

const std::vector<skforge::cli::Command>& commands() {
    static const std::vector<skforge::cli::Command> table = [] {
        std::vector<skforge::cli::Command> t;
        for (const auto& s : specs())
            t.push_back({s.name, s.help,
                         [&s](const std::vector<std::string>& a) { return run_spec(s, a); }});
        return t;
    }();
    return table;
}

constexpr const char* k_footer =
    "Every command takes --install-path PATH (default $ASCEND_HOME_PATH) and --help.\n"
    "Exit status: 0 success, 1 failure or refusal, 2 usage error. See installer.md in "
    "/usr/share/doc/skforge/.";

} // namespace

int main(int argc, char** argv) {
    return skforge::cli::run_main("skinstall", argc, argv, commands(), k_footer);
}
