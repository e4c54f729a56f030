// SPDX-License-Identifier: Apache-2.0
// SoftmaxV2: softmax over the last dimension.
#include "skforge_host_kernel.h"

#include <cmath>

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* x = &ctx->args[0];
    const sk_tensor* y = &ctx->args[ctx->num_inputs];
    int64_t cols = sk_cols(x), begin, end;
    sk_block_range(ctx, sk_rows(x), &begin, &end);
    for (int64_t r = begin; r < end; ++r) {
        float top = sk_load(x, r * cols);
        for (int64_t c = 1; c < cols; ++c)
            top = std::fmax(top, sk_load(x, r * cols + c));
        float sum = 0.0f;
        for (int64_t c = 0; c < cols; ++c)
            sum += std::exp(sk_load(x, r * cols + c) - top);
        for (int64_t c = 0; c < cols; ++c)
            sk_store(y, r * cols + c, std::exp(sk_load(x, r * cols + c) - top) / sum);
    }
}
