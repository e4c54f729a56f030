// SPDX-License-Identifier: Apache-2.0
// DequantSwigluQuant: x[T,2I] is dequantised by scales[S] (column c by scales[c mod S]), passed
// through SwiGLU, and quantised per row: act_q[T,I] int8, act_scale[T] float32 (as DynamicQuant).
#include "skforge_host_kernel.h"

#include <cmath>

namespace {
float activation(const sk_tensor* x, const sk_tensor* scales, int64_t r, int64_t half, int64_t c) {
    int64_t nscales = sk_numel(scales);
    float a = sk_load(x, r * 2 * half + c) * sk_load(scales, c % nscales);
    float b = sk_load(x, r * 2 * half + half + c) * sk_load(scales, (half + c) % nscales);
    return a / (1.0f + std::exp(-a)) * b;
}
} // namespace

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* x = &ctx->args[0];
    const sk_tensor* scales = &ctx->args[1];
    const sk_tensor* q = &ctx->args[ctx->num_inputs];
    const sk_tensor* act_scale = &ctx->args[ctx->num_inputs + 1];
    int64_t half = sk_cols(x) / 2, begin, end;
    sk_block_range(ctx, sk_rows(x), &begin, &end);
    for (int64_t r = begin; r < end; ++r) {
        float amax = 0.0f;
        for (int64_t c = 0; c < half; ++c)
            amax = std::fmax(amax, std::fabs(activation(x, scales, r, half, c)));
        float s = amax > 0.0f ? amax / 127.0f : 1.0f;
        for (int64_t c = 0; c < half; ++c)
            sk_store(q, r * half + c, activation(x, scales, r, half, c) / s);
        sk_store(act_scale, r, s);
    }
}
