// SPDX-License-Identifier: Apache-2.0
#include "cann_build.hpp"

#include "build_runner.hpp"
#include "static_kernels.hpp"

#include "skforge/codegen/cann_backend.hpp"
#include "skforge/kernel/package_index.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/json.hpp"
#include "skforge/support/process.hpp"
#include "skforge/support/safe_path.hpp"
#include "skforge/support/sha256.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <set>

namespace skforge::compile {

namespace fs = std::filesystem;
using nlohmann::json;
using support::Error;

namespace {

// Where the vendor backend's input and output of segment `s` are, under the directory the
// driver runs in.
std::string cann_work_dir(const fusion::Segment& s) {
    return "cann/" + s.name;
}

// The vendor compiler's inputs for segment `s` in `dir`: cann/<segment>/kernel_info.json and the
// driver skforge_cann_driver.py. Throws when the segment cannot be given to the vendor.
void write_cann_inputs(const graph::Graph& g, const fusion::Plan& plan, const fusion::Segment& s,
                       const fs::path& dir, codegen::CannVersion cann) {
    // Graph paths are relative to the working directory; the vendor runs in another one.
    const auto& release = codegen::cann_release(cann);
    const std::string info =
        codegen::cann_kernel_info(g, plan, s, fs::current_path().string(), release);
    write_text(support::path_beneath(dir.string(), cann_work_dir(s) + "/kernel_info.json"), info);
    for (const auto& copy : codegen::cann_json_copies(g, s, release))
        write_text(support::path_beneath(dir.string(), cann_work_dir(s) + "/" + copy.file),
                   copy.text + "\n");
    write_text(support::path_beneath(dir.string(), "skforge_cann_driver.py"),
               codegen::cann_driver_program());
}

// The vendor's log files (kernel_meta/<kernel name>*.log) of every segment, into `log`: on
// failure as on success, they say what the vendor ran.
void append_cann_logs(const graph::Graph& g, const fusion::Plan& plan, const fs::path& build,
                      std::string& log) {
    for (const auto& s : plan.segments) {
        const fs::path dir = build / cann_work_dir(s) / codegen::k_cann_kernel_meta;
        const std::string name = codegen::cann_kernel_name(g, s);
        std::error_code ec;
        std::set<std::string> logs; // sorted: the log reads the same every time
        for (const auto& e : fs::directory_iterator(dir, ec))
            if (auto f = e.path().filename().string(); f.starts_with(name) && f.ends_with(".log"))
                logs.insert(e.path().string());
        for (const auto& path : logs)
            log += "vendor log " + fs::path(path).filename().string() + " (SuperKernel " + s.name +
                   "):\n" + support::read_file(path);
    }
}

// What is wrong with the vendor's metadata `j` of `object`, or nullopt.
std::optional<std::string> cann_meta_problem(const json& j, const fs::path& object,
                                             const std::string& name) {
    if (!j.is_object())
        return "is not a JSON object";
    if (!j.contains("binFileName") || j["binFileName"] != name)
        return "does not name " + name + " as binFileName";
    if (j.contains("sha256") &&
        j["sha256"] != support::sha256_file(object.string(), UINT64_MAX).sha256)
        return "has a sha256 that does not match " + object.filename().string();
    return std::nullopt;
}

// The workspace sizes the vendor's metadata gives (workspace.size), the unsigned ones.
std::vector<std::uint64_t> vendor_workspace(const json& vendor) {
    std::vector<std::uint64_t> workspace;
    if (auto ws = vendor.find("workspace");
        ws != vendor.end() && ws->is_object() && ws->contains("size") && (*ws)["size"].is_array())
        for (const auto& v : (*ws)["size"])
            if (v.is_number_unsigned())
                workspace.push_back(v.get<std::uint64_t>());
    return workspace;
}

// The vendor's metadata of segment `s` (kernel_meta/<name>.json beside <name>.o in `out`),
// checked: both present, the metadata an object naming the object, its sha256 when given.
json checked_vendor_meta(const fusion::Segment& s, const fs::path& out, const std::string& name) {
    const fs::path object = out / (name + ".o"), meta = out / (name + ".json");
    for (const auto& p : {object, meta})
        if (!fs::is_regular_file(p))
            throw Error("the vendor's super_kernel.compile did not write " + p.filename().string() +
                        " for SuperKernel " + s.name + " (in " + out.string() + ")");
    json vendor =
        support::parse_json(support::read_file(meta.string(), {support::k_max_json_bytes}));
    if (auto why = cann_meta_problem(vendor, object, name))
        throw Error("the vendor's " + meta.string() + " for SuperKernel " + s.name + " " + *why);
    return vendor;
}

// What the vendor wrote for segment `s`, checked and copied into the package under the vendor's
// names, with its index entry keyed as skforge's SuperKernels are.
void stage_cann_superkernel(const graph::Graph& g, const fusion::Segment& s, const fs::path& build,
                            const std::string& soc, const std::string& soc_dir,
                            const std::string& package, const fs::path& stage,
                            kernel::PackageIndex& index, std::string& log) {
    const std::string name = codegen::cann_kernel_name(g, s);
    const fs::path out = build / cann_work_dir(s) / codegen::k_cann_kernel_meta;
    const json vendor = checked_vendor_meta(s, out, name);
    const std::string dir = soc_dir + "/SuperKernel/";
    fs::create_directories(stage / dir);
    auto place = [&](const fs::path& from, const std::string& to) {
        const fs::path at = support::path_beneath(stage.string(), dir + to);
        fs::copy_file(from, at);
        fs::permissions(at, fs::perms(0644));
    };
    place(out / (name + ".o"), name + ".o");
    // The vendor's JSON with what the runtime reads beside every indexed kernel filled in.
    write_text(support::path_beneath(stage.string(), dir + name + ".json"),
               kernel::with_runtime_fields(support::read_file((out / (name + ".json")).string()),
                                           kernel::platform_core_counts(soc)));
    // Its generated source, <name>[_<pid>]_kernel.cpp, kept as the skforge backend keeps its own
    // (the first by name, should there be more).
    std::set<fs::path> sources;
    for (const auto& e : fs::directory_iterator(out))
        if (auto f = e.path().filename().string();
            f.starts_with(name) && f.ends_with("_kernel.cpp"))
            sources.insert(e.path());
    if (!sources.empty())
        place(*sources.begin(), name + ".cpp");
    index.add(
        "SuperKernel",
        {vendor.value("blockDim", fusion::launch_summary(s).block_dim), name,
         vendor_workspace(vendor),
         kernel::parse_core_type(vendor.value("coreType", "MIX")).value_or(kernel::CoreType::mix),
         kernel::index_bin_path(package, dir + name + ".o"),
         "SuperKernel/" + package + "/" + s.name});
    log += "SuperKernel " + s.name + ": " + std::to_string(s.ops.size()) + " sub-kernels -> " +
           dir + name + ".o (the vendor's super_kernel.compile)\n";
}

} // namespace

CannProbe probe_cann() {
    CannProbe p;
    try {
        auto r = support::run_process(codegen::cann_probe_command());
        p.output = r.output;
        p.ok = r.exit_code == 0;
    } catch (const Error& e) {
        p.output = e.what();
        return p;
    }
    // The module's path is the last line printed (the vendor may log before it).
    std::string text = p.output;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
        text.pop_back();
    p.module = text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
    return p;
}

std::string cann_fingerprint(const CannProbe& probe) {
    std::error_code ec;
    std::string digest = fs::is_regular_file(probe.module, ec)
                             ? support::sha256_file(probe.module, UINT64_MAX).sha256
                             : "unreadable";
    return "cann superkernel " + probe.module + " " + digest + "\n";
}

void write_vendor_compiler_inputs(const graph::Graph& g, const fusion::Plan& plan,
                                  const fusion::Segment& s, const fs::path& dir,
                                  codegen::CannVersion cann, std::string& log) {
    try {
        write_cann_inputs(g, plan, s, dir, cann);
    } catch (const Error& e) {
        log += "no kernel_info for the vendor's compiler (SuperKernel " + s.name +
               "): " + e.what() + "\n";
    }
}

void build_cann_package(const graph::Graph& g, const fusion::Plan& plan, const std::string& soc,
                        const std::string& soc_dir, const std::string& package,
                        const std::string& build_dir, const std::string& stage_dir,
                        codegen::CannVersion cann, unsigned jobs, std::string& log,
                        support::Progress* progress) {
    const fs::path build(build_dir);
    std::vector<std::vector<std::string>> commands;
    std::vector<std::string> what;
    for (const auto& s : plan.segments) {
        const std::string work = cann_work_dir(s);
        write_cann_inputs(g, plan, s, build, cann);
        commands.push_back(codegen::cann_command("skforge_cann_driver.py",
                                                 work + "/kernel_info.json",
                                                 codegen::cann_kernel_name(g, s), soc, work));
        what.push_back("SuperKernel " + s.name + " (the vendor's super_kernel.compile)");
    }
    try {
        Builder(build_dir, log, progress).run_all(commands, what, jobs);
    } catch (const Error&) {
        append_cann_logs(g, plan, build, log);
        throw;
    }
    append_cann_logs(g, plan, build, log);
    kernel::PackageIndex index;
    for (const auto& s : plan.segments)
        stage_cann_superkernel(g, s, build, soc, soc_dir, package, stage_dir, index, log);
    log += "static kernels (operators left out):\n";
    stage_static_kernels(g, &plan, package, soc_dir, stage_dir, log, std::move(index));
}

} // namespace skforge::compile
