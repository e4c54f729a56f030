// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/doctor.hpp"

#include "skforge/install/cann_check.hpp"
#include "skforge/install/explain.hpp"
#include "skforge/install/query.hpp"
#include "skforge/install/report.hpp"
#include "skforge/install/safe_fs.hpp"
#include "skforge/kernel/runtime_key.hpp"
#include "skforge/kernel/soc.hpp"
#include "skforge/support/error.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>

namespace skforge::install {

using nlohmann::json;

namespace {

constexpr const char* k_mkdir_lock = "static_kernel.lock.d";

std::string real_path(const std::string& path) {
    char resolved[PATH_MAX];
    return ::realpath(path.c_str(), resolved) == nullptr ? std::string() : std::string(resolved);
}

void problem(json& r, std::string what, std::string fix) {
    r["problems"].push_back({{"problem", std::move(what)}, {"fix", std::move(fix)}});
}

// The base the runtime reads against the tree checked.
void check_base(json& r, const InstallTree& tree, const DoctorInput& in) {
    const std::string opp = in.install_path + "/opp";
    if (in.base_path.empty())
        return problem(r,
                       "the runtime has no base path (neither $ASCEND_HOME_PATH/opp_latest "
                       "nor $ASCEND_OPP_PATH): it reads no static kernels",
                       "export ASCEND_OPP_PATH=" + opp + " in the environment that runs the model");
    const std::string base = real_path(in.base_path);
    if (base.empty() || base != real_path(tree.resolved_root() + "/opp"))
        problem(r,
                "the runtime reads " + in.base_path + "/static_kernel/ai_core (from " +
                    in.base_from + "), not this tree (" + tree.shown() + ")",
                "install with --install-path pointing at the tree the runtime reads, or export "
                "ASCEND_OPP_PATH=" +
                    opp + " (and no $ASCEND_HOME_PATH/opp_latest)");
}

// Each package: the SoC it was built for against the host's.
void check_packages(json& r, const InstallTree& tree, const DoctorInput& in) {
    const HostCann host{in.toolkit_version.value_or(""), in.toolkit_from, in.soc_dir, "--soc"};
    for (const auto& name : tree.install_order()) {
        auto pd = classify_package_dir(tree, name, true);
        json p = {{"name", name},
                  {"state", pd.state == DirState::vendor ? "vendor"
                            : pd.manifest                ? "installed"
                                                         : "damaged"}};
        if (pd.manifest) {
            const auto& m = *pd.manifest;
            auto dir = kernel::soc_dir(m.soc_version);
            p["version"] = m.version;
            p["soc_version"] = m.soc_version;
            p["soc_dir"] = dir ? std::string(*dir) : std::string();
            p["cann_version"] = m.cann ? json(m.cann->version) : json(nullptr);
            p["cann_line"] = m.cann ? json(m.cann->line()) : json(nullptr);
            auto refusals = stamp_refusals(m, host);
            auto has = [&](StampRefusal::Kind k) {
                return std::any_of(refusals.begin(), refusals.end(),
                                   [&](const StampRefusal& x) { return x.kind == k; });
            };
            p["matches_soc"] =
                in.soc_dir.empty() || !dir ? json(nullptr) : json(!has(StampRefusal::Kind::soc));
            // not checked: no stamp, or no host release, or one that names no line
            p["matches_cann"] = !m.cann || !package::cann_line(host.version)
                                    ? json(nullptr)
                                    : json(!has(StampRefusal::Kind::release));
            for (const auto& x : refusals)
                problem(r, x.message,
                        x.kind == StampRefusal::Kind::soc
                            ? "install a build of " + name +
                                  " for this SoC, or skinstall "
                                  "uninstall " +
                                  name
                            : "rebuild " + name +
                                  " with this host's CANN (skc compile on it, or "
                                  "--cann-version " +
                                  package::cann_line(host.version).value_or(host.version) +
                                  "), or skinstall uninstall " + name);
            if (!m.cann)
                r["notes"].push_back("package " + name +
                                     " records no CANN release (built without a toolkit or "
                                     "by an older skforge): not checked against the toolkit");
        }
        r["packages"].push_back(std::move(p));
    }
}

// The host's index: readable, every entry taken, the run info the host's line needs.
void check_index(json& r, const InstallTree& tree, const DoctorInput& in,
                 const std::optional<kernel::CannLine>& line) {
    auto socs = index_soc_dirs(tree);
    r["soc_dirs"] = socs;
    std::vector<std::string> checked = in.soc_dir.empty() ? socs : std::vector{in.soc_dir};
    for (const auto& soc : checked) {
        auto index = read_runtime_index(tree, soc);
        if (!index.readable) {
            if (!tree.install_order().empty())
                problem(r, "the runtime cannot read " + index.path + ": " + index.why,
                        "skinstall verify --fix (rebuilds the global index from the packages)");
            continue;
        }
        for (const auto& s : index.skipped)
            problem(r, index.path + ": the runtime skips " + s,
                    "skinstall verify --fix; if it stays, rebuild the package that wrote it");
        if (!line)
            continue;
        // A kernel JSON without `runInfo` is no problem on any line: 9.0.x uses `runInfo` only
        // for MC2 operators, which op_compiler writes it for (opbase 9.0.0 94c65c3,
        // cann-conformance.md "opbase's rules per release"); a JSON the runtime cannot read is.
        for (const auto& e : index.entries)
            if (!e.json_read)
                problem(r, e.bin_path + ": the JSON beside the kernel cannot be read",
                        "skinstall verify --fix, or rebuild package " + e.package);
    }
}

bool process_alive(const std::string& pid_text) {
    char* end = nullptr;
    long pid = std::strtol(pid_text.c_str(), &end, 10);
    if (pid <= 0 || end == pid_text.c_str())
        return false;
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// The shell scripts' mkdir lock (without flock(1)): stale when its owner is gone.
void check_locks(json& r, const InstallTree& tree) {
    r["locks"] = json::array();
    auto config = open_dir_beneath(tree.ai_core(), k_config_dir);
    auto lockd = config ? open_dir_beneath(*config, k_mkdir_lock) : std::nullopt;
    if (!lockd)
        return;
    auto pid = read_file_at(*lockd, "pid", 64).value_or("");
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' '))
        pid.pop_back();
    const bool alive = process_alive(pid);
    r["locks"].push_back({{"path", lockd->path}, {"pid", pid}, {"stale", !alive}});
    if (!alive)
        problem(r,
                "stale lock " + lockd->path + " (" +
                    (pid.empty() ? std::string("no pid") : "process " + pid + " is gone") +
                    "): a package's install.sh waits on it",
                "rm -r '" + lockd->path + "' (the next install.sh also breaks it itself)");
}

void check_verify(json& r, const InstallTree& tree) {
    std::size_t problems = 0;
    auto order = tree.install_order();
    for (const auto& n : order)
        problems += report::verify_package(tree, n, true, nullptr).problems;
    problems += report::verify_tree(tree).problems;
    r["verify"] = {{"problems", problems}};
    if (problems != 0)
        problem(r, "verify finds " + std::to_string(problems) + " problem(s)",
                "skinstall verify (to see them), then skinstall verify --fix");
}

} // namespace

