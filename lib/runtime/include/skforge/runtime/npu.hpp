// SPDX-License-Identifier: Apache-2.0
#pragma once

// The NPU executor: CANN's runtime (libascendcl.so) loaded with dlopen when a package is opened on
// npu:<id>; nothing of CANN is needed to build skforge. See share/doc/runtime.md.
#include "skforge/package/manifest.hpp"
#include "skforge/runtime/open.hpp"

#include <memory>
#include <string>

namespace skforge::runtime {

/// The name dlopen is given ($SKFORGE_ASCENDCL overrides it, for tests and unusual installs).
std::string ascendcl_library();

/// Loads CANN's runtime and the package in `dir` (its npu/program.json, share/doc/npu-program.md)
/// for device `device_id`: binaries registered, memory allocated, streams and events created;
/// fills `o`'s description of the package. Throws ApiError: SKF_E_DEVICE naming CANN's
/// set_env.sh when libascendcl.so cannot be loaded, or naming the call that failed;
/// SKF_E_PACKAGE when the package has no NPU program (a host package, an older skc's).
/// Reads and checks an NPU program `text` (of `file`, named in errors) as npu_executor does
/// before it touches the device: every count, index, rank, size and slot. Throws an Error (or
/// an ApiError SKF_E_PACKAGE) naming the file and the field.
void check_npu_program(const std::string& text, const std::string& file);

std::unique_ptr<Executor> npu_executor(const std::string& dir, unsigned device_id, Opened& o);

/// Refuses (ApiError SKF_E_UNSUPPORTED, naming both releases or SoCs) package `m` when its CANN
/// stamp names another line than the CANN that CANN's runtime reports (aclsysGetCANNVersion),
/// or its SoC is not the device's (aclrtGetSocName); what the library does not report is not
/// checked. $SKFORGE_IGNORE_CANN_VERSION=1 turns the release check off (share/doc/cann-stamp.md).
void check_device_fits(const package::Manifest& m, unsigned device_id);

} // namespace skforge::runtime
