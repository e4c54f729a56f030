// SPDX-License-Identifier: Apache-2.0
// Transpose: x[R,C] (its last dimension C, the rest R) -> y[C,R].
#include "skforge_host_kernel.h"

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* x = &ctx->args[0];
    const sk_tensor* y = &ctx->args[ctx->num_inputs];
    int64_t cols = sk_cols(x), rows = sk_rows(x), begin, end;
    sk_block_range(ctx, cols, &begin, &end);
    for (int64_t c = begin; c < end; ++c)
        for (int64_t r = 0; r < rows; ++r)
            sk_store(y, c * rows + r, sk_load(x, r * cols + c));
}
