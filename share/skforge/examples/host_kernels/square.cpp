// SPDX-License-Identifier: Apache-2.0
// Square: y = x * x elementwise.
#include "skforge_host_kernel.h"

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* x = &ctx->args[0];
    const sk_tensor* y = &ctx->args[ctx->num_inputs];
    int64_t begin, end;
    sk_block_range(ctx, sk_numel(y), &begin, &end);
    for (int64_t i = begin; i < end; ++i) {
        float v = sk_load(x, i);
        sk_store(y, i, v * v);
    }
}
