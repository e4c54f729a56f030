// SPDX-License-Identifier: Apache-2.0
#pragma once

// The part of CANN's public runtime API (acl/acl_rt.h, acl/acl.h) the NPU executor calls,
// declared here from the API reference's prototypes (hicann/runtime
// include/external/acl/acl_rt.h) and resolved with dlsym: nothing of CANN is needed to build.
#include <cstddef>
#include <cstdint>
#include <string>

namespace skforge::runtime::acl {

using Error = int; ///< aclError; 0 is ACL_SUCCESS
inline constexpr Error k_success = 0;
inline constexpr Error k_repeat_initialize = 100002;    ///< ACL_ERROR_REPEAT_INITIALIZE
inline constexpr int k_malloc_huge_first = 0;           ///< ACL_MEM_MALLOC_HUGE_FIRST
inline constexpr int k_memcpy_host_to_device = 1;       ///< ACL_MEMCPY_HOST_TO_DEVICE
inline constexpr int k_memcpy_device_to_host = 2;       ///< ACL_MEMCPY_DEVICE_TO_HOST
inline constexpr int k_load_option_magic = 2;           ///< ACL_RT_BINARY_LOAD_OPT_MAGIC
inline constexpr int k_load_option_cpu_kernel_mode = 3; ///< ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE
inline constexpr int k_cpu_kernel_mode_data = 2;        ///< cpuKernelMode 2: "load data" (opbase)
inline constexpr int k_cmo_prefetch = 0;                ///< ACL_RT_CMO_TYPE_PREFETCH
inline constexpr std::uint32_t k_wait_value_eq = 1;     ///< ACL_STREAM_WAIT_VALUE_EQ
inline constexpr int k_attr_schedule_mode = 1;          ///< ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE
inline constexpr int k_attr_dyn_ubuf_size = 2;          ///< ..._DYN_UBUF_SIZE (localMemorySize)
inline constexpr int k_overflow_saturation = 0;         ///< ACL_RT_OVERFLOW_MODE_SATURATION
inline constexpr int k_overflow_infnan = 1;             ///< ACL_RT_OVERFLOW_MODE_INFNAN

/// aclrtBinaryLoadOption and aclrtBinaryLoadOptions.
struct BinaryLoadOption {
    int type;
    union {
        std::uint32_t magic;
        std::int32_t cpu_kernel_mode;
        std::uint32_t rsv[4];
    } value;
};
struct BinaryLoadOptions {
    BinaryLoadOption* options;
    std::size_t num_options;
};

/// aclrtLaunchKernelAttr (its value union is 16 bytes) and aclrtLaunchKernelCfg.
struct LaunchKernelAttr {
    int id;
    union {
        std::uint8_t schedule_mode;
        std::uint32_t dyn_ubuf_size;
        std::uint32_t rsv[4];
    } value;
};
struct LaunchKernelCfg {
    LaunchKernelAttr* attrs;
    std::size_t num_attrs;
};

/// aclCANNPackageVersion (acl/acl.h): text fields, each NUL-terminated.
inline constexpr int k_pkg_name_cann = 0; ///< ACL_PKG_NAME_CANN
struct CannPackageVersion {
    char version[128]; ///< the full version, e.g. "9.1.0"
    char major_version[64];
    char minor_version[64];
    char release_version[64];
    char patch_version[64];
    char reserved[128];
};

/// The functions, as dlsym found them in libascendcl.so.
struct Api {
    Error (*init)(const char* config_path);
    Error (*set_device)(std::int32_t device);
    Error (*create_stream)(void** stream);
    Error (*destroy_stream)(void* stream);
    Error (*synchronize_stream)(void* stream);
    Error (*create_event)(void** event);
    Error (*destroy_event)(void* event);
    Error (*record_event)(void* event, void* stream);
    Error (*stream_wait_event)(void* stream, void* event);
    Error (*malloc)(void** ptr, std::size_t size, int policy);
    Error (*free)(void* ptr);
    Error (*memset)(void* ptr, std::size_t max, std::int32_t value, std::size_t count);
    Error (*memcpy)(void* dst, std::size_t max, const void* src, std::size_t count, int kind);
    Error (*get_hardware_sync_addr)(void** addr);
    Error (*binary_load_from_data)(const void* data, std::size_t length,
                                   const BinaryLoadOptions* options, void** binary);
    Error (*binary_unload)(void* binary);
    Error (*binary_get_function)(void* binary, const char* name, void** function);
    Error (*kernel_args_init)(void* function, void** args);
    Error (*kernel_args_append)(void* args, void* param, std::size_t size, void** param_handle);
    Error (*kernel_args_append_place_holder)(void* args, void** param_handle);
    Error (*kernel_args_get_place_holder_buffer)(void* args, void* param_handle, std::size_t size,
                                                 void** buffer);
    Error (*kernel_args_finalize)(void* args);
    Error (*launch_kernel_with_config)(void* function, std::uint32_t block_dim, void* stream,
                                       LaunchKernelCfg* config, void* args, void* reserve);
    // Operators beside the cores: an AICPU kernel, a CMO prefetch, memory-semantic notify/wait.
    Error (*register_cpu_func)(void* binary, const char* function, const char* op_type,
                               void** handle);
    Error (*launch_kernel_with_host_args)(void* function, std::uint32_t block_dim, void* stream,
                                          LaunchKernelCfg* config, void* args, std::size_t size,
                                          void* place_holders, std::size_t place_holder_count);
    Error (*cmo_async)(void* src, std::size_t size, int type, void* stream);
    Error (*value_write)(void* address, std::uint64_t value, std::uint32_t flag, void* stream);
    Error (*value_wait)(void* address, std::uint64_t value, std::uint32_t flag, void* stream);
    // The float overflow address opbase puts after a static kernel's tiling (optional: null when
    // the library lacks them).
    Error (*get_device_sat_mode)(int* mode) = nullptr;
    Error (*ctx_get_float_overflow_addr)(void** address) = nullptr;
    // What the host runs, checked against a package's CANN stamp (optional: null when the
    // library lacks them, and then not checked).
    Error (*get_cann_version)(int name, CannPackageVersion* version) = nullptr;
    const char* (*get_soc_name)() = nullptr;
};

/// Resolves every function of Api in the library `handle`; throws an ApiError (SKF_E_DEVICE)
/// naming `library` and the first symbol it lacks.
Api resolve(void* handle, const std::string& library);

} // namespace skforge::runtime::acl
