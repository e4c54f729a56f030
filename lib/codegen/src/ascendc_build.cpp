// SPDX-License-Identifier: Apache-2.0
// The NPU backend's build: the commands the vendor's SuperKernel compiler runs (bisheng once
// per core type, ld.lld -m aicorelinux, llvm-objcopy), with skforge's file names.
#include "ascendc_code.hpp"
#include "skforge/codegen/ascendc.hpp"

#include <algorithm>
#include <set>

namespace skforge::codegen {

using kernel::KernelType;

namespace {

using Command = std::vector<std::string>;

// Where the toolkit keeps a host's files.
#if defined(__aarch64__)
constexpr const char* k_machine_dir = "aarch64-linux";
#else
constexpr const char* k_machine_dir = "x86_64-linux";
#endif

std::string core_arch(const NpuTarget& t, Side side) {
    return std::string(t.arch == "dav-3510" ? "dav-c310" : "dav-c220") +
           (side == Side::aic ? "-cube" : "-vec");
}

// The AscendC headers, in the order the vendor's compiler passes them; the register-compute
// headers where the release keeps them (CannRelease::reg_compute_includes).
std::vector<std::string> include_options(const NpuTarget& t) {
    if (t.ascend_home.empty())
        return {};
    const bool reg_compute = cann_release(t.cann).reg_compute_includes;
    const std::string regs = reg_compute ? "basic_api/reg_compute" : "micro_api";
    std::string root = t.ascend_home + "/" + k_machine_dir;
    std::string asc = root + "/asc";
    const std::vector<std::string> under_asc = {
        "impl/adv_api",      "impl/basic_api",    "impl/c_api",    "impl/" + regs,
        "impl/simt_api",     "impl/utils",        "include",       "include/adv_api",
        "include/basic_api", "include/aicpu_api", "include/c_api", "include/" + regs,
        "include/simt_api",  "include/utils"};
    std::vector<std::string> dirs;
    for (const auto& d : under_asc)
        dirs.push_back(asc + "/" + d);
    dirs.push_back(root + "/ascendc/act");
    dirs.push_back(asc + "/impl");
    if (reg_compute)
        dirs.push_back(asc);
    dirs.push_back(root + "/tikcpp");
    dirs.push_back(t.ascend_home + "/include");
    dirs.push_back(t.ascend_home + "/include/ascendc");
    for (const char* d : {"", "/impl", "/interface"})
        dirs.push_back(root + "/tikcpp/tikcfw" + d);
    for (auto& d : dirs)
        d = "-I" + d;
    return dirs;
}

// The scope's compile-options: items separated by ',' (the vendor's syntax).
std::vector<std::string> user_options(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        auto end = std::min(text.find(',', start), text.size());
        std::string item = text.substr(start, end - start);
        auto first = item.find_first_not_of(" \t");
        if (first != std::string::npos)
            out.push_back(item.substr(first, item.find_last_not_of(" \t") - first + 1));
        start = end + 1;
    }
    return out;
}

// Everything before the source file: language, headers, the SuperKernel's feature macros.
std::vector<std::string> compile_options(const fusion::Segment& s, const NpuTarget& t,
                                         KernelType launch_type, bool early_start) {
    std::vector<std::string> o = {"-x", "cce"};
    for (auto& i : include_options(t))
        o.push_back(i);
    if (t.arch == "dav-3510" && launch_type == KernelType::mix_aic_1_1 &&
        cann_release(t.cann).c310_mix_1_1_split_core_define)
        o.push_back("-D__ASCENDC_DAVID_SPLIT_CORE__");
    if (early_start)
        o.insert(o.end(),
                 {"-D__ASCENDC_ENABLE_SET_NEXT_TASK_START", "-D__ASCENDC_ENABLE_WAIT_PRE_TASK_END",
                  "-D__ASCENDC_SUPERKERNEL_EARLY_START_V2"});
    if (s.options.feed_sync_all)
        o.push_back("-D__ASCENDC_SUPERKERNEL_AUTO_SYNC_ALL__");
    o.push_back("-DASCENDC_DUMP=0");
    for (auto& u : user_options(s.options.compile_options))
        o.push_back(u);
    o.push_back("--cce-disable-kernel-global-attr-check");
    if (t.arch == "dav-3510")
        o.push_back("--cce-no-dcache-flush");
    return o;
}

// One bisheng compile of the entry for one kind of core; the entry function is renamed to the
// symbol the runtime looks for (<kernelName>_mix_aic / _mix_aiv).
Command compile(const graph::Graph& g, const fusion::Segment& s, const NpuTarget& t,
                const NpuLaunch& launch, Side side, bool early_start) {
    std::string k = npu_entry_symbol(g, s);
    std::string suffix = side == Side::aic ? "_mix_aic" : "_mix_aiv";
    Command c = {"bisheng", "-c", "-O3"};
    for (auto& o : compile_options(s, t, launch.type, early_start))
        c.push_back(o);
    c.insert(c.end(), {"gen/" + s.name + ".cpp", "--cce-aicore-arch=" + core_arch(t, side)});
    if (t.arch == "dav-3510")
        c.push_back("-D__DAV_C310__");
    c.insert(c.end(),
             {"--cce-aicore-only", "-o", "obj/" + s.name + suffix + ".o", "-mllvm",
              "-cce-aicore-stack-size=0x8000", "-mllvm", "-cce-aicore-function-stack-size=0x8000",
              "-mllvm", "-cce-aicore-record-overflow=false", "-mllvm",
              "-cce-aicore-addr-transform"});
    if (t.arch == "dav-3510")
        c.insert(c.end(), {"-mllvm", "--cce-aicore-jump-expand=true"});
    c.insert(c.end(), {"-mllvm", "-cce-aicore-dcci-insert-for-scalar=false"});
    if (s.options.split_mode > 1) // split copies are far apart: long calls
        c.insert(c.end(), {"-mllvm", "-cce-aicore-jump-expand=true", "--cce-long-call=true",
                           "-mllvm", "-cce-aicore-long-call"});
    c.insert(c.end(), {"-std=c++17", "-Dauto_gen_" + k + "_kernel=" + k + suffix});
    if (is_mix(launch.type))
        c.push_back("-D__MIX_CORE_MACRO__=1");
    if (launch.type == KernelType::mix_aic_1_1)
        c.push_back("-D__MIX_CORE_AIC_RATION__=1");
    c.insert(c.end(), {"-DTILING_KEY_VAR=0UL", "-D" + k + "=" + k + "_0_tilingkey"});
    return c;
}

// The objects of one sub-kernel and its split copies, and the functions they export.
struct SubObjects {
    std::string kernel; // kernelName: obj/<kernelName>.o
    std::vector<std::string> functions;
    std::uint32_t split = 1;
    bool aic = false, aiv = false;
    /// The op compiler's archive already holds the split copies (its JSON's split_mode is the
    /// SuperKernel's and obj_files_split1..split-1 are named for every core it runs on): linked
    /// as it is, no copies made (graph-autofusion super_kernel_op_infos.py: with split_mode in
    /// the JSON the vendor links the archive's <obj>_split<k>.o, else makes copies itself).
    bool presplit = false;
};

std::vector<SubObjects> sub_objects(const graph::Graph& g, const fusion::Segment& s,
                                    const NpuTarget& t) {
    std::vector<SubObjects> out;
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        const auto& op = g.ops[static_cast<std::size_t>(s.ops[p])];
        const auto& meta = g.kernels[static_cast<std::size_t>(op.kernel_index)].meta;
        auto [aic, aiv] = npu_sub_functions(g, s, p, t);
        SubObjects o{meta.kernel_name,
                     {},
                     std::max<std::uint32_t>(1, s.subs[p].split_mode),
                     !aic.empty(),
                     !aiv.empty()};
        for (const auto& f : {aic, aiv})
            if (!f.empty())
                o.functions.push_back(f);
        o.presplit = o.split > 1 && meta.split_mode == o.split && !meta.sub_kernel_names.empty();
        for (const auto& entry : meta.sub_kernel_names)
            if (entry.second.split_obj_files.size() + 1 < o.split)
                o.presplit = false;
        out.push_back(std::move(o));
    }
    return out;
}

