/* SPDX-License-Identifier: Apache-2.0 */
/*
 * skforge/runtime.h — the C interface of libskforge_runtime (soname libskforge_runtime.so.0).
 *
 * Opens a package that skinstall installed and runs its program: every SuperKernel as one
 * launch, every operator left out as a launch of its own kernel, in the plan's stream order
 * with its events. Tensors are bound by their graph names to the caller's memory.
 *
 * The model is SQLite's C interface: opaque handles opened and closed in pairs, every call
 * returns a code (SKF_OK, or a negative SKF_E_* code), the message of the calling thread's last
 * call is kept for it (skf_last_error), and the version is a function. Nothing of C++
 * crosses this interface. A handle is used by one thread at a time; different handles may be
 * used from different threads at once.
 *
 * Guide, complete examples and what is verified where: share/doc/runtime.md.
 */
#ifndef SKFORGE_RUNTIME_H
#define SKFORGE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SKF_API __attribute__((visibility("default")))
#else
#define SKF_API
#endif

/* The version this header describes; skf_version() is the library's (they may differ when an
 * application runs with a newer library of the same soname). */
#define SKF_VERSION "0.1.0"
#define SKF_VERSION_NUMBER 1000 /* major * 1000000 + minor * 1000 + patch */

/* Result codes: SKF_OK, or one of these (always negative). */
#define SKF_OK 0
#define SKF_E_ARGUMENT (-1)  /* a bad argument: NULL, a bad device string, an index out of range */
#define SKF_E_NOT_FOUND (-2) /* no such package, tensor or SuperKernel */
#define SKF_E_UNBOUND (-3)   /* a run needs tensors that are not bound; the message names them */
/* the package is damaged, changed since install, or of another version */
#define SKF_E_PACKAGE (-4)
#define SKF_E_DEVICE (-5) /* the device runtime is missing or failed (CANN, libascendcl.so) */
/* this package cannot do that on this device; the message says why */
#define SKF_E_UNSUPPORTED (-6)
#define SKF_E_MISUSE (-7) /* a handle that is closed or did not come from skf_open */
#define SKF_E_MEMORY (-8) /* out of memory */

/* An open package. */
typedef struct skf_package skf_package;

/* A tensor of the package's graph that the caller may bind. */
typedef struct {
    const char* name; /* graph tensor name; valid until skf_close */
    int is_output;    /* 1: a graph output; 0: a graph input or an intermediate (skf_tensor_role) */
    const char* dtype; /* graph dtype name: float32, float16, bfloat16, int8, int32, ... */
    int rank;          /* number of dims (at most 8) */
    int64_t dims[8];
    size_t bytes; /* size of the memory skf_bind must be given */
} skf_tensor_info;

/* Opens `package` installed under `install_path` (the toolkit root, as for skinstall; NULL:
 * $ASCEND_HOME_PATH) on `device`: "host" (worker threads standing in for AI cores, one per CPU),
 * "host:<workers>" (1 to 256 workers) or "npu:<id>". Every installed file is checked against the
 * package's manifest before any of its code is loaded. Workspaces, the arena and the
 * intermediates are allocated here, once. On success *out is the handle and SKF_OK is returned;
 * on failure *out is NULL. */
SKF_API int skf_open(const char* install_path, const char* package, const char* device,
                     skf_package** out);

/* The message of this thread's last call that returned a code: what failed, with names and the
 * reason, or "" when it succeeded (as sqlite3_errmsg). The text stays valid until this thread's
 * next such call. */
SKF_API const char* skf_last_error(void);

/* Number of tensors the caller may bind: graph inputs, graph outputs, and the intermediates that
 * live in memory of their own (not in a SuperKernel's arena). 0 for a bad handle. */
SKF_API size_t skf_tensor_count(const skf_package* pkg);

/* Describes tensor `i` (0 <= i < skf_tensor_count). */
SKF_API int skf_tensor_info_at(const skf_package* pkg, size_t i, skf_tensor_info* out);

/* What tensor `i` is to the graph (< 0 for a bad handle or index). */
#define SKF_ROLE_INPUT 0
#define SKF_ROLE_OUTPUT 1
#define SKF_ROLE_INTERMEDIATE 2
SKF_API int skf_tensor_role(const skf_package* pkg, size_t i);

/* Binds graph tensor `tensor` to `memory` (skf_tensor_info.bytes bytes; device memory on an
 * NPU), replacing an earlier binding; NULL unbinds it. The memory must stay valid while runs use
 * it. An intermediate left unbound uses memory of the package's own. */
