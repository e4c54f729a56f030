// skinstall: installs and removes static-kernel packages under
// <install-path>/opp/static_kernel/ai_core/. Options become a plain struct; the library does the
// work; errors are caught once here (exit 0 ok, 1 failure, 2 usage).
#include "../common/cli_main.hpp"
#include "skforge/install/cleanup_log.hpp"
#include "skforge/install/layout.hpp"
#include "skforge/install/query.hpp"
#include "skforge/install/transaction.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"

#include <boost/program_options.hpp>
#include <climits>
#include <clocale>
#include <cstdio>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>

namespace po = boost::program_options;
namespace inst = skforge::install;
namespace pkg = skforge::package;
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
    std::string outputs;
    std::vector<std::string> args;
};

inst::Policy make_policy(const Options& o) {
    inst::Policy p;
    for (const auto& k : o.trusted_keys)
        p.trusted.push_back(pkg::Key::load_public(k));
    p.require_signature = o.require_signature;
    if (p.require_signature && p.trusted.empty())
        throw Error("--require-signature needs at least one --trusted-key", ErrorKind::usage);
    return p;
}

// Opens the tree for a mutating command, takes the lock and finishes any interrupted work.
struct Mutating {
    inst::InstallTree tree;
    inst::TreeLock lock;
    Mutating(const Options& o, skforge::support::Log& log)
        : tree(*inst::InstallTree::open(inst::choose_install_path(o.install_path),
                                        inst::Create::yes)),
          lock(tree, inst::LockMode::exclusive) {
        inst::recover(tree, log);
    }
};

int cmd_install(const Options& o, inst::InstallMode mode) {
    if (o.args.empty())
        throw Error("name at least one .run package", ErrorKind::usage);
    skforge::cli::ConsoleLog log(o.quiet);
    auto policy = make_policy(o);
    // Every package is verified before anything is written.
    std::vector<inst::VerifiedPackage> pkgs;
    for (const auto& a : o.args)
        pkgs.push_back(inst::verify_package(a, policy));
    std::string given = inst::choose_install_path(o.install_path);
    for (const auto& p : pkgs)
        if (p.signature == pkg::SignatureState::not_checked)
            log.warn(p.run->path() +
                     " is signed but its signature was not checked (no --trusted-key)");
    Mutating m(o, log);
    inst::install_packages(m.tree, pkgs, mode, policy, log);
    for (const auto& p : pkgs)
        log.info("uninstall with: " + given + "/opp/static_kernel/ai_core/" + p.manifest.name +
                 "/uninstall.sh");
    return 0;
}

int cmd_uninstall(const Options& o) {
    if (o.args.empty() == !o.all)
        throw Error("name the packages to uninstall, or --all", ErrorKind::usage);
    skforge::cli::ConsoleLog log(o.quiet);
    auto tree =
        inst::InstallTree::open(inst::choose_install_path(o.install_path), inst::Create::no);
    if (!tree)
        throw Error("nothing is installed under '" + inst::choose_install_path(o.install_path) +
                    "'");
    inst::TreeLock lock(*tree, inst::LockMode::exclusive);
    inst::recover(*tree, log);
    std::vector<std::string> names = o.args;
    if (o.all) {
        names = tree->install_order();
        std::reverse(names.begin(), names.end());
    }
    for (const auto& n : names)
        inst::uninstall_package(*tree, n, o.force ? inst::Force::yes : inst::Force::no, log);
    return 0;
}

int cmd_list(const Options& o) {
    auto tree =
        inst::InstallTree::open(inst::choose_install_path(o.install_path), inst::Create::no);
    nlohmann::json out = nlohmann::json::array();
    if (tree) {
        inst::TreeLock lock(*tree, inst::LockMode::shared);
        for (const auto& name : tree->install_order()) {
            auto m = inst::read_installed_manifest(*tree, name);
            if (!m)
                throw Error("config.ini lists '" + name +
                            "' but it is not installed; run 'skinstall recover'");
            out.push_back({{"name", name},
                           {"version", m->version},
                           {"npu_arch", m->npu_arch},
                           {"soc_version", m->soc_version},
                           {"files", m->entries.size()},
                           {"bytes", m->unpacked_size()},
                           {"path", tree->shown() + "/" + name}});
        }
    }
    if (o.json) {
        std::cout << out.dump(2) << "\n";
    } else if (out.empty()) {
        std::cout << "no static-kernel packages installed\n";
    } else {
        for (const auto& p : out)
            std::printf("%-32s %-16s %-10s %-16s %6zu files %12llu bytes\n",
                        p["name"].get<std::string>().c_str(),
                        p["version"].get<std::string>().c_str(),
                        p["npu_arch"].get<std::string>().c_str(),
                        p["soc_version"].get<std::string>().c_str(), p["files"].get<std::size_t>(),
                        static_cast<unsigned long long>(p["bytes"].get<std::uint64_t>()));
    }
    return 0;
}

