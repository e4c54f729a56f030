// SPDX-License-Identifier: Apache-2.0
// The conventions table, one row per CANN release line. Every value is read from the vendor's
// code at the commits named in the row; share/doc/cann-conformance.md cites the files.
#include "skforge/codegen/cann_release.hpp"

#include "skforge/kernel/toolkit.hpp"
#include "skforge/support/error.hpp"

#include <charconv>

namespace skforge::codegen {

using support::Error;

namespace {

using kernel::KernelType;

// The vendor's device classes of kernel types (graph-autofusion master
// kernel_meta_type_to_device_type).
constexpr KernelTypeSet k_aic = types_of(KernelType::aic_only) | types_of(KernelType::mix_aic_1_0);
constexpr KernelTypeSet k_aiv = types_of(KernelType::aiv_only) | types_of(KernelType::mix_aiv_1_0);
constexpr KernelTypeSet k_mix =
    types_of(KernelType::mix_aic_1_1) | types_of(KernelType::mix_aic_1_2);

// What both generators use for an option not given: func-align 512 (super_kernel.py),
// preload-code per-func (PreloadByAdanvanceStep), early-start 1 (EarlyStartEnableV2),
// stream-fusion 0, split-mode 4 (super_kernel_op_infos.py gen_op_options, __init__).
graph::ScopeOptions vendor_defaults() {
    graph::ScopeOptions o;
    o.func_align = 512;
    o.preload_code = graph::PreloadCode::per_func;
    o.early_start = 1;
    o.stream_fusion = false;
    o.split_mode = 4;
    return o;
}

std::vector<CannRelease> make_rows() {
    std::vector<CannRelease> rows;
    // graph-autofusion 8.5.0-beta.1 423ae264 (branch 8.5.0, 79f6b29b, has the same super_kernel/
    // src) with asc-devkit 8.5.0-beta.1 eeb99217 (8.5.0 fb2021fb writes the same kernel list).
    CannRelease r85{CannVersion::v8_5,         "8.5", "423ae264", "eeb99217", vendor_defaults(),
                    {"blockDim", false, false}};
    r85.plan_checks = {false, "8.5"};
    // gen_wait_block_extra_sync: only an AIC_ONLY sub-kernel followed by an AIV_ONLY one.
    // gen_call_func: the sub-kernel's dcci before and after inside `if (block < blockDim)`.
    r85.dcci_inside_block_guard = true;
    // asc-devkit ascendc_compile_v220.py get_ktype_section_head, super_kernel_op_compile.py
    // gen_system_run_cfg: `#if defined(__DAV_<chip>_CUBE__)` (1ea13f3b: __DAV_CUBE__ and
    // __NPU_ARCH__).
    r85.core_macros_by_chip = true;
    r85.wait_extra_sync = {{types_of(KernelType::aic_only), types_of(KernelType::aiv_only), true}};
    rows.push_back(std::move(r85));
    // graph-autofusion master e1cbeb9b (9.0.0-beta.1 9c7e976c differs by one log line) with
    // asc-devkit 9.0.0 1ea13f3b (9.1.0 74353d20 and master 0da921b9 write the same kernel list).
    CannRelease r90{CannVersion::v9_0,       "9.0", "e1cbeb9b", "1ea13f3b", vendor_defaults(),
                    {"blockNum", true, true}};
    r90.honours_dcci_disable_flag = true;
    r90.option_dcci_disable_on_kernel = true;
    // gen_wait_block_extra_sync by device type: after a cube sub-kernel the vector cores (before
    // a vector or MIX one), after a vector one the cube cores (before a cube one).
    r90.wait_extra_sync = {{k_aic, k_aiv, true}, {k_aic, k_mix, true}, {k_aiv, k_aic, false}};
    // super_kernel_op_infos.py update_superkernel_blocknum_by_debug_options: the two range
    // checks (423ae264's update_superkernel_blockdim_by_debug_options checks the ratio only).
    r90.plan_checks = {true, "9.0"};
    // What the graph engine builds: asc-devkit's own copy of the generator
    // (asc_op_compiler/super_kernel*.py, ascendc_super_kernel_plus) at 1ea13f3b, 74353d20 and
    // 0da921b9 alike. super_kernel_utility.py get_wait_flag_for_chip (PIPE_S on c310);
    // super_kernel.py gen_2_real_stream_* (always_inline); super_kernel_op_infos.py
    // add_define_options (__ASCENDC_DAVID_SPLIT_CORE__ for MIX 1:1 on c310) and gen_compile_info
    // (basic_api/reg_compute, -I<asc>).
    r90.c310_flags = C310Flags::ffts_pipe_s;
    r90.two_stream_always_inline = true;
    r90.c310_mix_1_1_split_core_define = true;
    r90.reg_compute_includes = true;
    rows.push_back(r90);
    // asc-devkit 9.1.0 74353d20 (v9.1.0.pre 5884fea's line; master 0da921b9 the same in what
    // follows) with the graph-autofusion generator 9.0 follows: the same kernel list and rules,
    // but operator JSONs without debugOptions/debugBufSize (883c0f8b compile_op.py
    // _json_except_info: only a SuperKernel's timestamp_option writes them).
    CannRelease r91 = r90;
    r91.version = CannVersion::v9_1;
    r91.name = "9.1";
    r91.asc_devkit = "74353d20";
    r91.plan_checks = {true, "9.1"};
    r91.operator_json_debug_fields = false;
    rows.push_back(std::move(r91));
    return rows;
}

// The leading "<major>.<minor>" of a version text, or nullopt.
std::optional<std::pair<int, int>> major_minor(std::string_view text) {
    int major = 0, minor = 0;
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, major);
    if (ec != std::errc() || p == end || *p != '.')
        return std::nullopt;
    auto [q, ec2] = std::from_chars(p + 1, end, minor);
    if (ec2 != std::errc() || (q != end && *q != '.' && *q != '-'))
        return std::nullopt;
    return std::pair{major, minor};
}

} // namespace

