// SPDX-License-Identifier: Apache-2.0
// The vendor's SuperKernel compiler as a backend: kernel_info, its options string, and the
// driver skc runs. The shapes follow CANN's super_kernel.compile and its option parser (see
// share/doc/cann-conformance.md for the sources); the driver is skforge's own.
#include "skforge/codegen/cann_backend.hpp"
#include "skforge/support/json.hpp"

#include "skforge/codegen/ascendc.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

namespace skforge::codegen {

namespace {

using nlohmann::ordered_json;

std::string join(const std::vector<std::string>& items, char sep) {
    std::string out;
    for (const auto& item : items)
        out += (out.empty() ? "" : std::string(1, sep)) + item;
    return out;
}

std::string preload_name(graph::PreloadCode p) {
    switch (p) {
    case graph::PreloadCode::none:
        return "none";
    case graph::PreloadCode::max:
        return "max";
    case graph::PreloadCode::per_func:
        break;
    }
    return "per-func";
}

// skforge keeps compile-options as the words of a command line; the vendor splits its value on
// ',' and the whole string on ':'.
std::string vendor_compile_options(const std::string& words) {
    std::vector<std::string> out;
    std::string word;
    for (char c : words + " ") {
        if (c != ' ' && c != '\t') {
            word += c;
            continue;
        }
        if (word.find_first_of(",:") != std::string::npos)
            throw support::Error("compile-options word '" + word +
                                 "' holds ',' or ':', which the vendor's super_kernel_options "
                                 "cannot carry: use --sk-backend skforge, or drop the word");
        if (!word.empty())
            out.push_back(word);
        word.clear();
    }
    return join(out, ',');
}

std::string absolute(const std::string& path, const std::string& base_dir) {
    std::filesystem::path p(path);
    return (p.is_absolute() ? p : std::filesystem::path(base_dir) / p).lexically_normal().string();
}

} // namespace

std::string cann_options_string(const graph::ScopeOptions& o) {
    auto flag = [](bool b) { return std::string(b ? "1" : "0"); };
    std::vector<std::pair<std::string, std::string>> kv = {
        {"func-align", std::to_string(o.func_align)},
        {"preload-code", preload_name(o.preload_code)},
        {"early-start", std::to_string(o.early_start)},
        {"stream-fusion", flag(o.stream_fusion)},
        {"debug-dcci-all", flag(o.debug_dcci_all)},
        {"debug-sync-all", flag(o.debug_sync_all)},
        {"feed-sync-all", flag(o.feed_sync_all)},
        {"profiling", flag(o.profiling)},
        {"compile-options", vendor_compile_options(o.compile_options)},
        {"strict-scope-check",
         o.strict_scope_check == graph::StrictScopeCheck::abort ? "abort" : "bypass"},
        {"dcci-before-kernel-start", join(o.dcci_before_kernel_start, ',')},
        {"dcci-after-kernel-end", join(o.dcci_after_kernel_end, ',')},
        {"dcci-disable-on-kernel", join(o.dcci_disable_on_kernel, ',')},
        {"split-mode", std::to_string(o.split_mode)},
        // graph-autofusion's parser (which --sk-backend cann calls) and 8.5's refuse a count of
        // 0 (BlockDimParser: "should be positive integer"); asc-devkit's copy takes it since
        // 7a8cec21. Every one reads an absent count as 0.
        {"debug-aic-num", o.debug_aic_num.value_or(0) > 0 ? std::to_string(*o.debug_aic_num) : ""},
        {"debug-aiv-num", o.debug_aiv_num.value_or(0) > 0 ? std::to_string(*o.debug_aiv_num) : ""},
    };
    std::vector<std::string> pairs;
    for (const auto& [key, value] : kv)
        if (!value.empty())
            pairs.push_back(key + "=" + value);
    return join(pairs, ':');
}

namespace {

// The events the vendor's compiler is told of, in the operator's order: those both set and
// waited inside the SuperKernel (`inner`: sent by one of its sub-kernels and received by
// another, whatever the stream fusion, as the graph gives them) and the notify/wait with
// operators beside the cores (`side`: AICPU tiling, prefetch), which the vendor turns into locks
// in the parameter table. Any other event with the outside is the launch's to wait for.
std::vector<std::int64_t> vendor_events(const std::vector<std::int64_t>& all,
                                        const std::set<std::int64_t>& inner,
                                        const std::vector<fusion::SideSync>& side) {
    std::vector<std::int64_t> out;
    for (auto e : all)
        if (inner.count(e) != 0 ||
            std::any_of(side.begin(), side.end(), [&](const auto& ss) { return ss.event == e; }))
            out.push_back(e);
    return out;
}

// The events one sub-kernel of the segment sends and another receives. Without stream fusion
// the plan pairs none of them (the SuperKernel runs in one order), but the vendor's compiler
// needs them to see that two streams are ordered (check_sp_has_two_real_stream).
std::set<std::int64_t> inner_events(const graph::Graph& g, const fusion::Segment& s) {
    std::set<std::int64_t> sent, both;
    for (auto i : s.ops)
        for (auto e : g.ops[static_cast<std::size_t>(i)].send_events)
            sent.insert(e);
    for (auto i : s.ops)
        for (auto e : g.ops[static_cast<std::size_t>(i)].recv_events)
            if (sent.count(e) != 0)
                both.insert(e);
    return both;
}

// The vendor's compiler raises an error for a first sub-kernel that receives or a last one that
// sends an event. The plan refuses such a segment on the NPU targets already; a plan made for
// another target must not reach the vendor either.
void refuse_edge_events(const graph::Graph& g, const fusion::Plan& plan, const fusion::Segment& s) {
    auto edge = fusion::edge_notify_waits(g, plan, s);
    if (edge.empty())
        return;
    const bool waits = edge.front().waiter == s.ops.front(); // the other end is never fused
    throw support::Error(
        "operator '" + g.ops[static_cast<std::size_t>(waits ? s.ops.front() : s.ops.back())].name +
        "' is the " + (waits ? "first" : "last") + " sub-kernel of SuperKernel '" + s.name +
        "' and " + (waits ? "waits for" : "notifies") + " event " +
        std::to_string(edge.front().event) +
        " with an operator beside the cores: the vendor's SuperKernel compiler refuses it (plan "
        "the graph for its NPU target: skc check names what to move)");
}

// The vendor's compiler raises an error for an event between two sub-kernels of one stream. The
// plan refuses it on the NPU targets already; a plan made for another target must not reach the
// vendor either.
void refuse_same_stream_events(const graph::Graph& g, const fusion::Segment& s) {
    auto same = fusion::same_stream_events(g, s);
    if (!same.empty())
        throw support::Error(fusion::same_stream_event_text(g, s, same.front()) +
                             " (plan the graph for its NPU target: skc check names them all)");
}

} // namespace

std::vector<CannJsonCopy> cann_json_copies(const graph::Graph& g, const fusion::Segment& s,
                                           const CannRelease& release) {
    std::vector<CannJsonCopy> out;
    if (!release.honours_dcci_disable_flag)
        return out;
    for (std::size_t p = 0; p < s.ops.size() && p < s.subs.size(); ++p) {
        const auto& op = g.ops[static_cast<std::size_t>(s.ops[p])];
        const auto& kernel = g.kernels[static_cast<std::size_t>(op.kernel_index)];
        if (!s.subs[p].dcci_disabled || kernel.meta.call_dcci_disable_on_kernel)
            continue;
        ordered_json j = ordered_json::parse(support::read_file(kernel.path));
        j["sub_operator_call_dcci_disable_on_kernel"] = true;
        out.push_back({p, "sub_kernel_" + std::to_string(p) + ".json", support::dump_json(j, 2)});
    }
    return out;
}

std::string cann_kernel_info(const graph::Graph& g, const fusion::Plan& plan,
                             const fusion::Segment& s, const std::string& base_dir,
                             const CannRelease& release) {
    refuse_edge_events(g, plan, s);
    refuse_same_stream_events(g, s);
    // asc-devkit eeb99217 super_kernel_option_parse.py refuses the key ("option is not
    // supported"), and graph-autofusion 423ae264 has no flag to disable a sub-kernel's dcci.
    if (!release.option_dcci_disable_on_kernel && !s.options.dcci_disable_on_kernel.empty())
        throw support::Error(
            "SuperKernel '" + s.name + "' has dcci-disable-on-kernel=" +
            join(s.options.dcci_disable_on_kernel, ',') + ": CANN " + std::string(release.name) +
            "'s SuperKernel compiler refuses the option (its parser: \"option is not "
            "supported\"); build with skforge's generator, with --cann-version 9.0, or without "
            "the option");
    std::vector<std::string> json_paths;
    for (auto i : s.ops) {
        const auto& op = g.ops[static_cast<std::size_t>(i)];
        json_paths.push_back(
            absolute(g.kernels[static_cast<std::size_t>(op.kernel_index)].path, base_dir));
    }
    // A copy lies beside the kernel_info; the driver makes the path absolute.
    for (const auto& c : cann_json_copies(g, s, release))
        json_paths[c.position] = c.file;
    const std::set<std::int64_t> inner = inner_events(g, s);
    ordered_json ops = ordered_json::array();
    for (std::size_t p = 0; p < s.ops.size(); ++p) {
        const auto& op = g.ops[static_cast<std::size_t>(s.ops[p])];
        if (op.kernel.bin_path.empty())
            throw support::Error("operator '" + op.name + "' has no kernel binary (bin_path): " +
                                 "the vendor's SuperKernel compiler links the compiled " +
                                 "sub-kernels");
        ordered_json entry;
        entry["bin_path"] = absolute(graph::resolve_path(g, op.kernel.bin_path), base_dir);
        entry["json_path"] = json_paths[p];
        entry["stream_id"] = op.stream_id;
        entry["task_type"] = op.task_type == graph::TaskType::dynamic ? "dynamic" : "normal";
        entry["send_event_list"] = vendor_events(op.send_events, inner, s.subs.at(p).notifies);
        entry["recv_event_list"] = vendor_events(op.recv_events, inner, s.subs.at(p).waits);
        ops.push_back(std::move(entry));
    }
    ordered_json info;
    info["op_list"] = std::move(ops);
    info["super_kernel_options"] = cann_options_string(s.options);
    return support::dump_json(info, 2) + "\n";
}

std::string cann_kernel_name(const graph::Graph& g, const fusion::Segment& s) {
    return npu_entry_symbol(g, s);
}

std::string cann_driver_program() {
    return R"(# skforge's driver for the vendor's SuperKernel compiler, written by skc compile
# --sk-backend cann (see share/doc/npu-target.md). Usage:
#   python3 -B skforge_cann_driver.py KERNEL_INFO KERNEL_NAME SOC WORKDIR
# Calls superkernel.super_kernel.compile(kernel_info, kernel_name) inside an op context, as the
# op compiler does; the vendor writes WORKDIR/kernel_meta/KERNEL_NAME.o and .json.
import json
import os
import sys

from superkernel import super_kernel


def point_vendor_at(workdir, soc):
    try:
        from asc_op_compile_base.common.buildcfg.buildcfg_mapping import kernel_meta_parent_dir
        from asc_op_compile_base.common.ccec import current_build_config
        from asc_op_compile_base.common.platform.platform_info import set_current_compile_soc_info
    except ImportError:
        return  # no CANN build configuration: kernel_meta goes under the working directory
    set_current_compile_soc_info(soc)
    current_build_config()[kernel_meta_parent_dir] = workdir


def op_context(kernel_info):
    # The op context the op compiler has open whenever it calls the generator (OpContext("static")
    # around a compile; the vendor's ST opens "dynamic" for dynamic sub-kernels): from CANN 9.0 on
    # the JSON post-processing reads it (get_context().get_addition), and fails without one.
    from asc_op_compile_base.common.context.op_context import OpContext
    ops = kernel_info.get("op_list", [])
    dynamic = any(isinstance(op, dict) and op.get("task_type") == "dynamic" for op in ops)
    return OpContext("dynamic" if dynamic else "static")


def main(info_path, kernel_name, soc, workdir):
    with open(info_path, encoding="utf-8") as f:
        kernel_info = json.load(f)
    # Paths skc wrote relative (the sub-kernel JSON copies) are beside the kernel_info.
    base = os.path.dirname(os.path.abspath(info_path))
    for op in kernel_info.get("op_list", []):
        for key in ("bin_path", "json_path"):
            if isinstance(op.get(key), str) and not os.path.isabs(op[key]):
                op[key] = os.path.join(base, op[key])
    workdir = os.path.abspath(workdir)
    os.makedirs(workdir, exist_ok=True)
    point_vendor_at(workdir, soc)
    os.chdir(workdir)
    with op_context(kernel_info):
        super_kernel.compile(kernel_info, kernel_name)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: skforge_cann_driver.py KERNEL_INFO KERNEL_NAME SOC WORKDIR")
    main(*sys.argv[1:])
)";
}

std::vector<std::string> cann_command(const std::string& program, const std::string& kernel_info,
                                      const std::string& kernel_name, const std::string& soc,
                                      const std::string& workdir) {
    // -B: never write bytecode into the vendor's installation.
    return {"python3", "-B", program, kernel_info, kernel_name, soc, workdir};
}

std::vector<std::string> cann_probe_command() {
    return {"python3", "-B", "-c",
            "from superkernel import super_kernel; print(super_kernel.__file__)"};
}

} // namespace skforge::codegen