int cmd_verify(const Options& o) {
    auto tree =
        inst::InstallTree::open(inst::choose_install_path(o.install_path), inst::Create::no);
    if (!tree) {
        if (!o.args.empty())
            throw Error(o.args.front() + " is not installed");
        std::cout << (o.json ? "[]\n" : "no static-kernel packages installed\n");
        return 0;
    }
    inst::TreeLock lock(*tree, inst::LockMode::shared);
    auto names = o.args.empty() ? tree->install_order() : o.args;
    nlohmann::json out = nlohmann::json::array();
    std::size_t problems = 0, files = 0;
    for (const auto& n : names) {
        auto r = inst::check_installed(*tree, n);
        nlohmann::json pj = nlohmann::json::array();
        for (const auto& p : r.problems) {
            pj.push_back(
                {{"path", p.path}, {"problem", inst::problem_name(p.kind)}, {"detail", p.detail}});
            if (!o.json)
                std::printf("%s: %s: %s%s%s\n", n.c_str(), p.path.c_str(),
                            std::string(inst::problem_name(p.kind)).c_str(),
                            p.detail.empty() ? "" : ": ", p.detail.c_str());
        }
        problems += r.problems.size();
        files += r.manifest.entries.size();
        out.push_back({{"name", n},
                       {"version", r.manifest.version},
                       {"files", r.manifest.entries.size()},
                       {"ok", r.problems.empty()},
                       {"problems", pj}});
    }
    if (o.args.empty()) {
        // Files in skforge's own directories that no package and no tree file explains.
        auto extra = inst::check_tree(*tree);
        nlohmann::json tj = nlohmann::json::array();
        for (const auto& p : extra) {
            tj.push_back({{"path", p.path}, {"problem", "unexpected"}, {"detail", p.detail}});
            if (!o.json)
                std::printf("tree: %s: unexpected: %s\n", p.path.c_str(), p.detail.c_str());
        }
        problems += extra.size();
        if (!extra.empty())
            out.push_back({{"name", ""}, {"tree", true}, {"ok", false}, {"problems", tj}});
    }
    if (o.json)
        std::cout << out.dump(2) << "\n";
    else if (!o.quiet)
        std::printf("verified %zu package(s), %zu entries: %zu problem(s)\n", names.size(), files,
                    problems);
    return problems == 0 ? 0 : 1;
}

int cmd_recover(const Options& o) {
    skforge::cli::ConsoleLog log(o.quiet);
    auto tree =
        inst::InstallTree::open(inst::choose_install_path(o.install_path), inst::Create::yes);
    inst::TreeLock lock(*tree, inst::LockMode::exclusive);
    auto did = inst::recover(*tree, log);
    if (did == "nothing to recover")
        log.info(did);
    return 0;
}

std::vector<std::string> run_stems(const std::string& dir) {
    std::vector<std::string> stems;
    inst::Dir d{skforge::support::open_read(dir), dir};
    for (const auto& name : inst::list_dir(d)) {
        auto st = inst::stat_at(d, name);
        if (st && S_ISREG(st->st_mode) && name.size() > 4 && name.ends_with(".run"))
            stems.push_back(name.substr(0, name.size() - 4));
    }
    return stems;
}

