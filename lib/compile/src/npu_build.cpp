// SPDX-License-Identifier: Apache-2.0
#include "npu_build.hpp"

#include "build_runner.hpp"
#include "cann_build.hpp"
#include "static_kernels.hpp"
#include "superkernel_stage.hpp"

#include "skforge/codegen/host.hpp"
#include "skforge/kernel/package_index.hpp"
#include "skforge/support/json.hpp"
#include "skforge/support/process.hpp"
#include "skforge/support/safe_path.hpp"

#include <filesystem>
#include <set>

namespace skforge::compile {

namespace fs = std::filesystem;

namespace {

// How segment `s` is packaged for `target`.
SuperKernelFiles npu_files(const graph::Graph& g, const fusion::Segment& s,
                           const codegen::NpuTarget& target, const std::string& soc_dir,
                           const std::string& package = "") {
    return {soc_dir + "/SuperKernel/",
            ".o",
            codegen::npu_entry_symbol(g, s),
            codegen::host_layout(s).workspace_bytes + codegen::npu_sync_bytes(g, s, target),
            target.arch,
            package,
            codegen::npu_launch(g, s, target),
            target.soc,
            target.cann};
}

// The precompiled sub-kernels of every segment into build/obj/, under their kernel names (what
// the build commands link).
void copy_sub_kernels(const graph::Graph& g, const fusion::Plan& plan, const fs::path& build) {
    std::set<std::string> copied;
    for (const auto& s : plan.segments)
        for (int i : s.ops) {
            const auto& op = g.ops[static_cast<std::size_t>(i)];
            const auto& name =
                g.kernels[static_cast<std::size_t>(op.kernel_index)].meta.kernel_name;
            if (copied.insert(name).second)
                fs::copy_file(graph::resolve_path(g, op.kernel.bin_path),
                              support::path_beneath(build, "obj/" + name + ".o"));
        }
}

// Each segment's source written into build/gen/ and its bisheng commands, which come in stages:
// a stage's commands of all segments run in parallel, the stages one after another.
struct Stages {
    std::vector<std::vector<std::vector<std::string>>> commands;
    std::vector<std::vector<std::string>> what;
};

Stages bisheng_stages(const graph::Graph& g, const fusion::Plan& plan,
                      const codegen::NpuTarget& target, const fs::path& build, std::string& log) {
    Stages st;
    for (const auto& s : plan.segments) {
        // Checked here, so the bisheng commands' gen/, obj/ and lib/ paths of this name are too.
        write_text(support::path_beneath(build, "gen/" + s.name + ".cpp"),
                   codegen::npu_entry_source(g, s, target));
        write_vendor_compiler_inputs(g, plan, s, build / "gen", target.cann, log);
        auto cmds = codegen::bisheng_commands(g, s, target);
        if (st.commands.size() < cmds.size()) {
            st.commands.resize(cmds.size());
            st.what.resize(cmds.size());
        }
        for (std::size_t k = 0; k < cmds.size(); ++k)
            for (auto& c : cmds[k]) {
                st.commands[k].push_back(std::move(c));
                st.what[k].push_back("SuperKernel " + s.name);
            }
    }
    return st;
}

} // namespace

std::string npu_fingerprint() {
    auto version = support::run_process({"bisheng", "--version"});
    return "bisheng\n" + version.output;
}

void build_npu_package(const graph::Graph& g, const fusion::Plan& plan,
                       const codegen::NpuTarget& target, const std::string& package,
                       const std::string& soc_dir, const std::string& build_dir,
                       const std::string& stage_dir, unsigned jobs, std::string& log,
                       support::Progress* progress) {
    const fs::path build(build_dir), stage(stage_dir);
    fs::create_directories(build / "obj");
    fs::create_directories(build / "lib");
    copy_sub_kernels(g, plan, build);
    const Stages st = bisheng_stages(g, plan, target, build, log);
    Builder builder(build_dir, log, progress);
    for (std::size_t k = 0; k < st.commands.size(); ++k)
        builder.run_all(st.commands[k], st.what[k], jobs);
    kernel::PackageIndex index;
    for (const auto& s : plan.segments)
        stage_superkernel(g, s, npu_files(g, s, target, soc_dir, package), build, stage, index,
                          log);
    log += "static kernels (operators left out):\n";
    stage_static_kernels(g, &plan, package, soc_dir, stage_dir, log, std::move(index));
}

void write_npu_sources(const graph::Graph& g, const fusion::Plan& plan,
                       const codegen::NpuTarget& target, const std::string& soc_dir,
                       const std::string& out_dir, std::string& log) {
    const std::string dir = soc_dir + "/SuperKernel/";
    for (const auto& s : plan.segments) {
        write_text(support::path_beneath(out_dir, dir + s.name + ".cpp"),
                   codegen::npu_entry_source(g, s, target));
        auto meta = superkernel_meta(g, s, npu_files(g, s, target, soc_dir), "");
        write_text(support::path_beneath(out_dir, dir + s.name + ".json"),
                   support::dump_json(meta, 2) + "\n");
        write_vendor_compiler_inputs(
            g, plan, s, support::path_beneath(out_dir, soc_dir + "/SuperKernel"), target.cann, log);
        log += "SuperKernel " + s.name + ": " + std::to_string(s.ops.size()) + " sub-kernels -> " +
               dir + s.name + ".{cpp,json}\n";
    }
}

} // namespace skforge::compile
