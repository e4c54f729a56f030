// SPDX-License-Identifier: Apache-2.0
// RmsNorm: y = x / sqrt(mean(x^2) + 1e-6) * gamma, per row of the last dimension; gamma (the
// second input) is optional.
#include "skforge_host_kernel.h"

#include <cmath>

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* x = &ctx->args[0];
    const sk_tensor* gamma = ctx->num_inputs > 1 ? &ctx->args[1] : nullptr;
    const sk_tensor* y = &ctx->args[ctx->num_inputs];
    int64_t cols = sk_cols(x), begin, end;
    sk_block_range(ctx, sk_rows(x), &begin, &end);
    for (int64_t r = begin; r < end; ++r) {
        float sum = 0.0f;
        for (int64_t c = 0; c < cols; ++c) {
            float v = sk_load(x, r * cols + c);
            sum += v * v;
        }
        float inv = 1.0f / std::sqrt(sum / static_cast<float>(cols) + 1e-6f);
        for (int64_t c = 0; c < cols; ++c)
            sk_store(y, r * cols + c,
                     sk_load(x, r * cols + c) * inv * (gamma ? sk_load(gamma, c) : 1.0f));
    }
}
