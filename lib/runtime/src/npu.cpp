// SPDX-License-Identifier: Apache-2.0
// The NPU executor over CANN's public runtime API, loaded with dlopen.
#include "skforge/runtime/npu.hpp"

#include "skforge/runtime.h"

#include <cstdlib>
#include <dlfcn.h>

namespace skforge::runtime {

std::string ascendcl_library() {
    const char* env = std::getenv("SKFORGE_ASCENDCL");
    return env != nullptr && *env != '\0' ? env : "libascendcl.so";
}

std::unique_ptr<Executor> npu_executor(const std::string& dir, unsigned device_id, Opened& o) {
    std::string lib = ascendcl_library();
    void* h = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr)
        throw ApiError(SKF_E_DEVICE,
                       "npu:" + std::to_string(device_id) + ": cannot load CANN's runtime " + lib +
                           " (" + ::dlerror() +
                           "); install the CANN toolkit and source its set_env.sh (e.g. 'source "
                           "/usr/local/Ascend/ascend-toolkit/set_env.sh') so that "
                           "LD_LIBRARY_PATH finds libascendcl.so");
    ::dlclose(h);
    throw ApiError(SKF_E_UNSUPPORTED,
                   dir + ": package '" + o.package +
                       "' cannot be run on an NPU by this version of libskforge_runtime: "
                       "the NPU launch path is not built yet (share/doc/runtime.md)");
}

} // namespace skforge::runtime