std::string runtime_base_path(const char* ascend_home, const char* ascend_opp_path) {
    if (ascend_home != nullptr) {
        std::string latest = std::string(ascend_home) + "/opp_latest";
        if (!real_path(latest).empty())
            return latest; // as written
    }
    return ascend_opp_path != nullptr ? ascend_opp_path : "";
}

json doctor(const InstallTree& tree, const DoctorInput& in) {
    json r = {{"tree", tree.shown()},      {"base_path", in.base_path}, {"base_from", in.base_from},
              {"packages", json::array()}, {"problems", json::array()}, {"notes", json::array()}};
    auto line = in.toolkit_version ? kernel::cann_line_of(*in.toolkit_version) : std::nullopt;
    r["toolkit"] = {{"root", in.toolkit_root},
                    {"version", in.toolkit_version ? json(*in.toolkit_version) : json(nullptr)},
                    {"line", line ? json(kernel::line_rules(*line).name) : json(nullptr)}};
    if (!line)
        r["notes"].push_back("the toolkit's CANN line is unknown (no version.info of 9.0 or "
                             "later under $ASCEND_HOME_PATH): the run info is not checked");
    if (in.soc_dir.empty())
        r["notes"].push_back("the host's SoC is not given (--soc): packages are not checked "
                             "against it");
    check_base(r, tree, in);
    check_index(r, tree, in, line);
    check_packages(r, tree, in);
    std::vector<std::string> skipped;
    r["shadowed"] = report::conflicts(tree, skipped);
    check_locks(r, tree);
    check_verify(r, tree);
    return r;
}

std::vector<std::string> doctor_text(const json& r) {
    std::vector<std::string> out;
    auto str = [](const json& j) {
        return j.is_null() ? std::string("unknown") : j.get<std::string>();
    };
    out.push_back("base path: " + (r["base_path"].get<std::string>().empty()
                                       ? std::string("none")
                                       : r["base_path"].get<std::string>() + " (from " +
                                             r["base_from"].get<std::string>() + ")"));
    out.push_back("tree: " + r["tree"].get<std::string>());
    out.push_back("toolkit: " + str(r["toolkit"]["version"]) + ", line " +
                  str(r["toolkit"]["line"]));
    std::string socs;
    for (const auto& s : r["soc_dirs"])
        socs += (socs.empty() ? "" : ", ") + s.get<std::string>();
    out.push_back("SoC directories: " + (socs.empty() ? std::string("none") : socs));
    for (const auto& p : r["packages"])
        out.push_back(
            "package " + p["name"].get<std::string>() + " " + p.value("version", std::string()) +
            " SoC " + p.value("soc_version", std::string("unknown")) +
            (p.value("matches_soc", json(nullptr)) == json(false) ? " (another SoC)" : "") +
            ", CANN " +
            (p.value("cann_version", json(nullptr)).is_null()
                 ? std::string("not recorded")
                 : p["cann_version"].get<std::string>() +
                       (p.value("matches_cann", json(nullptr)) == json(false) ? " (another line)"
                                                                              : "")));
    out.push_back("shadowed keys: " + std::to_string(r["shadowed"].size()) +
                  " (skinstall list --conflicts)");
    out.push_back("verify: " + std::to_string(r["verify"]["problems"].get<std::size_t>()) +
                  " problem(s)");
    for (const auto& n : r["notes"])
        out.push_back("note: " + n.get<std::string>());
    for (const auto& p : r["problems"])
        out.push_back("problem: " + p["problem"].get<std::string>() +
                      "; fix: " + p["fix"].get<std::string>());
    out.push_back(r["problems"].empty() ? "ok: nothing would make the runtime miss a kernel"
                                        : std::to_string(r["problems"].size()) + " problem(s)");
    return out;
}

} // namespace skforge::install
