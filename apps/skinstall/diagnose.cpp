// SPDX-License-Identifier: Apache-2.0
// skinstall explain and doctor: what CANN's runtime finds in the tree (lib/install explain.hpp,
// doctor.hpp); this file turns options into the library's inputs and picks the exit status.
#include "../common/cli_main.hpp"
#include "commands.hpp"
#include "skforge/codegen/cann_release.hpp"
#include "skforge/install/doctor.hpp"
#include "skforge/install/explain.hpp"
#include "skforge/kernel/soc.hpp"
#include "skforge/package/json_text.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace inst = skforge::install;
namespace kernel = skforge::kernel;
using nlohmann::json;
using skforge::support::Error;
using skforge::support::ErrorKind;

namespace skforge::skinstall {

std::string soc_dir_option(const std::string& soc) {
    if (soc.empty())
        return "";
    if (kernel::is_soc_dir_name(soc)) // "ascend910b" the directory, not the SoC Ascend910B
        return soc;
    if (auto dir = kernel::soc_dir(soc))
        return std::string(*dir);
    if (soc.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos)
        return soc;
    throw Error("--soc '" + soc +
                    "' is neither a SoC directory (ascend910b) nor a SoC skforge "
                    "knows (Ascend910B1)",
                ErrorKind::usage);
}

namespace {

void print(const Options& o, const json& result, const std::vector<std::string>& lines) {
    if (o.json) {
        std::cout << package::json_text(result, 2) << "\n";
        return;
    }
    for (const auto& l : lines)
        skforge::cli::print_safe("%s\n", l.c_str());
}

// --soc: a SoC directory (ascend910b) or a SoC name (Ascend910B1).

// The device's cores: --cores AIC,AIV, else the SoC's platform_config counts when known.
std::optional<kernel::KernelPlatform> device_cores(const Options& o) {
    if (!o.cores.empty()) {
        auto t = inst::tensor_from_text("int8:ND:" + o.cores).storage_shape;
        if (t.size() != 2)
            throw Error("--cores '" + o.cores + "': give AIC,AIV (e.g. 24,48)", ErrorKind::usage);
        return kernel::KernelPlatform{static_cast<std::uint32_t>(t[0]),
                                      static_cast<std::uint32_t>(t[1])};
    }
    if (auto c = kernel::platform_core_counts(o.soc))
        return kernel::KernelPlatform{c->first, c->second};
    return std::nullopt;
}

std::string explain_soc(const Options& o, const inst::InstallTree& tree) {
    if (auto dir = soc_dir_option(o.soc); !dir.empty())
        return dir;
    auto socs = inst::index_soc_dirs(tree);
    if (socs.size() == 1)
        return socs.front();
    std::string list;
    for (const auto& s : socs)
        list += (list.empty() ? "" : ", ") + s;
    throw Error("give --soc: the tree has " +
                    (socs.empty() ? std::string("no SoC index") : "indexes for " + list),
                ErrorKind::usage);
}

// The calls: each dump JSON named (a directory: every *.json in it), or one from the options.
std::vector<std::pair<std::string, kernel::RuntimeCall>> explain_calls(const Options& o) {
    std::vector<std::pair<std::string, kernel::RuntimeCall>> calls;
    if (!o.op_type.empty()) {
        kernel::RuntimeCall c;
        c.op_type = o.op_type;
        for (const auto& t : o.tensors)
            c.tensors.push_back(inst::tensor_from_text(t));
        c.deterministic_level = o.deterministic ? 1 : 0;
        c.hostapi_impl_mode = inst::impl_mode_index(o.impl_mode);
        calls.emplace_back("--op-type " + o.op_type, std::move(c));
    }
    for (const auto& a : o.args) {
        std::vector<std::string> files;
        if (std::filesystem::is_directory(a)) {
            for (const auto& e : std::filesystem::directory_iterator(a))
                if (e.path().extension() == ".json")
                    files.push_back(e.path().string());
            std::sort(files.begin(), files.end());
        } else {
            files.push_back(a);
        }
        for (const auto& f : files) {
            auto j = json::parse(skforge::support::read_file(f, {64 << 20}), nullptr, false);
            if (j.is_discarded())
                throw Error(f + ": not JSON");
            calls.emplace_back(f, inst::call_from_dump(j, f));
        }
    }
    if (calls.empty())
        throw Error("explain: give DUMP.json, a directory of them, or --op-type with --tensor",
                    ErrorKind::usage);
    return calls;
}

} // namespace

int cmd_explain(const Options& o) {
    if (o.op_type.empty() && !o.tensors.empty())
        throw Error("--tensor goes with --op-type", ErrorKind::usage);
    auto calls = explain_calls(o);
    auto tree =
        inst::InstallTree::open(inst::choose_install_path(o.install_path), inst::Create::no);
    if (!tree)
        throw Error("nothing is installed under '" + inst::choose_install_path(o.install_path) +
                    "'");
    auto log = skforge::cli::ConsoleLog(o.quiet, o.json ? stderr : stdout);
    inst::TreeLock lock(*tree, inst::LockMode::shared, {o.lock_timeout, &log});
    auto index = inst::read_runtime_index(*tree, explain_soc(o, *tree));
    auto cores = device_cores(o);
    std::vector<json> explained;
    for (const auto& [where, call] : calls)
        explained.push_back(inst::explain_call(index, call, cores));
    const bool table =
        calls.size() > 1 || (!o.args.empty() && std::filesystem::is_directory(o.args[0]));
    if (table)
        print(o, {{"calls", explained}, {"table", inst::explain_table(explained)}},
              inst::explain_table_text(inst::explain_table(explained)));
    else
        print(o, explained.front(), inst::explain_text(explained.front()));
    return 0;
}

int cmd_doctor(const Options& o) {
    const char* home = std::getenv("ASCEND_HOME_PATH");
    const char* opp = std::getenv("ASCEND_OPP_PATH");
    inst::DoctorInput in;
    in.install_path = inst::choose_install_path(o.install_path);
    in.base_path = inst::runtime_base_path(home, opp);
    in.base_from = in.base_path.empty()         ? ""
                   : opp && in.base_path == opp ? "$ASCEND_OPP_PATH"
                                                : "$ASCEND_HOME_PATH/opp_latest";
    in.toolkit_root = home ? home : "";
    auto host = host_cann(o);
    if (!host.version.empty())
        in.toolkit_version = host.version;
    in.toolkit_from = host.version_from;
    in.soc_dir = soc_dir_option(o.soc);
    auto tree = inst::InstallTree::open(in.install_path, inst::Create::no);
    if (!tree)
        throw Error("nothing is installed under '" + in.install_path + "'");
    auto log = skforge::cli::ConsoleLog(o.quiet, o.json ? stderr : stdout);
    inst::TreeLock lock(*tree, inst::LockMode::shared, {o.lock_timeout, &log});
    auto r = inst::doctor(*tree, in);
    print(o, r, inst::doctor_text(r));
    return r["problems"].empty() ? 0 : 1;
}

} // namespace skforge::skinstall
