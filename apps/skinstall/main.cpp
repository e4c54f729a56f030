// SPDX-License-Identifier: Apache-2.0
// skinstall: installs and removes static-kernel packages under
// <install-path>/opp/static_kernel/ai_core/. Each subcommand declares the options it takes; they
// become a plain struct (commands.hpp); the commands call the library (commands.cpp); errors are
// caught once in run_main (exit 0 ok, 1 failure, 2 usage).
#include "../common/cli_main.hpp"
#include "commands.hpp"
#include "skforge/install/history.hpp"
#include "skforge/install/query.hpp"
#include "skforge/support/error.hpp"

#include <boost/program_options.hpp>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>

namespace po = boost::program_options;
namespace inst = skforge::install;
using skforge::support::Error;
using skforge::support::ErrorKind;

using namespace skforge::skinstall;

namespace {

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
                             "uninstall left behind whole; remove a package running processes "
                             "hold");
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
        // explain and doctor
        {"call",
         [](auto& d, auto& o) {
             d.add_options()("op-type", po::value(&o.op_type),
                             "OP: explain a call of OP given by --tensor (instead of a dump "
                             "JSON)")("tensor", po::value(&o.tensors)->composing(),
                                      "DTYPE:FORMAT:DIMS[:VIEW_DIMS[:STRIDES[:OFFSET]]]: a "
                                      "tensor of the call, inputs then outputs (repeatable)")(
                 "deterministic", po::bool_switch(&o.deterministic), "the call is deterministic")(
                 "impl-mode", po::value(&o.impl_mode),
                 "high_performance|high_precision: the op-kernel engine's (default "
                 "high_precision)")("cores", po::value(&o.cores),
                                    "AIC,AIV: the device's cube and vector cores, matched "
                                    "against platformInfo (default: the --soc's when known)");
         }},
        {"soc",
         [](auto& d, auto& o) {
             d.add_options()("soc", po::value(&o.soc),
                             "SOC: the host's SoC (Ascend910B1) or SoC directory (ascend910b)");
         }},
        {"cann-version",
         [](auto& d, auto& o) {
             d.add_options()("cann-version", po::value(&o.cann_version),
                             "V: this host's CANN release (9.1.0), checked against each "
                             "package's stamp (default: the Version= of $ASCEND_HOME_PATH's "
                             "compiler/version.info, else version.info)");
         }},
        {"ignore-cann-version",
         [](auto& d, auto& o) {
             d.add_options()("ignore-cann-version", po::bool_switch(&o.ignore_cann_version),
                             "install a package built for another CANN line than this host's "
                             "anyway (a warning; the history records it)");
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
        {"fix",
         [](auto& d, auto& o) {
             d.add_options()(
                 "fix", po::bool_switch(&o.fix),
                 "under the lock, after recover: rebuild the global indexes and the "
                 "per-key record when they are not the full merge, and restore "
                 "packages whose files differ from the .run they were installed from "
                 "(repair's checks); report what is left and the command that fixes it");
         }},
        {"dry-run",
         [](auto& d, auto& o) {
             d.add_options()("dry-run,n", po::bool_switch(&o.dry_run),
                             "check everything and say what would be done; change nothing "
                             "(like dpkg --dry-run)");
         }},
        {"holder",
         [](auto& d, auto& o) {
             d.add_options()("holder", po::value(&o.holder),
                             "PID[:START]: act for that process (installer.md, \"Lifecycle\"): "
                             "install holds the packages for it; uninstall releases its hold and "
                             "removes a package only when no running process holds it and it is "
                             "not an operator's install (0: for a process that is gone)");
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
    "trusted-key",        "require-signature", "reinstall",       "json",   "quiet", "dry-run",
    "lock-timeout",       "log-file",          "install-for-all", "holder", "soc",   "cann-version",
    "ignore-cann-version"};

std::vector<const char*> with(std::vector<const char*> base, std::vector<const char*> more) {
    base.insert(base.end(), more.begin(), more.end());
    return base;
}

const std::vector<Spec>& specs() {
    static const std::vector<Spec> table = {
        {"install", "X.run...",
         "install packages, skforge's or CANN's makeself .run (refuses a different installed "
         "version)",
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
         {"all", "force", "json", "quiet", "dry-run", "lock-timeout", "log-file", "holder"},
         cmd_uninstall,
         Args::package_names},
        {"gc",
         "",
         "remove the packages installed for processes that are all gone (never an operator's)",
         {"json", "quiet", "dry-run", "lock-timeout", "log-file"},
         cmd_gc},
        {"list",
         "",
         "installed packages in install order (damaged ones marked)",
         {"json", "conflicts", "lock-timeout"},
         cmd_list},
        {"verify",
         "[NAME...]",
         "check installed files against their manifests, like rpm -V; --fix repairs",
         {"json", "quiet", "lock-timeout", "fix", "dry-run", "trusted-key", "require-signature",
          "install-for-all", "log-file"},
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
        {"explain",
         "[DUMP.json|DIR...]",
         "which installed kernel each CANN line's runtime finds for an operator call, or why none",
         {"call", "soc", "json", "lock-timeout"},
         cmd_explain},
        {"doctor",
         "",
         "what CANN's runtime will see of this tree; exit 1 when it would miss a kernel",
         {"soc", "cann-version", "json", "quiet", "lock-timeout"},
         cmd_doctor},
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
    "Exit status: 0 success (verify: no problem, with --fix none left; owner: an owner was\n"
    "found), 1 failure or refusal (nothing changed unless the message says otherwise; verify:\n"
    "problems found, with --fix some left; owner: no owner; a --lock-timeout that expired),\n"
    "2 usage error.";

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
