// SPDX-License-Identifier: Apache-2.0
// SwiGLU: x[..., 2I] -> y[..., I] = silu(x[..., :I]) * x[..., I:].
#include "skforge_host_kernel.h"

#include <cmath>

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* x = &ctx->args[0];
    const sk_tensor* y = &ctx->args[ctx->num_inputs];
    int64_t half = sk_cols(x) / 2, begin, end;
    sk_block_range(ctx, sk_rows(x), &begin, &end);
    for (int64_t r = begin; r < end; ++r)
        for (int64_t c = 0; c < half; ++c) {
            float a = sk_load(x, r * 2 * half + c);
            float b = sk_load(x, r * 2 * half + half + c);
            sk_store(y, r * half + c, a / (1.0f + std::exp(-a)) * b);
        }
}
