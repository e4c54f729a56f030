// SPDX-License-Identifier: Apache-2.0
/* skforge host kernel ABI, version 1 (share/doc/host-target.md).
 *
 * A host sub-kernel is a C++ function compiled into an object file. The runtime, or a generated
 * SuperKernel, calls it once per block with a context that says which block it is, how many blocks
 * the launch has, which kind of core runs it, its arguments (inputs, then outputs, each with its
 * shape and dtype) and its workspace. A kernel must give the same bits whatever worker runs a
 * block: every output element is written by exactly one block, in an order that does not depend
 * on the number of blocks or workers.
 *
 * Write a kernel as
 *
 *     #include "skforge_host_kernel.h"
 *     SKFORGE_HOST_KERNEL(ctx) { ... }
 *
 * `skc compile` defines SKFORGE_KERNEL_NAME as the metadata's kernelName, so one source can serve
 * several kernels. Keep helpers `static` or in an anonymous namespace: the sub-kernels of a
 * SuperKernel are linked into one shared object.
 */
#ifndef SKFORGE_HOST_KERNEL_H
#define SKFORGE_HOST_KERNEL_H

#include <sched.h>
#include <stdint.h>
#include <string.h>

#define SK_HOST_ABI_VERSION 1u
#define SK_MAX_RANK 8

/* Element types (the graph's dtype names). */
enum sk_dtype {
    SK_DT_FLOAT32 = 0,
    SK_DT_FLOAT16 = 1,
    SK_DT_BFLOAT16 = 2,
    SK_DT_INT8 = 3,
    SK_DT_UINT8 = 4,
    SK_DT_INT16 = 5,
    SK_DT_INT32 = 6,
    SK_DT_INT64 = 7,
    SK_DT_BOOL = 8,
};

/* Core kinds, as bits: a worker may be a vector core, a cube core, or (with one worker) both. */
enum sk_core_kind { SK_CORE_VECTOR = 1u, SK_CORE_CUBE = 2u, SK_CORE_ANY = 3u };

/* One argument: where it is, its element type and its shape. */
typedef struct sk_tensor {
    void* data;
    uint32_t dtype;
    uint32_t rank;
    int64_t shape[SK_MAX_RANK];
} sk_tensor;

/* What a kernel is called with, once per block. */
typedef struct sk_kernel_ctx {
    uint32_t abi_version; /* SK_HOST_ABI_VERSION */
    uint32_t block_idx;   /* 0 .. block_num-1 */
    uint32_t block_num;   /* the kernel's blockDim */
    uint32_t core_kind;   /* SK_CORE_* bits of the core running this block */
    uint32_t num_inputs;
    uint32_t num_outputs;
    const sk_tensor* args; /* num_inputs inputs, then num_outputs outputs */
    void* workspace;       /* the metadata's workspace bytes, private to this kernel launch */
    uint64_t workspace_size;
} sk_kernel_ctx;

typedef void (*sk_kernel_fn)(const sk_kernel_ctx*);

#ifndef SKFORGE_KERNEL_NAME
#define SKFORGE_KERNEL_NAME sk_kernel
#endif
#ifdef __cplusplus
#define SK_EXTERN_C extern "C"
#else
#define SK_EXTERN_C
#endif
#define SK_EXPORT __attribute__((visibility("default")))
#define SKFORGE_HOST_KERNEL(ctx)                                                                   \
    SK_EXTERN_C SK_EXPORT void SKFORGE_KERNEL_NAME(const sk_kernel_ctx* ctx)

/* ---- Helpers for kernels ---------------------------------------------------------------- */

/* Bytes of one element of `dtype`. */
static inline uint32_t sk_dtype_size(uint32_t dtype) {
    switch (dtype) {
    case SK_DT_FLOAT16:
    case SK_DT_BFLOAT16:
    case SK_DT_INT16:
        return 2;
    case SK_DT_INT8:
    case SK_DT_UINT8:
    case SK_DT_BOOL:
        return 1;
    case SK_DT_INT64:
        return 8;
    default:
        return 4;
    }
}

/* Elements of a tensor. */
static inline int64_t sk_numel(const sk_tensor* t) {
    int64_t n = 1;
    for (uint32_t i = 0; i < t->rank; ++i)
        n *= t->shape[i];
    return n;
}

/* The last dimension (1 for a scalar) and the product of the others. */
static inline int64_t sk_cols(const sk_tensor* t) {
    return t->rank ? t->shape[t->rank - 1] : 1;
}
static inline int64_t sk_rows(const sk_tensor* t) {
    return sk_numel(t) / (sk_cols(t) ? sk_cols(t) : 1);
}

/* This block's share [*begin, *end) of `total` items, split as evenly as possible. */
static inline void sk_block_range(const sk_kernel_ctx* ctx, int64_t total, int64_t* begin,
                                  int64_t* end) {
    *begin = total * (int64_t)ctx->block_idx / (int64_t)ctx->block_num;
    *end = total * ((int64_t)ctx->block_idx + 1) / (int64_t)ctx->block_num;
}