const std::vector<CannRelease>& cann_releases() {
    static const std::vector<CannRelease> rows = make_rows();
    return rows;
}

const CannRelease& cann_release(CannVersion version) {
    for (const auto& r : cann_releases())
        if (r.version == version)
            return r;
    throw Error("no conventions for this CANN release"); // every enumerator has a row
}

std::optional<CannVersion> parse_cann_version(std::string_view text) {
    auto mm = major_minor(text);
    if (!mm)
        return std::nullopt;
    if (mm->first == 8 && mm->second == 5)
        return CannVersion::v8_5;
    if (mm->first == 9)
        return mm->second == 0 ? CannVersion::v9_0 : CannVersion::v9_1;
    return std::nullopt;
}

std::optional<std::string> installed_cann_version(const std::string& ascend_home) {
    return kernel::toolkit_version(ascend_home);
}

const CannRelease& select_cann_release(const std::string& requested, const std::string& ascend_home,
                                       std::string& where) {
    if (!requested.empty()) {
        auto v = parse_cann_version(requested);
        if (!v)
            throw Error("--cann-version '" + requested +
                            "' names no CANN release skforge knows: " + "give 8.5, 9.0 or 9.1",
                        support::ErrorKind::usage);
        where = "--cann-version " + requested;
        return cann_release(*v);
    }
    if (auto installed = installed_cann_version(ascend_home)) {
        auto v = parse_cann_version(*installed);
        if (!v)
            throw Error("the CANN toolkit at " + ascend_home + " is version '" + *installed +
                        "', whose SuperKernel conventions skforge does not know: give "
                        "--cann-version 8.5, 9.0 or 9.1 for the line to follow");
        where = "the toolkit at " + ascend_home + " (Version=" + *installed + ")";
        return cann_release(*v);
    }
    where = "the default (no --cann-version, no toolkit version found)";
    return cann_release(k_default_cann_version);
}

} // namespace skforge::codegen
