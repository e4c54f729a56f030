// SPDX-License-Identifier: Apache-2.0
// The conventions table per CANN release line, and how a compile picks its line.
#include "skforge/codegen/cann_release.hpp"
#include "skforge/support/error.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace skforge;
using codegen::CannVersion;

TEST_CASE("cann release: version texts name their line", "[codegen][cann_release]") {
    CHECK(codegen::parse_cann_version("8.5") == CannVersion::v8_5);
    CHECK(codegen::parse_cann_version("8.5.0") == CannVersion::v8_5);
    CHECK(codegen::parse_cann_version("8.5.0-beta.1") == CannVersion::v8_5);
    CHECK(codegen::parse_cann_version("9.0") == CannVersion::v9_0);
    CHECK(codegen::parse_cann_version("9.0.1") == CannVersion::v9_0);
    CHECK(codegen::parse_cann_version("9.1.RC1") == CannVersion::v9_1);
    CHECK(codegen::parse_cann_version("9.1") == CannVersion::v9_1);
    CHECK(codegen::parse_cann_version("9.1.0-beta.3") == CannVersion::v9_1);
    CHECK(codegen::parse_cann_version("9.2.0") == CannVersion::v9_1); // as asc-devkit master
    for (const char* bad : {"", "8", "8.0.RC2", "8.50", "10.0", "v9.0", "9.0x", "9."})
        CHECK_FALSE(codegen::parse_cann_version(bad).has_value());
}

TEST_CASE("cann release: each line's kernel-list keys and generator rules, as read",
          "[codegen][cann_release]") {
    const auto& r85 = codegen::cann_release(CannVersion::v8_5);
    const auto& r90 = codegen::cann_release(CannVersion::v9_0);
    CHECK(r85.name == "8.5");
    CHECK(r90.name == "9.0");
    // asc-devkit compile_op.py _json_except_info: blockDim at eeb99217, blockNum and the two
    // new keys at 1ea13f3b.
    CHECK(r85.kernel_list.block_key == "blockDim");
    CHECK_FALSE(r85.kernel_list.op_type);
    CHECK_FALSE(r85.kernel_list.dcci_disable);
    CHECK(r90.kernel_list.block_key == "blockNum");
    CHECK(r90.kernel_list.op_type);
    CHECK(r90.kernel_list.dcci_disable);
    CHECK_FALSE(r85.option_dcci_disable_on_kernel);
    CHECK(r90.option_dcci_disable_on_kernel);
    // Both generators' defaults for an option not given.
    for (const auto* r : {&r85, &r90}) {
        CHECK(r->option_defaults.func_align == 512);
        CHECK(r->option_defaults.early_start == 1);
        CHECK_FALSE(r->option_defaults.stream_fusion);
        CHECK(r->option_defaults.split_mode == 4);
        CHECK(r->option_defaults.preload_code == graph::PreloadCode::per_func);
    }
    // 9.1 (asc-devkit 74353d20): 9.0's kernel list and rules; operator JSONs without
    // debugOptions/debugBufSize since 883c0f8b.
    const auto& r91 = codegen::cann_release(CannVersion::v9_1);
    CHECK(r91.name == "9.1");
    CHECK(r91.asc_devkit == "74353d20");
    CHECK(r91.kernel_list.block_key == "blockNum");
    CHECK(r91.kernel_list.op_type);
    CHECK(r91.kernel_list.dcci_disable);
    CHECK(r91.option_dcci_disable_on_kernel);
    CHECK(r91.honours_dcci_disable_flag == r90.honours_dcci_disable_flag);
    CHECK(r91.wait_extra_sync.size() == r90.wait_extra_sync.size());
    CHECK(r91.plan_checks.debug_cores_in_range);
    CHECK(r91.plan_checks.release == "9.1");
    CHECK(r85.operator_json_debug_fields);
    CHECK(r90.operator_json_debug_fields);
    CHECK_FALSE(r91.operator_json_debug_fields);
    // What asc-devkit's own generator (the graph engine's) writes from 1ea13f3b on, and its
    // 8.5 copy (eeb99217) does not: the dav-3510 wait, always-inline two-stream programs, the
    // MIX 1:1 define on dav-3510, the reg_compute header directories.
    CHECK(r85.c310_flags == codegen::C310Flags::cross_core);
    CHECK_FALSE(r85.two_stream_always_inline);
    CHECK_FALSE(r85.c310_mix_1_1_split_core_define);
    CHECK_FALSE(r85.reg_compute_includes);
    for (const auto* r : {&r90, &r91}) {
        CHECK(r->c310_flags == codegen::C310Flags::ffts_pipe_s);
        CHECK(r->two_stream_always_inline);
        CHECK(r->c310_mix_1_1_split_core_define);
        CHECK(r->reg_compute_includes);
    }
    CHECK(codegen::cann_releases().size() == 3);
}

TEST_CASE("cann release: --cann-version, else the toolkit's version.info, else the default",
          "[codegen][cann_release]") {
    test::ScopedTempDir home;
    std::string where;
    // Nothing installed: the default, and the log says so.
    CHECK(codegen::select_cann_release("", "", where).version == codegen::k_default_cann_version);
    CHECK(where.find("default") != std::string::npos);
    CHECK(codegen::select_cann_release("", home.path(), where).version ==
          codegen::k_default_cann_version);
    // The toolkit's compiler/version.info (what asc-devkit's gen_version_info.sh reads).
    test::write_text(home / "compiler/version.info", "Version=8.5.0\nother=1\n");
    CHECK(codegen::installed_cann_version(home.path()) == "8.5.0");
    CHECK(codegen::select_cann_release("", home.path(), where).version == CannVersion::v8_5);
    CHECK(where.find("Version=8.5.0") != std::string::npos);
    // --cann-version wins over the toolkit.
    CHECK(codegen::select_cann_release("9.0", home.path(), where).version == CannVersion::v9_0);
    CHECK(where == "--cann-version 9.0");
    // A toolkit whose line the table does not have is refused, naming it.
    test::write_text(home / "compiler/version.info", "Version=8.0.RC2\n");
    try {
        codegen::select_cann_release("", home.path(), where);
        FAIL("an unknown toolkit version was accepted");
    } catch (const support::Error& e) {
        CHECK(std::string(e.what()).find("8.0.RC2") != std::string::npos);
        CHECK(std::string(e.what()).find("--cann-version") != std::string::npos);
    }
    // An unknown --cann-version is a usage error.
    try {
        codegen::select_cann_release("7.0", "", where);
        FAIL("--cann-version 7.0 was accepted");
    } catch (const support::Error& e) {
        CHECK(e.kind() == support::ErrorKind::usage);
    }
}