std::string object(const SubObjects& o, std::uint32_t copy) {
    return "obj/" + o.kernel + (copy == 0 ? "" : "_split" + std::to_string(copy)) + ".o";
}

// Copies k = 1..split-1 of each sub-kernel object, its functions renamed <func>_split<k>.
std::vector<Command> split_copies(const std::vector<SubObjects>& subs) {
    std::vector<Command> out;
    std::set<std::string> done;
    for (const auto& o : subs) {
        if (!done.insert(o.kernel).second || o.presplit)
            continue;
        for (std::uint32_t k = 1; k < o.split; ++k) {
            Command c = {"llvm-objcopy"};
            for (const auto& f : o.functions)
                c.push_back("--redefine-sym=" + f + "=" + f + "_split" + std::to_string(k));
            c.insert(c.end(), {object(o, 0), object(o, k)});
            out.push_back(std::move(c));
        }
    }
    return out;
}

// ld.lld's inputs in the vendor's default link mode: the cube entry and the cube sub-kernels,
// then the vector entry and the vector sub-kernels, each object once.
std::vector<std::string> link_inputs(const fusion::Segment& s, const std::vector<SubObjects>& subs,
                                     const std::vector<Side>& sides) {
    std::vector<std::string> in;
    auto add = [&](const std::string& f) {
        if (std::find(in.begin(), in.end(), f) == in.end())
            in.push_back(f);
    };
    for (Side side : {Side::aic, Side::aiv}) {
        if (std::find(sides.begin(), sides.end(), side) == sides.end())
            continue;
        add("obj/" + s.name + (side == Side::aic ? "_mix_aic" : "_mix_aiv") + ".o");
        for (const auto& o : subs)
            if (side == Side::aic ? o.aic : o.aiv)
                for (std::uint32_t k = 0; k < (o.presplit ? 1 : o.split); ++k)
                    add(object(o, k));
    }
    // Sub-kernels of the kind the entry is not compiled for (none in a valid plan) still link.
    for (const auto& o : subs)
        for (std::uint32_t k = 0; k < (o.presplit ? 1 : o.split); ++k)
            add(object(o, k));
    return in;
}

} // namespace

