// SPDX-License-Identifier: Apache-2.0
#include "superkernel_stage.hpp"

#include "build_runner.hpp"

#include "skforge/kernel/static_index.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/json.hpp"
#include "skforge/support/safe_path.hpp"
#include "skforge/support/sha256.hpp"

#include <algorithm>

namespace skforge::compile {

namespace fs = std::filesystem;
using nlohmann::json;
using support::Error;

namespace {

// The packaged NPU SuperKernel's JSON with what CANN's runtime reads beside every kernel of the
// index (opbase UpdateStaticJsonExtraInfo): localMemorySize and schedule_mode, the largest of its
// sub-kernels' (0 when none says), a workspace even when it has none, and platformInfo when the
// SoC's core counts are known (the launch was sized for them). --sources-only keeps the
// vendor's shape.
json runtime_superkernel_meta(const graph::Graph& g, const fusion::Segment& s,
                              const SuperKernelFiles& f, json meta) {
    std::uint32_t local_memory = 0, schedule_mode = 0;
    for (int i : s.ops) {
        const auto& k =
            g.kernels[static_cast<std::size_t>(g.ops[static_cast<std::size_t>(i)].kernel_index)]
                .meta;
        local_memory = std::max(local_memory, k.local_memory_size.value_or(0));
        schedule_mode = std::max(schedule_mode, k.schedule_mode.value_or(0));
    }
    meta["localMemorySize"] = local_memory;
    meta["schedule_mode"] = schedule_mode;
    return json::parse(
        kernel::with_runtime_fields(support::dump_json(meta), kernel::platform_core_counts(f.soc)));
}

// The index's coreType of a SuperKernel. On the NPU every entry is built as a MIX kernel (even
// an all-vector one is KERNEL_TYPE_MIX_AIV_1_0) and its JSON says "MIX", which is how the
// runtime picks the binary's magic and reads taskRation (opbase indv_bininfo.cpp); the vendor's
// compiler indexes the same way. The host target keeps the plan's.
kernel::CoreType superkernel_core_type(const fusion::Segment& s, const SuperKernelFiles& f) {
    if (f.arch != "host")
        return kernel::CoreType::mix;
    return kernel::parse_core_type(s.core_type).value_or(kernel::CoreType::mix);
}

} // namespace

json superkernel_meta(const graph::Graph& g, const fusion::Segment& s, const SuperKernelFiles& f,
                      const std::string& sha256) {
    json meta = json::parse(
        fusion::kernel_meta_json(g, s, f.arch, codegen::cann_release(f.cann).kernel_list));
    meta["binFileName"] = s.name;
    meta["binFileSuffix"] = f.suffix;
    meta["kernelName"] = f.kernel_name;
    meta["sha256"] = sha256;
    if (f.arch == "host") {
        meta["workspace"]["size"] = {f.workspace};
        return meta;
    }
    // The entry is launched as codegen::npu_launch says on the compile's SoC (which the
    // environment may choose, unlike the plan's); the JSON the runtime launches from must say
    // the same.
    if (f.launch) {
        meta["blockDim"] = f.launch->block_dim;
        meta["taskRation"] = fusion::task_ration_of(f.launch->type);
    }
    // The vendor writes a workspace only when the SuperKernel needs one.
    if (f.workspace == 0)
        meta.erase("workspace");
    else
        meta["workspace"] = {{"num", 1}, {"size", {f.workspace}}, {"type", {0}}};
    return meta;
}

void stage_superkernel(const graph::Graph& g, const fusion::Segment& s, const SuperKernelFiles& f,
                       const fs::path& build, const fs::path& stage, kernel::PackageIndex& index,
                       std::string& log) {
    const fs::path binary_path = build / "lib" / (s.name + f.suffix);
    if (!fs::is_regular_file(binary_path))
        throw Error("the build did not write " + binary_path.filename().string() +
                    " for SuperKernel " + s.name);
    std::string binary = support::read_file(binary_path.string());
    json meta = superkernel_meta(g, s, f, support::sha256_hex(binary));
    if (f.arch != "host")
        meta = runtime_superkernel_meta(g, s, f, std::move(meta));
    write_text(support::path_beneath(stage, f.dir + s.name + ".json"),
               support::dump_json(meta, 2) + "\n");
    write_text(support::path_beneath(stage, f.dir + s.name + f.suffix), binary);
    const fs::path source = support::path_beneath(stage, f.dir + s.name + ".cpp");
    fs::copy_file(build / "gen" / (s.name + ".cpp"), source);
    fs::permissions(source, fs::perms(0644));
    index.add("SuperKernel", {meta.value("blockDim", s.largest_block_dim),
                              f.kernel_name,
                              {f.workspace},
                              superkernel_core_type(s, f),
                              kernel::index_bin_path(f.package, f.dir + s.name + f.suffix),
                              "SuperKernel/" + f.package + "/" + s.name});
    log += "SuperKernel " + s.name + ": " + std::to_string(s.ops.size()) + " sub-kernels -> " +
           f.dir + s.name + f.suffix + "\n";
}

} // namespace skforge::compile