SKF_API int skf_bind(skf_package* pkg, const char* tensor, void* memory);

/* Runs the program fused: each SuperKernel one launch, each operator left out its own launch.
 * Every graph input and output must be bound. `stream`: an aclrtStream on an NPU (NULL: the
 * package's own stream), NULL on the host. Returns when the run finished. */
SKF_API int skf_run(skf_package* pkg, void* stream);

/* Runs every operator as its own launch, in graph order. Same bindings as skf_run. */
SKF_API int skf_run_unfused(skf_package* pkg, void* stream);

/* The package's SuperKernels, in launch order. skf_segment_name is NULL for a bad index. */
SKF_API size_t skf_segment_count(const skf_package* pkg);
SKF_API const char* skf_segment_name(const skf_package* pkg, size_t i);

/* The tensors SuperKernel `segment` (0 <= segment < skf_segment_count) reads or writes: what an
 * engine binds before skf_run_segment. skf_segment_tensor_at gives the j-th as an index for
 * skf_tensor_info_at, and whether the SuperKernel writes it. */
SKF_API size_t skf_segment_tensor_count(const skf_package* pkg, size_t segment);
SKF_API int skf_segment_tensor_at(const skf_package* pkg, size_t segment, size_t j, size_t* tensor,
                                  int* writes);

/* Launches SuperKernel `segment` alone (one launch) with the tensors bound so far: every tensor
 * it reads or writes must be bound (the message names any that are not). Its waits on operators
 * outside it count as satisfied: the caller ran those operators. */
SKF_API int skf_run_segment(skf_package* pkg, const char* segment, void* stream);

/* The name of the package's graph, and its number of operators (those beside the cores too). */
SKF_API const char* skf_graph_name(const skf_package* pkg);
SKF_API size_t skf_operator_count(const skf_package* pkg);

/* Counters of a handle. */
typedef struct {
    uint64_t runs;              /* successful skf_run, skf_run_unfused and skf_run_segment calls */
    uint64_t launches;          /* kernel launches of all of them */
    uint64_t last_launches;     /* launches of the last successful run */
    uint64_t last_nanoseconds;  /* wall time of the last successful run (launch to finish) */
    uint64_t total_nanoseconds; /* wall time of all of them */
} skf_stats;

/* Fills *out with the handle's counters. */
SKF_API int skf_get_stats(const skf_package* pkg, skf_stats* out);

/* The device the handle runs on, as skf_open normalised it ("host:4", "npu:0"); NULL for a bad
 * handle. */
SKF_API const char* skf_device(const skf_package* pkg);

/* The library's version ("0.1.0") and its number (SKF_VERSION_NUMBER's form). */
SKF_API const char* skf_version(void);
SKF_API int skf_version_number(void);

/* Device memory for the handle's device (symbol version SKFORGE_RUNTIME_0.1, added after the
 * first interface: an application using them needs a library that has them). On an NPU it is
 * aclrtMalloc'd memory of the handle's device (zeroed), copied with aclrtMemcpy; on the host it is
 * host memory (64-byte aligned, zeroed), copied with memcpy. So a client can fill its inputs, bind,
 * run and read its outputs the same way on either device. What skf_device_malloc returned and
 * skf_device_free did not is freed by skf_close. */
#define SKF_HAS_DEVICE_MEMORY 1

/* *out = `bytes` bytes (at least one) of device memory, zeroed; NULL on failure. */
SKF_API int skf_device_malloc(skf_package* pkg, size_t bytes, void** out);

/* Frees memory of skf_device_malloc of this handle (anything else: SKF_E_ARGUMENT). */
SKF_API int skf_device_free(skf_package* pkg, void* memory);

/* Copies `bytes` bytes from host memory to device memory, and back. */
SKF_API int skf_copy_to_device(skf_package* pkg, void* device, const void* host, size_t bytes);
SKF_API int skf_copy_to_host(skf_package* pkg, void* host, const void* device, size_t bytes);

/* Test switch (host only): the fused run skips every wait on an operator beside the cores (AICPU
 * tiling, prefetch), which then run last — what a missing wait lets happen at worst. */
SKF_API int skf_debug_drop_side_waits(skf_package* pkg, int drop);

/* Closes the handle and frees what skf_open allocated; NULL is a no-op. Bound memory is the
 * caller's and is left alone. */
SKF_API void skf_close(skf_package* pkg);

#ifdef __cplusplus
}
#endif

#endif /* SKFORGE_RUNTIME_H */