std::vector<std::vector<std::vector<std::string>>>
bisheng_commands(const graph::Graph& g, const fusion::Segment& s, const NpuTarget& target) {
    NpuLaunch launch = npu_launch(g, s, target);
    std::vector<Side> sides;
    for (Side side : {Side::aic, Side::aiv})
        if (runs_on(launch.type, side))
            sides.push_back(side);
    bool early_start = early_start_mode(g, s);
    auto subs = sub_objects(g, s, target);
    std::vector<Command> first = split_copies(subs);
    for (Side side : sides)
        first.push_back(compile(g, s, target, launch, side, early_start));
    std::string out = "lib/" + s.name + ".o";
    Command relocatable = {"ld.lld", "-m", "aicorelinux", "-r", "-Ttext=0", "-q", "-x"};
    for (auto& i : link_inputs(s, subs, sides))
        relocatable.push_back(i);
    relocatable.insert(relocatable.end(), {"-static", "-o", out});
    Command relocate = {"ld.lld", "-m", "aicorelinux", "-Ttext=0", out, "-static", "-o", out, "-q"};
    Command localize = {"llvm-objcopy"};
    std::set<std::string> local;
    for (const auto& o : subs)
        for (const auto& f : o.functions)
            for (std::uint32_t k = 0; k < o.split; ++k) {
                std::string sym = f + (k == 0 ? "" : "_split" + std::to_string(k));
                if (local.insert(sym).second)
                    localize.push_back("--localize-symbol=" + sym);
            }
    localize.push_back(out);
    return {first, {relocatable}, {relocate}, {localize}};
}

} // namespace skforge::codegen
