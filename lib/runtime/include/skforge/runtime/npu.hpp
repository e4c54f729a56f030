// SPDX-License-Identifier: Apache-2.0
#pragma once

// The NPU executor: CANN's runtime (libascendcl.so) loaded with dlopen when a package is opened on
// npu:<id>; nothing of CANN is needed to build skforge. See share/doc/runtime.md.
#include "skforge/runtime/open.hpp"

#include <memory>
#include <string>

namespace skforge::runtime {

/// The name dlopen is given ($SKFORGE_ASCENDCL overrides it, for tests and unusual installs).
std::string ascendcl_library();

/// Loads CANN's runtime and the package in `dir` for device `device_id`, filling `o`'s
/// description of the package. Throws ApiError: SKF_E_DEVICE naming CANN's set_env.sh when
/// libascendcl.so cannot be loaded, SKF_E_UNSUPPORTED when the package cannot run there.
std::unique_ptr<Executor> npu_executor(const std::string& dir, unsigned device_id, Opened& o);

} // namespace skforge::runtime
