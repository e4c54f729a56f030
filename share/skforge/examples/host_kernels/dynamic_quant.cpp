// SPDX-License-Identifier: Apache-2.0
// DynamicQuant: per-row symmetric int8 quantisation. x[R,C] -> q[R,C] int8 = round(x / s),
// scale[R] float32 = s = max|x| / 127 (1 for an all-zero row).
#include "skforge_host_kernel.h"

#include <cmath>

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* x = &ctx->args[0];
    const sk_tensor* q = &ctx->args[ctx->num_inputs];
    const sk_tensor* scale = &ctx->args[ctx->num_inputs + 1];
    int64_t cols = sk_cols(x), begin, end;
    sk_block_range(ctx, sk_rows(x), &begin, &end);
    for (int64_t r = begin; r < end; ++r) {
        float amax = 0.0f;
        for (int64_t c = 0; c < cols; ++c)
            amax = std::fmax(amax, std::fabs(sk_load(x, r * cols + c)));
        float s = amax > 0.0f ? amax / 127.0f : 1.0f;
        for (int64_t c = 0; c < cols; ++c)
            sk_store(q, r * cols + c, sk_load(x, r * cols + c) / s);
        sk_store(scale, r, s);
    }
}