/* IEEE binary16 <-> binary32, round to nearest even. */
static inline float sk_half_to_float(uint16_t h) {
    /* Shift exponent and mantissa into place and rescale by 2^112: exact for normal and
       subnormal halves alike; infinities and NaNs keep an all-ones exponent. */
    uint32_t bits = (uint32_t)(h & 0x7fffu) << 13;
    float f;
    if ((h & 0x7c00u) == 0x7c00u) {
        bits |= 0x7f800000u;
        memcpy(&f, &bits, sizeof f);
    } else {
        memcpy(&f, &bits, sizeof f);
        f *= 5.192296858534828e33f; /* 2^112 */
    }
    memcpy(&bits, &f, sizeof bits);
    bits |= (uint32_t)(h & 0x8000u) << 16;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint16_t sk_float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf or nan */
        return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
    if (absx >= 0x477ff000u) /* rounds past the largest half */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) { /* subnormal or zero in half */
        if (absx < 0x33000000u)
            return sign;
        uint32_t e = absx >> 23;
        uint32_t m = (absx & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e; /* 14 .. 24 */
        uint32_t half_m = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1u);
        if (rem > halfway || (rem == halfway && (half_m & 1u)))
            ++half_m;
        return (uint16_t)(sign | half_m);
    }
    uint32_t r = absx - 0x38000000u; /* rebias 127 -> 15 */
    uint32_t half = r >> 13;
    uint32_t rem = r & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u)))
        ++half;
    return (uint16_t)(sign | half);
}

/* Element `i` of a float-like tensor (float32, float16, bfloat16, int8, int32) as float. */
static inline float sk_load(const sk_tensor* t, int64_t i) {
    switch (t->dtype) {
    case SK_DT_FLOAT16:
        return sk_half_to_float(((const uint16_t*)t->data)[i]);
    case SK_DT_BFLOAT16: {
        uint32_t bits = (uint32_t)((const uint16_t*)t->data)[i] << 16;
        float f;
        memcpy(&f, &bits, sizeof f);
        return f;
    }
    case SK_DT_INT8:
        return (float)((const int8_t*)t->data)[i];
    case SK_DT_INT32:
        return (float)((const int32_t*)t->data)[i];
    default:
        return ((const float*)t->data)[i];
    }
}

/* Stores `v` as element `i` of a float-like tensor (rounding to nearest even). */
static inline void sk_store(const sk_tensor* t, int64_t i, float v) {
    switch (t->dtype) {
    case SK_DT_FLOAT16:
        ((uint16_t*)t->data)[i] = sk_float_to_half(v);
        break;
    case SK_DT_BFLOAT16: {
        uint32_t bits;
        memcpy(&bits, &v, sizeof bits);
        bits += 0x7fffu + ((bits >> 16) & 1u);
        ((uint16_t*)t->data)[i] = (uint16_t)(bits >> 16);
        break;
    }
    case SK_DT_INT8: {
        float c = v > 127.0f ? 127.0f : v < -128.0f ? -128.0f : v;
        ((int8_t*)t->data)[i] = (int8_t)__builtin_roundf(c);
        break;
    }
    case SK_DT_INT32:
        ((int32_t*)t->data)[i] = (int32_t)v;
        break;
    default:
        ((float*)t->data)[i] = v;
        break;
    }
}

/* Elements [i, i + n) of a float-like tensor as floats into `out` (the dtype is checked once). */
static inline void sk_load_row(const sk_tensor* t, int64_t i, int64_t n, float* out) {
    int64_t k;
    switch (t->dtype) {
    case SK_DT_FLOAT32:
        memcpy(out, (const float*)t->data + i, (size_t)n * sizeof(float));
        break;
    case SK_DT_FLOAT16:
        for (k = 0; k < n; ++k)
            out[k] = sk_half_to_float(((const uint16_t*)t->data)[i + k]);
        break;
    case SK_DT_INT8:
        for (k = 0; k < n; ++k)
            out[k] = (float)((const int8_t*)t->data)[i + k];
        break;
    default:
        for (k = 0; k < n; ++k)
            out[k] = sk_load(t, i + k);
        break;
    }
}

/* ---- SuperKernel side: generated entries and the runtime --------------------------------- */

/* One worker standing in for an AI core during a SuperKernel launch. */
typedef struct sk_core {
    uint32_t worker;      /* 0 .. workers-1 */
    uint32_t workers;     /* workers in the launch */
    uint32_t kinds;       /* SK_CORE_* bits of this worker */
    uint32_t rank_in[4];  /* by mask 1..3: this worker's index among workers sharing a bit */
    uint32_t count_in[4]; /* by mask 1..3: how many workers share a bit with the mask */
    /* Waits until every worker sharing a bit with `mask` has called it (vector 1, cube 2,
       full 3). */
    void (*barrier)(const struct sk_core* core, uint32_t mask);
    void* device;
} sk_core;

/* A generated SuperKernel entry: called on every worker of a launch. `params` is the parameter
   block (buffer pointers, workspace pointer, event flags), `sync` the zeroed early-start
   flags. */
typedef void (*sk_entry_fn)(const sk_core* core, unsigned char* params, uint64_t* sync);

/* Runs this worker's blocks of a kernel that runs on cores of `mask`. */
static inline void sk_run_blocks(const sk_core* core, uint32_t mask, sk_kernel_fn fn,
                                 sk_kernel_ctx ctx) {
    if ((core->kinds & mask) == 0)
        return;
    for (uint32_t b = core->rank_in[mask]; b < ctx.block_num; b += core->count_in[mask]) {
        ctx.block_idx = b;
        ctx.core_kind = core->kinds & mask;
        fn(&ctx);
    }
}

static inline void sk_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* A flag another worker waits on: each worker that finished the setting kernel adds one. */
static inline void sk_flag_arrive(uint64_t* flag) {
    __atomic_fetch_add(flag, 1, __ATOMIC_RELEASE);
}

/* Waits until `count` workers arrived at `flag`. */
static inline void sk_flag_wait(const uint64_t* flag, uint64_t count) {
    unsigned spins = 0;
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < count) {
        if (++spins < 64)
            sk_cpu_relax();
        else
            sched_yield();
    }
}

#endif /* SKFORGE_HOST_KERNEL_H */
