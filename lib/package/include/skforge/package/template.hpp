// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace skforge::package {

namespace templates {
extern const std::string_view k_run_stub_sh;      ///< share/skforge/run-stub.sh.in
extern const std::string_view k_install_sh;       ///< share/skforge/install.sh.in
extern const std::string_view k_uninstall_sh;     ///< share/skforge/uninstall.sh.in
extern const std::string_view k_fallback_lib_sh;  ///< share/skforge/fallback-lib.sh.in
extern const std::string_view k_uninstall_all_sh; ///< share/skforge/uninstall-all.sh.in
} // namespace templates

/// Replaces every `@KEY@` (KEY of A-Z, 0-9, _) in `text` by `values[KEY]`; throws when a key has
/// no value, so a template and its caller cannot drift apart silently.
std::string render_template(std::string_view text,
                            const std::map<std::string, std::string>& values);

} // namespace skforge::package
