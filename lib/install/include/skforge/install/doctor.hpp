// SPDX-License-Identifier: Apache-2.0
#pragma once

// `skinstall doctor`: what CANN's runtime will see of an installed tree, in one report, and
// each thing that would make it miss a kernel with what to do (share/doc/explain.md).
#include "skforge/install/layout.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace skforge::install {

/// GetBuiltInBasePath (opbase 9.0.0, 9.1.0, master): `$ASCEND_HOME_PATH/opp_latest` as written
/// when it resolves, else `$ASCEND_OPP_PATH` as written, else "" (no static kernels). nullptr:
/// the variable is unset.
std::string runtime_base_path(const char* ascend_home, const char* ascend_opp_path);

/// What doctor is told about the host.
struct DoctorInput {
    std::string install_path;                   ///< as given (the tree checked)
    std::string base_path;                      ///< runtime_base_path of the environment
    std::string base_from;                      ///< which variable gave it
    std::optional<std::string> toolkit_version; ///< the toolkit's Version= ("" unknown)
    std::string toolkit_root;                   ///< where it was read ($ASCEND_HOME_PATH)
    std::string toolkit_from; ///< the file (or --cann-version) toolkit_version came from
    std::string soc_dir;      ///< the host's SoC directory ("" unknown)
};

/// The report: {base_path, base_from, tree, toolkit {version, line}, soc_dirs, packages,
/// shadowed, locks, verify, problems: [{problem, fix}], notes}. The caller holds a shared lock.
nlohmann::json doctor(const InstallTree& tree, const DoctorInput& in);
/// Its text, one line per fact and per problem.
std::vector<std::string> doctor_text(const nlohmann::json& report);

} // namespace skforge::install