int cmd_cleanup(const Options& o) {
    if (o.args.size() != 1 || o.outputs.empty())
        throw Error("usage: skinstall cleanup-from-log LOG --outputs DIR", ErrorKind::usage);
    skforge::cli::ConsoleLog log(o.quiet);
    std::string text = skforge::support::read_file(o.args.front());
    auto stems = run_stems(o.outputs);
    std::string given = inst::choose_install_path(o.install_path);
    auto tree = inst::InstallTree::open(given, inst::Create::no);
    auto refuse = [&](const std::string& c, const std::string& why) {
        log.warn("refusing unrelated or redirected uninstall script: " + c + " (" + why + ")");
    };
    for (const auto& c : inst::uninstall_candidates(text)) {
        std::string stem;
        std::string why =
            inst::check_candidate_text(c, given, tree ? tree->resolved_root() : given, stems, stem);
        if (why.empty() && !tree)
            why = "nothing is installed under the install path";
        if (!why.empty()) {
            refuse(c, why);
            continue;
        }
        try {
            // Disk checks through handles: no symlink below the root, a regular uninstall.sh,
            // and the resolved path identical to the expected one.
            auto pkg_dir = inst::open_dir_beneath(tree->ai_core(), stem);
            auto st = pkg_dir ? inst::stat_at(*pkg_dir, "uninstall.sh") : std::nullopt;
            char buf[PATH_MAX];
            std::string expect =
                tree->resolved_root() + "/opp/static_kernel/ai_core/" + stem + "/uninstall.sh";
            if (!st || !S_ISREG(st->st_mode) || ::realpath(c.c_str(), buf) == nullptr ||
                expect != buf) {
                refuse(c, "not a regular file at its expected resolved path");
                continue;
            }
            inst::TreeLock lock(*tree, inst::LockMode::exclusive);
            inst::recover(*tree, log);
            inst::uninstall_package(*tree, stem, o.force ? inst::Force::yes : inst::Force::no, log);
        } catch (const Error& e) {
            if (std::string(e.what()).starts_with("refusing '"))
                refuse(c, e.what());
            else
                log.warn("uninstall of " + stem + " failed: " + e.what());
        }
    }
    return 0;
}

Options parse(const std::vector<std::string>& args);

// Each command parses the shared option set, then runs.
template <class F> std::function<int(const std::vector<std::string>&)> with_options(F f) {
    return [f](const std::vector<std::string>& args) { return f(parse(args)); };
}

const std::vector<skforge::cli::Command>& commands() {
    static const std::vector<skforge::cli::Command> table = {
        {"install", "X.run...  install packages (refuses a different installed version)",
         with_options([](const Options& o) { return cmd_install(o, inst::InstallMode::install); })},
        {"upgrade", "X.run...  install or replace packages",
         with_options([](const Options& o) { return cmd_install(o, inst::InstallMode::upgrade); })},
        {"uninstall", "NAME... | --all [--force]  remove packages", with_options(cmd_uninstall)},
        {"list", "[--json]  installed packages in install order", with_options(cmd_list)},
        {"verify", "[NAME...] [--json]  check installed files against their manifests",
         with_options(cmd_verify)},
        {"recover", "finish or roll back an interrupted transaction", with_options(cmd_recover)},
        {"cleanup-from-log", "LOG --outputs DIR  uninstall what a compile job's log installed",
         with_options(cmd_cleanup)},
    };
    return table;
}

constexpr const char* k_footer =
    "Options: --install-path PATH (default $ASCEND_HOME_PATH), --trusted-key PUB.pem "
    "(repeatable),\n"
    "         --require-signature, --force, --all, --outputs DIR, --quiet, --json\n"
    "See share/doc/installer.md.";

Options parse(const std::vector<std::string>& args) {
    Options o;
    po::options_description desc;
    desc.add_options()("install-path", po::value(&o.install_path))(
        "trusted-key", po::value(&o.trusted_keys)->composing())(
        "require-signature", po::bool_switch(&o.require_signature))(
        "quiet,q", po::bool_switch(&o.quiet))("json", po::bool_switch(&o.json))(
        "force", po::bool_switch(&o.force))("all", po::bool_switch(&o.all))(
        "outputs", po::value(&o.outputs))("args", po::value(&o.args));
    po::positional_options_description pos;
    pos.add("args", -1);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
    po::notify(vm);
    return o;
}

} // namespace

int main(int argc, char** argv) {
    return skforge::cli::run_main("skinstall", argc, argv, commands(), k_footer);
}
